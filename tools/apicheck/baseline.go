package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/tools/go/gcexportdata"
)

// exportFileName names the export data file of package pkgPath:
// log/checkpoint is api/export/log.checkpoint.x. The file itself starts with
// the import path, so the name is only for people.
func exportFileName(modPath, pkgPath string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkgPath, modPath), "/")
	if rel == "" {
		rel = path.Base(modPath)
	}
	return strings.ReplaceAll(rel, "/", ".") + ".x"
}

// encodePackage returns pkg's export data in the single-package file format
// of golang.org/x/exp/cmd/apidiff -w: the import path, a newline, then
// gcexportdata. It is written without a FileSet, so it holds no positions:
// the bytes change only when the package's exported declarations (or the
// types they refer to) do, not when code moves.
func encodePackage(pkg *types.Package) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(pkg.Path() + "\n")
	if err := gcexportdata.Write(&b, nil, pkg); err != nil {
		return nil, fmt.Errorf("writing export data of %s: %v", pkg.Path(), err)
	}
	return b.Bytes(), nil
}

func decodePackage(fset *token.FileSet, data []byte) (*types.Package, error) {
	r := bufio.NewReader(bytes.NewReader(data))
	pkgPath, err := r.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("no import path line")
	}
	pkgPath = strings.TrimSuffix(pkgPath, "\n")
	// Each package is read on its own, with its own imports map: export data
	// is self-contained, and apidiff identifies types of other packages by
	// path and name.
	return gcexportdata.Read(r, fset, make(map[string]*types.Package), pkgPath)
}

// writeBaseline replaces api/segkit.txt and api/export/*.x.
func writeBaseline(apiDir string, m *apidiff.Module, text []byte) error {
	xdir := filepath.Join(apiDir, exportDir)
	if err := os.MkdirAll(xdir, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, p := range m.Packages {
		data, err := encodePackage(p)
		if err != nil {
			return err
		}
		name := exportFileName(m.Path, p.Path())
		keep[name] = true
		if err := os.WriteFile(filepath.Join(xdir, name), data, 0o644); err != nil {
			return err
		}
	}
	old, err := filepath.Glob(filepath.Join(xdir, "*.x"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if !keep[filepath.Base(f)] {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	if err := os.WriteFile(filepath.Join(xdir, versionFile), []byte(runtime.Version()+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(apiDir, textFile), text, 0o644)
}

// versionFile records the Go version apicheck was built with when it wrote
// the export data. Export data written by a newer Go may not be readable by
// an older one (go1.27's, with generic methods, is not readable by go1.26):
// a failure to read names both versions.
const versionFile = "go.version"

func writerVersion(apiDir string) string {
	b, err := os.ReadFile(filepath.Join(apiDir, exportDir, versionFile))
	if err != nil {
		return "an unknown Go version"
	}
	return strings.TrimSpace(string(b))
}

// readBaseline reads api/export/*.x as a module.
func readBaseline(apiDir, modPath string) (*apidiff.Module, error) {
	files, err := filepath.Glob(filepath.Join(apiDir, exportDir, "*.x"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no export data in %s (create the baseline with scripts/apicheck.sh -write)", filepath.Join(apiDir, exportDir))
	}
	m := &apidiff.Module{Path: modPath}
	fset := token.NewFileSet()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		p, err := decodePackage(fset, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v\n(written by apicheck built with %s; this one is built with %s: run it with the Go that wrote the baseline, or newer)",
				f, err, writerVersion(apiDir), runtime.Version())
		}
		m.Packages = append(m.Packages, p)
	}
	slices.SortFunc(m.Packages, func(a, b *types.Package) int { return strings.Compare(a.Path(), b.Path()) })
	return m, nil
}
