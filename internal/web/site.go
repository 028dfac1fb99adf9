package web

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/segkit/segkit/internal/web/wasmdist"
)

// SiteFile is one file of a static copy of the visualiser.
type SiteFile struct {
	Name string
	Data []byte
}

// Site returns a static copy of the visualiser (segviz site): index.html,
// style.css, segviz.js (the page's modules bundled into one classic
// script), wasm_exec.js and segkit-wasm.js (the embedded WASM engine,
// gzipped and base64, as a script). It needs no server — no module
// script, no fetch — so it works from any static web server and from
// file://; files dropped on it are read in the page and never leave it.
func Site() ([]SiteFile, error) {
	gz, execJS, info, ok := wasmdist.Embedded()
	if !ok {
		return nil, errors.New("this segviz embeds no WASM engine (go generate ./internal/web/wasmdist)")
	}
	static := Static()
	read := func(name string) ([]byte, error) { return fs.ReadFile(static, name) }
	html, err := read("index.html")
	if err != nil {
		return nil, err
	}
	css, err := read("style.css")
	if err != nil {
		return nil, err
	}
	bundle, err := Bundle(static, "app.js")
	if err != nil {
		return nil, err
	}
	page, err := siteHTML(string(html), info)
	if err != nil {
		return nil, err
	}
	wasmJS := "// The segkit engine, GOOS=js GOARCH=wasm, gzipped, base64 (" + info.GoVersion + ", sources " + info.SourceHash + ").\n" +
		"globalThis.SEGVIZ_SITE = { wasm: \"" + base64.StdEncoding.EncodeToString(gz) + "\" };\n"
	return []SiteFile{
		{"index.html", []byte(page)},
		{"style.css", css},
		{"segviz.js", bundle},
		{"wasm_exec.js", execJS},
		{"segkit-wasm.js", []byte(wasmJS)},
	}, nil
}

// siteHTML rewrites the served page for the static copy: relative links,
// and classic scripts in place of the module.
func siteHTML(html string, info wasmdist.Info) (string, error) {
	const css = `<link rel="stylesheet" href="/static/style.css">`
	const mod = `<script type="module" src="/static/app.js"></script>`
	if !strings.Contains(html, css) || !strings.Contains(html, mod) {
		return "", errors.New("web: index.html does not link /static/style.css and /static/app.js as Site expects")
	}
	html = strings.Replace(html, css, `<link rel="stylesheet" href="style.css">`, 1)
	html = strings.Replace(html, mod, `<script src="wasm_exec.js"></script>
<script src="segkit-wasm.js"></script>
<script src="segviz.js" defer></script>
<meta name="generator" content="segviz site (engine: `+info.GoVersion+`, sources `+info.SourceHash+`)">`, 1)
	return html, nil
}

var (
	importRE = regexp.MustCompile(`^import\s*\{([^}]*)\}\s*from\s*"\./([A-Za-z0-9_-]+\.js)";\s*$`)
	exportRE = regexp.MustCompile(`^export\s+(?:async\s+)?(?:function\*?|class|const|let|var)\s+([A-Za-z_$][A-Za-z0-9_$]*)`)
	listRE   = regexp.MustCompile(`^export\s*\{([^}]*)\};?\s*$`)
)

// Bundle joins the ES module entry of fsys and the modules it imports
// ("./name.js", one import line each, named imports only) into one
// classic script: each module's body runs in its own function, in
// dependency order, and returns its exports; an import becomes a
// destructuring of the exports of the module it names. It refuses what
// it does not understand (a default or namespace import, a dynamic
// import, an export it cannot name, a cycle) rather than guess.
func Bundle(fsys fs.FS, entry string) ([]byte, error) {
	type module struct {
		name    string
		body    []string
		exports []string
		deps    []string
	}
	mods := map[string]*module{}
	var order []string
	var visit func(name string, stack []string) error
	visit = func(name string, stack []string) error {
		if slices.Contains(stack, name) {
			return fmt.Errorf("web: bundle: an import cycle: %s", strings.Join(append(stack, name), " → "))
		}
		if mods[name] != nil {
			return nil
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		m := &module{name: name}
		for i, line := range strings.Split(string(src), "\n") {
			switch {
			case strings.HasPrefix(line, "import"):
				g := importRE.FindStringSubmatch(line)
				if g == nil {
					return fmt.Errorf("web: bundle: %s:%d: an import Bundle does not handle: %q", name, i+1, line)
				}
				m.deps = append(m.deps, g[2])
				var names []string
				for _, n := range strings.Split(g[1], ",") {
					n = strings.TrimSpace(n)
					if n == "" {
						continue
					}
					if from, to, ok := strings.Cut(n, " as "); ok {
						n = strings.TrimSpace(from) + ": " + strings.TrimSpace(to)
					}
					names = append(names, n)
				}
				m.body = append(m.body, "const { "+strings.Join(names, ", ")+" } = __modules["+quote(g[2])+"];")
			case strings.HasPrefix(line, "export"):
				if g := listRE.FindStringSubmatch(line); g != nil {
					for _, n := range strings.Split(g[1], ",") {
						if n = strings.TrimSpace(n); n != "" {
							if strings.Contains(n, " as ") {
								return fmt.Errorf("web: bundle: %s:%d: a renamed export: %q", name, i+1, line)
							}
							m.exports = append(m.exports, n)
						}
					}
					m.body = append(m.body, "")
					continue
				}
				g := exportRE.FindStringSubmatch(line)
				if g == nil {
					return fmt.Errorf("web: bundle: %s:%d: an export Bundle does not handle: %q", name, i+1, line)
				}
				m.exports = append(m.exports, g[1])
				m.body = append(m.body, strings.TrimSpace(strings.TrimPrefix(line, "export")))
			default:
				if strings.Contains(line, "import(") || strings.Contains(line, "import.meta") {
					return fmt.Errorf("web: bundle: %s:%d: a dynamic import or import.meta", name, i+1)
				}
				m.body = append(m.body, line)
			}
		}
		mods[name] = m
		for _, d := range m.deps {
			if err := visit(path.Clean(d), append(stack, name)); err != nil {
				return err
			}
		}
		order = append(order, name)
		return nil
	}
	if err := visit(entry, nil); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("// segviz's page, its ES modules bundled into one script by segviz site (web.Bundle).\n")
	b.WriteString("(() => {\n\"use strict\";\nconst __modules = {};\n")
	for _, name := range order {
		m := mods[name]
		exports := append([]string(nil), m.exports...)
		sort.Strings(exports)
		fmt.Fprintf(&b, "// ---- %s\n__modules[%s] = (() => {\n%s\nreturn { %s };\n})();\n", name, quote(name), strings.Join(m.body, "\n"), strings.Join(exports, ", "))
	}
	b.WriteString("})();\n")
	return []byte(b.String()), nil
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
