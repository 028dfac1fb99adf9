package web

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/internal/viz"
)

// TestCompactionRoute: /api/compaction answers what the session's
// Compaction answers, maps its errors to 400 and 404, and leaves the
// served directory as it was.
func TestCompactionRoute(t *testing.T) {
	_, served := fixture(t)
	before := treeHash(t, served)
	h := newServer(t, served, nil)
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/api/compaction?dir=kafka-logs/orders-0&now=1772442000000", 200},
		{"/api/compaction?dir=kafka-logs/orders-0&now=1772442000000&cleanup.policy=compact&min.cleanable.dirty.ratio=0.9&offset=1000", 200},
		{"/api/compaction?dir=kafka-logs/orders-0&min.cleanable.dirty.ratio=2", 400},
		{"/api/compaction", 400},
		{"/api/compaction?dir=kafka-logs/nope-0", 404},
	} {
		w := get(t, h, "GET", tc.path, nil)
		if w.Code != tc.code {
			t.Fatalf("%s: %d, want %d: %s", tc.path, w.Code, tc.code, w.Body)
		}
		if w.Code != 200 {
			continue
		}
		var got viz.CompactionJSON
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := h.cfg.Session.Compaction(viz.ParamsFromQuery(u.Query()))
		if err != nil {
			t.Fatal(err)
		}
		var wantJSON viz.CompactionJSON
		if b, err := json.Marshal(want); err != nil || json.Unmarshal(b, &wantJSON) != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantJSON, got); diff != "" {
			t.Errorf("%s differs from Session.Compaction (-want +got):\n%s", tc.path, diff)
		}
		if len(got.Segments) != 7 || got.AsIf != "compact" && !got.Compacted {
			t.Errorf("%s: %d segments, as if %q", tc.path, len(got.Segments), got.AsIf)
		}
	}
	if after := treeHash(t, served); after != before {
		t.Error("the served directory changed")
	}
	// The page has the tab, and its script is embedded.
	if page := get(t, h, "GET", "/", nil).Body.String(); !strings.Contains(page, `id="tab-compaction"`) || !strings.Contains(page, `id="panel-compaction"`) {
		t.Error("index.html has no Compaction tab")
	}
	if w := get(t, h, "GET", "/static/compaction.js", nil); w.Code != 200 || !strings.Contains(w.Body.String(), "export class CompactionView") {
		t.Errorf("/static/compaction.js: %d", w.Code)
	}
	if w := get(t, h, "GET", "/static/app.js", nil); !strings.Contains(w.Body.String(), `from "./compaction.js"`) {
		t.Error("app.js does not load compaction.js")
	}
}
