//go:build js && wasm

// Command wasm is segkit's engine for the browser: built with GOOS=js
// GOARCH=wasm and loaded by segviz's page (with Go's wasm_exec.js), it
// parses the partition files a user drops on the page, in the page: nothing
// is uploaded.
//
// It sets one global object:
//
//	segkit.version                 the module version it was built from
//	segkit.addFiles([{path, file}]) -> Promise<{files, name, partitions}>
//	segkit.call(method, params)    -> Promise<result>
//	segkit.reset()
//
// addFiles takes the dropped File (or any Blob) objects with their paths
// ("invoice-0/00000000000000000000.log": a folder's relative paths, or bare
// names for loose files) and makes them the engine's filesystem: a
// read-only vfs.FS whose reads are Blob.slice(a, b).arrayBuffer() calls, so
// that a 1 GiB segment is read a block at a time, as the page pages through
// it, and never copied whole into WASM memory. call runs one of the methods
// of package viz (partitions, partition, scan, batches, records, layout,
// bytes, index, verify, retention, compaction, timeline, whygone, locate)
// with the properties of params as its string parameters, and resolves to
// the same object the HTTP API returns as JSON. A failed call rejects with an Error whose kind property is
// "bad-request", "not-found" or "error".
//
// Every call runs in a goroutine and answers through its Promise: nothing
// blocks inside a callback from JavaScript, and the page stays responsive
// while the engine reads.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"runtime/debug"
	"strings"
	"sync"
	"syscall/js"
	"time"

	"github.com/segkit/segkit/internal/viz"
	"github.com/segkit/segkit/vfs"
)

// Read-ahead of the dropped files: 1 MiB blocks, 32 of them.
const (
	blockSize = 1 << 20
	blocks    = 32
)

func main() {
	register(js.Global())
	if f := js.Global().Get("segkitReady"); f.Type() == js.TypeFunction {
		f.Invoke()
	}
	select {}
}

// bridge holds the current source: the session over the dropped files.
type bridge struct {
	mu   sync.Mutex
	sess *viz.Session
	name string
	// funcs are kept for the life of the program.
	funcs []js.Func
}

// register sets globalThis.segkit.
func register(global js.Value) *bridge {
	b := &bridge{}
	obj := js.Global().Get("Object").New()
	obj.Set("version", version())
	obj.Set("addFiles", b.fn(b.addFiles))
	obj.Set("call", b.fn(b.call))
	obj.Set("reset", b.fn(func(js.Value, []js.Value) any {
		b.mu.Lock()
		b.sess = nil
		b.mu.Unlock()
		return nil
	}))
	global.Set("segkit", obj)
	return b
}

func (b *bridge) fn(f func(js.Value, []js.Value) any) js.Func {
	jf := js.FuncOf(f)
	b.funcs = append(b.funcs, jf)
	return jf
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version + " (" + bi.GoVersion + ")"
	}
	return "unknown"
}

// promise runs fn in a goroutine and returns a Promise of its result,
// marshalled to JSON and parsed into JavaScript objects.
func promise(fn func() (any, error)) js.Value {
	var executor js.Func
	executor = js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		go func() {
			defer executor.Release()
			v, err := run(fn)
			if err != nil {
				reject.Invoke(jsError(err))
				return
			}
			resolve.Invoke(v)
		}()
		return nil
	})
	return js.Global().Get("Promise").New(executor)
}

func run(fn func() (any, error)) (out js.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("segkit: internal error: %v", r)
		}
	}()
	v, err := fn()
	if err != nil {
		return js.Undefined(), err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return js.Undefined(), err
	}
	return js.Global().Get("JSON").Call("parse", string(data)), nil
}

// jsError converts err into a JavaScript Error with a kind.
func jsError(err error) js.Value {
	e := js.Global().Get("Error").New(err.Error())
	kind := "error"
	switch {
	case errors.Is(err, viz.ErrBadRequest):
		kind = "bad-request"
	case errors.Is(err, viz.ErrNotFound):
		kind = "not-found"
	case errors.Is(err, viz.ErrCancelled):
		kind = "cancelled"
	}
	e.Set("kind", kind)
	return e
}

// addFiles replaces the source with the files given.
func (b *bridge) addFiles(_ js.Value, args []js.Value) any {
	if len(args) < 1 || args[0].Type() != js.TypeObject {
		return promise(func() (any, error) {
			return nil, fmt.Errorf("%w: addFiles wants an array of {path, file}", viz.ErrBadRequest)
		})
	}
	list := args[0]
	// Read the list now, in the callback: it only touches JS values.
	var files []blobFile
	for i := range list.Length() {
		item := list.Index(i)
		p, f := item.Get("path"), item.Get("file")
		if p.Type() != js.TypeString || f.Type() != js.TypeObject {
			continue
		}
		files = append(files, newBlobFile(p.String(), f))
	}
	return promise(func() (any, error) {
		fsys, name, err := newBlobFS(files)
		if err != nil {
			return nil, err
		}
		sess := viz.NewSession(viz.ReadAhead(vfs.FromIOFS(fsys), blockSize, blocks), viz.Options{Name: name, Now: time.Now})
		ps, err := sess.Partitions()
		if err != nil {
			return nil, err
		}
		b.mu.Lock()
		b.sess, b.name = sess, name
		b.mu.Unlock()
		return map[string]any{"files": len(files), "name": name, "partitions": ps.Partitions}, nil
	})
}

// call runs a viz method on the current source.
func (b *bridge) call(_ js.Value, args []js.Value) any {
	method := ""
	if len(args) > 0 && args[0].Type() == js.TypeString {
		method = args[0].String()
	}
	params := viz.Params{}
	if len(args) > 1 && args[1].Type() == js.TypeObject {
		keys := js.Global().Get("Object").Call("keys", args[1])
		for i := range keys.Length() {
			k := keys.Index(i).String()
			v := args[1].Get(k)
			switch v.Type() {
			case js.TypeUndefined, js.TypeNull:
				continue
			case js.TypeString:
				params[k] = v.String()
			case js.TypeBoolean:
				params[k] = fmt.Sprint(v.Bool())
			default:
				params[k] = js.Global().Call("String", v).String()
			}
		}
	}
	b.mu.Lock()
	sess := b.sess
	b.mu.Unlock()
	return promise(func() (any, error) {
		if sess == nil {
			return nil, fmt.Errorf("%w: no files: call segkit.addFiles first", viz.ErrBadRequest)
		}
		return sess.Dispatch(method, params)
	})
}

// cleanPath makes a dropped file's path relative and slash-separated.
func cleanPath(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	c := path.Clean("/" + p)[1:]
	return c
}
