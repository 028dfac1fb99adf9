package web

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/segkit/segkit/internal/viz"
)

// TestTimelineRoutes: /api/timeline and /api/whygone answer what the
// session's Timeline and WhyGone answer over the served export of the
// demo (whose orders-0 carries a timeline), map their errors to 400 and
// 404, and leave the served directory as it was: the timeline is opened
// read-only on a root that refuses writes.
func TestTimelineRoutes(t *testing.T) {
	_, served := fixture(t)
	before := treeHash(t, served)
	h := newServer(t, served, nil)
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/api/timeline?dir=kafka-logs/orders-0", 200},
		{"/api/timeline?dir=kafka-logs/orders-1", 200},
		{"/api/timeline", 400},
		{"/api/timeline?dir=../served", 400},
		{"/api/timeline?dir=kafka-logs/nope-0", 404},
		{"/api/whygone?dir=kafka-logs/orders-0&offset=0", 200},
		{"/api/whygone?dir=kafka-logs/orders-0&offset=380", 200},
		{"/api/whygone?dir=kafka-logs/orders-0&offset=3010", 200},
		{"/api/whygone?dir=kafka-logs/orders-0&offset=99999", 200},
		{"/api/whygone?dir=kafka-logs/orders-0", 400},
		{"/api/whygone?dir=kafka-logs/orders-0&offset=-3", 400},
		{"/api/whygone?dir=kafka-logs/orders-0&offset=many", 400},
		{"/api/whygone?dir=kafka-logs/nope-0&offset=1", 404},
	} {
		w := get(t, h, "GET", tc.path, nil)
		if w.Code != tc.code {
			t.Fatalf("%s: %d, want %d: %s", tc.path, w.Code, tc.code, w.Body)
		}
		if w.Code != 200 {
			continue
		}
		u, err := url.Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := h.cfg.Session.Dispatch(strings.TrimPrefix(u.Path, "/api/"), viz.ParamsFromQuery(u.Query()))
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var g, wv any
		if json.Unmarshal(w.Body.Bytes(), &g) != nil || json.Unmarshal(wantJSON, &wv) != nil {
			t.Fatalf("%s: not JSON: %s", tc.path, w.Body)
		}
		if diff := cmp.Diff(wv, g); diff != "" {
			t.Errorf("%s differs from the session's answer (-want +got):\n%s", tc.path, diff)
		}
	}
	// The demo's orders-0: ten instants, the last the clean that removed
	// offset 0.
	var lane viz.TimelineJSON
	if err := json.Unmarshal(get(t, h, "GET", "/api/timeline?dir=kafka-logs/orders-0", nil).Body.Bytes(), &lane); err != nil {
		t.Fatal(err)
	}
	var why viz.WhyGoneJSON
	if err := json.Unmarshal(get(t, h, "GET", "/api/whygone?dir=kafka-logs/orders-0&offset=0", nil).Body.Bytes(), &why); err != nil {
		t.Fatal(err)
	}
	if len(lane.Instants) != 10 || !lane.Exists || why.RemovedBy == nil || *why.RemovedBy != lane.Instants[9].Instant.Instant || why.Readable {
		t.Errorf("orders-0: %d instants; offset 0: %+v", len(lane.Instants), why)
	}
	if after := treeHash(t, served); after != before {
		t.Error("the served directory changed")
	}
	// The page has the lane, and its script is embedded.
	if page := get(t, h, "GET", "/", nil).Body.String(); !strings.Contains(page, `id="lane"`) || !strings.Contains(page, `id="lane-legend"`) {
		t.Error("index.html has no timeline lane")
	}
	if w := get(t, h, "GET", "/static/lane.js", nil); w.Code != 200 || !strings.Contains(w.Body.String(), "export class TimelineLane") {
		t.Errorf("/static/lane.js: %d", w.Code)
	}
	if w := get(t, h, "GET", "/static/app.js", nil); !strings.Contains(w.Body.String(), `from "./lane.js"`) {
		t.Error("app.js does not load lane.js")
	}
}

// TestTimelineRoutesLimited: the two methods read files, so they are
// admitted by the limiter like every decoding method: with no slot free
// and no queue, they get 503 with Retry-After.
func TestTimelineRoutesLimited(t *testing.T) {
	_, served := fixture(t)
	h := newServer(t, served, nil)
	h.work = newLimiter(Limits{MaxInFlight: 1, MaxQueued: -1})
	release, err := h.work.acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, p := range []string{"/api/timeline?dir=kafka-logs/orders-0", "/api/whygone?dir=kafka-logs/orders-0&offset=0"} {
		if w := get(t, h, "GET", p, nil); w.Code != 503 || w.Header().Get("Retry-After") == "" {
			t.Errorf("%s with the limiter full: %d %q", p, w.Code, w.Header().Get("Retry-After"))
		}
	}
}
