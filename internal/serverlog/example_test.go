package serverlog_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/segkit/segkit/internal/serverlog"
)

// A retention check's lines about one partition: one Deletion per rule,
// its segments' next offsets and the log start offsets from the lines.
func Example() {
	const log = `[2026-03-02 10:03:55,106] INFO [UnifiedLog partition=payments-0, dir=/var/kafka-logs] Incremented log start offset to 73 due to segment deletion (org.apache.kafka.storage.internals.log.UnifiedLog)
[2026-03-02 10:03:55,107] INFO [UnifiedLog partition=payments-0, dir=/var/kafka-logs] Deleting segment LogSegment(baseOffset=0, size=2876, lastModifiedTime=1772441995000, largestRecordTimestamp=1772441994997) due to log retention time 60000ms breach based on the largest record timestamp in the segment (org.apache.kafka.storage.internals.log.UnifiedLog)
[2026-03-02 10:03:55,107] INFO [UnifiedLog partition=payments-0, dir=/var/kafka-logs] Deleting segment LogSegment(baseOffset=37, size=2808, lastModifiedTime=1772442175200, largestRecordTimestamp=1772442175105) due to log retention time 60000ms breach based on the largest record timestamp in the segment (org.apache.kafka.storage.internals.log.UnifiedLog)
[2026-03-02 10:03:55,110] INFO [UnifiedLog partition=payments-10, dir=/var/kafka-logs] Incremented log start offset to 5 due to segment deletion (org.apache.kafka.storage.internals.log.UnifiedLog)
`
	berlin := time.FixedZone("CET", 3600) // the broker's JVM zone
	p := serverlog.NewParser(serverlog.Options{Partition: "payments-0", Location: berlin})
	if err := p.Parse(strings.NewReader(log), "server.log"); err != nil {
		panic(err)
	}
	for _, ev := range p.Events() {
		d := ev.Deletion
		fmt.Printf("%s %s at %s: rule %s, retention.ms %d, log start offset %d -> %d\n",
			ev.Where(), ev.Kind, ev.Time.UTC().Format(time.RFC3339Nano), d.Rule, d.RetentionMs, d.OldLogStartOffset, d.NewLogStartOffset)
		for _, s := range d.Segments {
			fmt.Printf("  segment %d: offsets %d-%d, %d bytes\n", s.BaseOffset, s.BaseOffset, s.NextOffset-1, s.Size)
		}
	}
	st := p.Stats()
	fmt.Printf("%d lines, %d about payments-0, %d used\n", st.Lines, st.About, st.Used)
	// Output:
	// server.log:1 deletion at 2026-03-02T09:03:55.106Z: rule time, retention.ms 60000, log start offset 0 -> 73
	//   segment 0: offsets 0-36, 2876 bytes
	//   segment 37: offsets 37-72, 2808 bytes
	// 4 lines, 3 about payments-0, 3 used
}
