package fuzz

import (
	"fmt"
	"slices"

	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/retention"
)

// retention runs one retention check at the clock's time, after moving
// the clock, with a policy from the op (doc.go: opcode 7), and checks the
// plan against the reference below and the log against the plan.
func (h *harness) retention(o op) {
	rms := [8]int64{-1, 0, 1000, 60_000, 3_600_000, 86_400_000, 604_800_000, 1}[o.a&7]
	rbytes := [8]int64{-1, 0, 100, 500, 1000, 2000, 5000, 20000}[(o.a>>3)&7]
	h.clk.ms += int64(o.b) * [4]int64{1000, 60_000, 3_600_000, 86_400_000}[o.c&3]
	now := h.clk.ms
	p := retention.PolicyFrom(h.cfg, config.DefaultBroker())
	p.RetentionMs, p.RetentionBytes = rms, rbytes
	if o.a&0x40 != 0 {
		p.CleanupPolicy = []string{config.CleanupPolicyCompact}
	}
	st, err := retention.StateOf(h.l)
	if !h.must("retention.StateOf", err) {
		return
	}
	h.checkRetentionState(st)
	pl, err := p.Plan(st, now)
	if !h.must("Plan", err) {
		return
	}
	dels, lso, rolled := refPlan(st, p, now)
	var got []refDel
	for _, d := range pl.Deletions {
		got = append(got, refDel{d.BaseOffset, d.Reason})
	}
	if !slices.Equal(got, dels) || pl.NewLogStartOffset != lso || pl.RollFirst != rolled {
		h.fatalf("retention at %d (retention.ms %d, retention.bytes %d, policy %v) over %s\nplanned %v, start %d, roll %v\nthe rules allow %v, start %d, roll %v",
			now, rms, rbytes, p.CleanupPolicy, describeState(st), got, pl.NewLogStartOffset, pl.RollFirst, dels, lso, rolled)
	}
	h.lsoPending = lso
	if err := retention.Apply(h.l, pl); !h.must("retention.Apply", err) {
		return
	}
	if len(dels) > 0 {
		keep := h.m.leo
		if !rolled {
			keep = st.Segments[len(dels)].BaseOffset
		}
		var kept []*mbatch
		for _, b := range h.m.batches {
			if b.base >= keep {
				kept = append(kept, b)
			} else if b.txn || b.control {
				h.m.txnLost = true
			}
		}
		h.m.batches = kept
		h.m.lso = max(h.m.lso, keep)
	}
	if got := h.l.LogStartOffset(); got != lso {
		h.fatalf("log start offset %d after the retention plan %v", got, pl)
	}
	h.tracef("retention at %d: %v", now, pl)
}

// checkRetentionState checks what StateOf read against the model.
func (h *harness) checkRetentionState(st retention.LogState) {
	bases, ends, _ := h.segBounds()
	if len(st.Segments) != len(bases) || st.LogStartOffset != h.m.lso || st.LogEndOffset != h.m.leo || st.HighWatermark != h.l.HighWatermark() {
		h.fatalf("StateOf: %s, model: segments %v, offsets %d..%d", describeState(st), bases, h.m.lso, h.m.leo)
	}
	for i, s := range st.Segments {
		var size int64
		largest := record.NoTimestamp
		for _, b := range h.m.batchesIn(bases[i], ends[i]) {
			size += int64(len(b.raw))
			largest = max(largest, b.maxTs)
		}
		doomed := ends[i] <= h.m.lso // see checkIndexes
		if s.BaseOffset != bases[i] || s.Size != size || (s.LargestRecordTimestamp != largest && !doomed) {
			h.fatalf("StateOf segment %d: %+v; the model says size %d, largest timestamp %d", i, s, size, largest)
		}
	}
}

func describeState(st retention.LogState) string {
	s := fmt.Sprintf("offsets %d..%d hw %d:", st.LogStartOffset, st.LogEndOffset, st.HighWatermark)
	for _, seg := range st.Segments {
		s += fmt.Sprintf(" [%d size %d ts %d mtime %d]", seg.BaseOffset, seg.Size, seg.LargestRecordTimestamp, seg.LastModified)
	}
	return s
}

type refDel struct {
	base   int64
	reason retention.Reason
}

// refPlan is an independent statement of Kafka's retention rules
// (UnifiedLog.deleteOldSegments and deletableSegments): the log start
// offset rule, then size, then time, each deleting a prefix of what the
// previous left, never past the high watermark, never the empty active
// segment; when all go, the log rolls first.
func refPlan(st retention.LogState, p retention.Policy, now int64) (dels []refDel, lso int64, rolled bool) {
	segs := st.Segments
	n := len(segs)
	upper := func(i int) int64 {
		if i+1 < n {
			return segs[i+1].BaseOffset
		}
		return st.LogEndOffset
	}
	lso = st.LogStartOffset
	start := 0
	walk := func(reason retention.Reason, pred func(i int) bool) {
		if rolled {
			return
		}
		k := start
		for k < n && upper(k) <= st.HighWatermark && pred(k) && !(k == n-1 && segs[k].Size == 0) {
			dels = append(dels, refDel{segs[k].BaseOffset, reason})
			k++
		}
		if k == start {
			return
		}
		start = k
		if start == n {
			rolled = true
			lso = max(lso, st.LogEndOffset)
		} else {
			lso = max(lso, segs[start].BaseOffset)
		}
	}
	walk(retention.ReasonLogStartOffset, func(i int) bool { return i+1 < n && segs[i+1].BaseOffset <= lso })
	if !p.Delete() {
		return
	}
	if p.RetentionBytes >= 0 && !rolled {
		var size int64
		for _, s := range segs[start:] {
			size += s.Size
		}
		if size >= p.RetentionBytes {
			diff := size - p.RetentionBytes
			walk(retention.ReasonSize, func(i int) bool {
				if diff-segs[i].Size < 0 {
					return false
				}
				diff -= segs[i].Size
				return true
			})
		}
	}
	if p.RetentionMs >= 0 {
		walk(retention.ReasonTime, func(i int) bool {
			ts := segs[i].LargestRecordTimestamp
			if ts < 0 {
				ts = segs[i].LastModified
			}
			return now > ts && uint64(now)-uint64(ts) > uint64(p.RetentionMs)
		})
	}
	return
}
