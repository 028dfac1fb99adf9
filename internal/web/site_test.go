package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// TestSite: the static copy has its five files, the page loads them as
// classic scripts with relative names, and node parses the bundle.
func TestSite(t *testing.T) {
	files, err := Site()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, f := range files {
		got[f.Name] = f.Data
	}
	for _, name := range []string{"index.html", "style.css", "segviz.js", "wasm_exec.js", "segkit-wasm.js"} {
		if len(got[name]) == 0 {
			t.Errorf("the site has no %s", name)
		}
	}
	html := string(got["index.html"])
	if strings.Contains(html, `type="module"`) || strings.Contains(html, `"/static/`) || !strings.Contains(html, `<script src="segviz.js" defer>`) {
		t.Errorf("index.html still loads the served page's files:\n%s", html)
	}
	bundle := string(got["segviz.js"])
	for _, mod := range []string{"util.js", "engine.js", "segment.js", "app.js"} {
		if !strings.Contains(bundle, "// ---- "+mod) {
			t.Errorf("the bundle lacks %s", mod)
		}
	}
	if strings.Contains(bundle, "\nimport ") || strings.Contains(bundle, "\nexport ") {
		t.Error("the bundle still has import or export statements")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no node (required under CI=true)")
		}
		t.Skip("no node to parse the bundle")
	}
	p := filepath.Join(t.TempDir(), "segviz.js")
	if err := os.WriteFile(p, got["segviz.js"], 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, "--check", p).CombinedOutput(); err != nil {
		t.Errorf("node --check segviz.js: %v\n%s", err, out)
	}
}

// TestBundle: imports become destructurings of the exports of the module
// they name, in dependency order; what Bundle does not handle is refused.
func TestBundle(t *testing.T) {
	fsys := fstest.MapFS{
		"a.js": {Data: []byte("import { b, c as d } from \"./b.js\";\nexport function f() { return b + d; }\n")},
		"b.js": {Data: []byte("export const b = 1;\nconst c = 2;\nexport { c };\n")},
	}
	out, err := Bundle(fsys, "a.js")
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if i, j := strings.Index(s, "// ---- b.js"), strings.Index(s, "// ---- a.js"); i < 0 || j < i {
		t.Errorf("order: b.js at %d, a.js at %d", i, j)
	}
	for _, want := range []string{`const { b, c: d } = __modules["b.js"];`, "return { b, c };", "return { f };", "function f()"} {
		if !strings.Contains(s, want) {
			t.Errorf("the bundle lacks %q:\n%s", want, s)
		}
	}
	for name, src := range map[string]string{
		"default import": "import x from \"./b.js\";\n",
		"namespace":      "import * as x from \"./b.js\";\n",
		"dynamic":        "const m = await import(\"./b.js\");\n",
		"renamed export": "const x = 1;\nexport { x as y };\n",
		"cycle":          "import { z } from \"./c.js\";\n",
	} {
		bad := fstest.MapFS{"a.js": {Data: []byte(src)}, "b.js": {Data: []byte("export const b = 1;\n")}, "c.js": {Data: []byte("import { q } from \"./a.js\";\nexport const z = 1;\n")}}
		if _, err := Bundle(bad, "a.js"); err == nil {
			t.Errorf("%s: bundled", name)
		}
	}
}
