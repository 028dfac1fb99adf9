package lake

import (
	"slices"
	"testing"
	"time"
)

// TestTiler: each rule closes a range before the record that breaks it
// (file_bytes after the record that reached it), offsets with no record
// join the range before them, and the age trigger and boundaries close
// at what was read.
func TestTiler(t *testing.T) {
	o := Options{FileBytes: 10, FileWindow: time.Minute, Granularity: time.Hour}.withDefaults()
	type step struct {
		off, ts int64
		size    int   // value bytes
		advance int64 // advance to this offset instead of a record (when > 0)
		tickMs  int64 // tick this long after the range opened (when > 0)
	}
	type want struct {
		start, end int64
		why        Trigger
		n          int
	}
	tests := []struct {
		name  string
		steps []step
		close int64 // closeAt this offset at the end (0: no)
		want  []want
	}{
		{"bytes", []step{{off: 0, ts: t0, size: 6}, {off: 1, ts: t0, size: 6}, {off: 5, ts: t0, size: 1}}, 0,
			[]want{{0, 4, TriggerBytes, 2}}},
		{"window", []step{{off: 0, ts: t0}, {off: 1, ts: t0 + 59_999}, {off: 2, ts: t0 + 60_000}}, 0,
			[]want{{0, 1, TriggerWindow, 2}}},
		{"window_backwards", []step{{off: 0, ts: t0 + 1000}, {off: 1, ts: t0 - 59_000}}, 0,
			[]want{{0, 0, TriggerWindow, 1}}},
		{"bucket", []step{{off: 0, ts: t0 + hour - 1}, {off: 3, ts: t0 + hour}}, 0,
			[]want{{0, 2, TriggerBucket, 1}}},
		{"earlier_bucket_stays", []step{{off: 0, ts: t0 + hour}, {off: 1, ts: t0 + hour - 1}}, 2,
			[]want{{0, 1, TriggerChunk, 2}}},
		{"age", []step{{off: 0, ts: t0}, {advance: 9}, {tickMs: 59_999}, {tickMs: 60_000}}, 0,
			[]want{{0, 8, TriggerAge, 1}}},
		{"gap_then_boundary", []step{{off: 2, ts: t0}, {advance: 7}}, 10,
			[]want{{0, 9, TriggerChunk, 1}}},
		{"negative_timestamps", []step{{off: 0, ts: -1}, {off: 1, ts: 0}}, 0,
			[]want{{0, 0, TriggerBucket, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTiler(o, 0)
			open := time.UnixMilli(t0)
			var got []want
			keep := func(r Range, ok bool) {
				if ok {
					got = append(got, want{r.Start, r.End, r.Trigger, len(r.Records)})
				}
			}
			for _, s := range tt.steps {
				switch {
				case s.advance > 0:
					tl.advance(s.advance)
				case s.tickMs > 0:
					keep(tl.tick(open.Add(time.Duration(s.tickMs) * time.Millisecond)))
				default:
					keep(tl.add(Record{Offset: s.off, Timestamp: s.ts, Value: make([]byte, s.size)}, open))
				}
			}
			if tt.close > 0 {
				keep(tl.closeAt(tt.close, TriggerChunk))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ranges %+v, want %+v", got, tt.want)
			}
		})
	}
}
