package main

import (
	"fmt"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// apiLines returns the exported API of pkg as the lines of a Go api/*.txt
// file, sorted and without duplicates:
//
//	pkg P, const C = 8
//	pkg P, const C T
//	pkg P, func F(int, string) (*T, error)
//	pkg P, method (*T) M([]byte) error
//	pkg P, type T struct
//	pkg P, type T struct, Field int
//	pkg P, type T struct, embedded io.Reader
//	pkg P, type I interface { M, N }
//	pkg P, type I interface, M(int) error
//	pkg P, type A = B
//	pkg P, var V error
//
// Types from other packages are written with their package name (io.Reader),
// types of P without one. Methods are the method set of *T, so methods
// promoted from embedded fields are listed too, with the receiver (T) or (*T)
// through which they are reached. Parameter names are left out: renaming a
// parameter does not change the API.
func apiLines(pkg *types.Package) []string {
	w := &apiWriter{pkg: pkg, prefix: "pkg " + pkg.Path() + ", "}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if !token.IsExported(name) {
			continue
		}
		w.object(scope.Lookup(name))
	}
	slices.Sort(w.lines)
	return slices.Compact(w.lines)
}

type apiWriter struct {
	pkg    *types.Package
	prefix string
	lines  []string
}

func (w *apiWriter) emit(format string, args ...any) {
	w.lines = append(w.lines, w.prefix+fmt.Sprintf(format, args...))
}

func (w *apiWriter) qualifier(p *types.Package) string {
	if p == w.pkg || p.Path() == w.pkg.Path() {
		return ""
	}
	return p.Name()
}

// typ writes t as Go does, except that the parameters and results of func
// types are written without names, at any depth.
func (w *apiWriter) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Signature:
		return "func" + w.sig(t)
	case *types.Pointer:
		return "*" + w.typ(t.Elem())
	case *types.Slice:
		return "[]" + w.typ(t.Elem())
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), w.typ(t.Elem()))
	case *types.Map:
		return "map[" + w.typ(t.Key()) + "]" + w.typ(t.Elem())
	case *types.Chan:
		elem := w.typ(t.Elem())
		switch t.Dir() {
		case types.SendOnly:
			return "chan<- " + elem
		case types.RecvOnly:
			return "<-chan " + elem
		}
		if c, ok := t.Elem().(*types.Chan); ok && c.Dir() == types.RecvOnly {
			elem = "(" + elem + ")"
		}
		return "chan " + elem
	case *types.Named:
		return w.withArgs(types.TypeString(t.Origin(), w.qualifier), t.TypeArgs())
	case *types.Alias:
		return w.withArgs(types.TypeString(t.Origin(), w.qualifier), t.TypeArgs())
	}
	// Basic types, type parameters, and struct and interface literals.
	return types.TypeString(t, w.qualifier)
}

func (w *apiWriter) withArgs(name string, args *types.TypeList) string {
	if args == nil || args.Len() == 0 {
		return name
	}
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i] // an origin is written with its type parameters
	}
	s := make([]string, args.Len())
	for i := range args.Len() {
		s[i] = w.typ(args.At(i))
	}
	return name + "[" + strings.Join(s, ", ") + "]"
}

// sig writes a signature without its "func" keyword and without parameter
// names: "[T any](int, ...string) (T, error)".
func (w *apiWriter) sig(s *types.Signature) string {
	var b strings.Builder
	if tp := s.TypeParams(); tp != nil && tp.Len() > 0 {
		b.WriteString(w.tparams(tp))
	}
	b.WriteString("(")
	for i := range s.Params().Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		t := s.Params().At(i).Type()
		if s.Variadic() && i == s.Params().Len()-1 {
			if sl, ok := t.(*types.Slice); ok {
				b.WriteString("..." + w.typ(sl.Elem()))
				continue
			}
		}
		b.WriteString(w.typ(t))
	}
	b.WriteString(")")
	switch r := s.Results(); r.Len() {
	case 0:
	case 1:
		b.WriteString(" " + w.typ(r.At(0).Type()))
	default:
		b.WriteString(" (")
		for i := range r.Len() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(w.typ(r.At(i).Type()))
		}
		b.WriteString(")")
	}
	return b.String()
}

func (w *apiWriter) tparams(tp *types.TypeParamList) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range tp.Len() {
		if i > 0 {
			b.WriteString(", ")
		}
		p := tp.At(i)
		b.WriteString(p.Obj().Name() + " " + w.typ(p.Constraint()))
	}
	b.WriteString("]")
	return b.String()
}

func (w *apiWriter) object(obj types.Object) {
	switch obj := obj.(type) {
	case *types.Const:
		w.emit("const %s %s", obj.Name(), w.typ(obj.Type()))
		w.emit("const %s = %s", obj.Name(), obj.Val().ExactString())
	case *types.Var:
		w.emit("var %s %s", obj.Name(), w.typ(obj.Type()))
	case *types.Func:
		w.emit("func %s%s", obj.Name(), w.sig(obj.Signature()))
	case *types.TypeName:
		w.typeName(obj)
	default:
		panic(fmt.Sprintf("apicheck: unexpected object %T %s", obj, obj.Name()))
	}
}

func (w *apiWriter) typeName(obj *types.TypeName) {
	name := obj.Name()
	if obj.IsAlias() {
		tp := ""
		if a, ok := obj.Type().(*types.Alias); ok && a.TypeParams().Len() > 0 {
			tp = w.tparams(a.TypeParams())
		}
		w.emit("type %s%s = %s", name, tp, w.typ(types.Unalias(obj.Type())))
		return
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		panic(fmt.Sprintf("apicheck: type %s is %T", name, obj.Type()))
	}
	decl := name
	recv := name
	if tp := named.TypeParams(); tp.Len() > 0 {
		decl += w.tparams(tp)
		args := make([]string, tp.Len())
		for i := range tp.Len() {
			args[i] = tp.At(i).Obj().Name()
		}
		recv += "[" + strings.Join(args, ", ") + "]"
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.emit("type %s struct", decl)
		for i := range u.NumFields() {
			f := u.Field(i)
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				w.emit("type %s struct, embedded %s", name, w.typ(f.Type()))
			} else {
				w.emit("type %s struct, %s %s", name, f.Name(), w.typ(f.Type()))
			}
		}
	case *types.Interface:
		w.iface(name, decl, u)
		return // an interface's methods are its own lines
	default:
		w.emit("type %s %s", decl, w.typ(u))
	}
	ptr := types.NewMethodSet(types.NewPointer(named))
	val := types.NewMethodSet(named)
	for i := range ptr.Len() {
		sel := ptr.At(i)
		m := sel.Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		r := "*" + recv
		if val.Lookup(m.Pkg(), m.Name()) != nil {
			r = recv
		}
		w.emit("method (%s) %s%s", r, m.Name(), w.sig(m.Signature()))
	}
}

func (w *apiWriter) iface(name, decl string, u *types.Interface) {
	if !u.IsMethodSet() {
		// A constraint with type terms: one line, as Go writes it.
		w.emit("type %s %s", decl, w.typ(u))
		return
	}
	var names []string
	unexported := false
	for i := range u.NumMethods() {
		m := u.Method(i)
		if !m.Exported() {
			unexported = true
			continue
		}
		names = append(names, m.Name())
		w.emit("type %s interface, %s%s", name, m.Name(), w.sig(m.Signature()))
	}
	slices.Sort(names)
	if unexported {
		names = append(names, "unexported methods")
	}
	if len(names) == 0 {
		w.emit("type %s interface {}", decl)
		return
	}
	w.emit("type %s interface { %s }", decl, strings.Join(names, ", "))
}
