package dumplog

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/kafkalog/producer"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/vfs"
)

// TestJavaMapOrder checks the HashMap order against the orders Java 17
// printed for the same keys put with computeIfAbsent in the same order:
// 20 keys (the table grows to 32 buckets), and the 8 files of the real
// data with non-consecutive offsets (two in one bucket, newest first).
func TestJavaMapOrder(t *testing.T) {
	var m javaMap
	for i := range 20 {
		m.add(fmt.Sprintf("/data/topic-%d/00000000000000000000.log", i), []OffsetPair{{}})
	}
	var got []string
	for _, k := range m.order() {
		got = append(got, strings.TrimSuffix(strings.TrimPrefix(k, "/data/topic-"), "/00000000000000000000.log"))
	}
	if want := "15,5,9,16,0,4,12,8,18,17,13,7,3,1,11,19,10,14,6,2"; strings.Join(got, ",") != want {
		t.Errorf("order %s, Java's %s", strings.Join(got, ","), want)
	}
	const dir = "/work/shared/kafka-real/dipendrasaini__kafka-learnning-series/tmp/kafka-logs-1/"
	const co = "/work/shared/kafka-real/yuanliubei__kafka-source-code/kafka-logs/__consumer_offsets-17/"
	m = javaMap{}
	for _, k := range []string{dir + "invoice-0/00000000000000030626.log", dir + "invoice-0/00000000000000060611.log",
		dir + "invoice-0/00000000000000090867.log", dir + "invoice-1/00000000000000030620.log", dir + "invoice-1/00000000000000060492.log",
		dir + "invoice-1/00000000000000090748.log", co + "00000000000000000000.log", co + "00000000000000000058.log"} {
		m.add(k, []OffsetPair{{-1, 0}})
	}
	want := []string{dir + "invoice-1/00000000000000060492.log", dir + "invoice-0/00000000000000090867.log",
		dir + "invoice-0/00000000000000060611.log", dir + "invoice-1/00000000000000030620.log", dir + "invoice-0/00000000000000030626.log",
		co + "00000000000000000000.log", dir + "invoice-1/00000000000000090748.log", co + "00000000000000000058.log"}
	if got := m.order(); !slices.Equal(got, want) {
		t.Errorf("order\n%s\nJava's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSession dumps a log with a gap, a producer snapshot and an unknown
// file, and checks both streams.
func TestSession(t *testing.T) {
	fsys := vfs.NewMem()
	fsys.MkdirAll("p", 0o755)
	var w record.Builder
	spec := record.NewBatchSpec(5, compress.None)
	spec.UseRecordOffsets = true
	log, err := w.AppendBatch(nil, &spec, []record.Record{{Offset: 5, Timestamp: 10, Value: []byte("a")}, {Offset: 7, Timestamp: 11, Key: []byte{0xe2, 0x82}}})
	if err != nil {
		t.Fatal(err)
	}
	snap := producer.AppendSnapshot(nil, []producer.Entry{
		{ProducerID: 3, Epoch: 1, LastSequence: 4, LastOffset: 7, OffsetDelta: 1, Timestamp: 11, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 6},
		{ProducerID: 4, LastSequence: -1, LastOffset: -1, Timestamp: 9, CoordinatorEpoch: 2, CurrentTxnFirstOffset: -1},
	})
	vfs.WriteFile(fsys, "p/00000000000000000005.log", log, 0o644)
	vfs.WriteFile(fsys, "p/00000000000000000008.snapshot", snap, 0o644)
	var out, errs bytes.Buffer
	s := &Session{Stdout: &out, Stderr: &errs, FS: fsys, Log: Options{PrintData: true}, Cwd: "/w"}
	for _, p := range []string{"p/00000000000000000005.log", "p//00000000000000000008.snapshot", "p/x.txt"} {
		if _, err := s.Dump(p); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	batch := strings.SplitN(out.String(), "\n", 4)[2]
	wantOut := "Dumping p/00000000000000000005.log\nLog starting offset: 5\n" + batch + "\n" +
		"| offset: 5 CreateTime: 10 keySize: -1 valueSize: 1 sequence: -1 headerKeys: [] payload: a\n" +
		"| offset: 7 CreateTime: 11 keySize: 2 valueSize: -1 sequence: -1 headerKeys: [] key: \uFFFD\n" +
		"Dumping p/00000000000000000008.snapshot\n" +
		"producerId: 3 producerEpoch: 1 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong[6] lastTimestamp: 11 firstSequence: 3 lastSequence: 4 lastOffset: 7 offsetDelta: 1 timestamp: 11\n" +
		"producerId: 4 producerEpoch: 0 coordinatorEpoch: 2 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: 9\n" +
		"Dumping p/x.txt\n"
	if out.String() != wantOut {
		t.Errorf("stdout\n%s\nwant\n%s", out.String(), wantOut)
	}
	wantErr := "Ignoring unknown file p/x.txt\nNon-consecutive offsets in /w/p/00000000000000000005.log\n  -1 is followed by 5\n  5 is followed by 7\n"
	if errs.String() != wantErr {
		t.Errorf("stderr\n%s\nwant\n%s", errs.String(), wantErr)
	}
}

// TestJavaString checks the decoding of malformed UTF-8 against what
// Java 17's new String(b, UTF_8) gives (one U+FFFD per malformed
// sequence, as the JDK delimits them).
func TestJavaString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain", "plain"},
		{"\xe2\x82\xac", "€"},
		{"\xe2\x82", "\uFFFD"},
		{"\xe2\x82A", "\uFFFDA"},
		{"\xe2A", "\uFFFDA"},
		{"\xed\xa0\x80", "\uFFFD"},
		{"\xe0\x80\x80", "\uFFFD\uFFFD\uFFFD"},
		{"\xf0\x9f\x98\x80", "😀"},
		{"\xf0\x9f\x98", "\uFFFD"},
		{"\xf0\x9fA", "\uFFFDA"},
		{"\xf8\x80", "\uFFFD\uFFFD"},
		{"\xc0\xaf", "\uFFFD\uFFFD"},
		{"\xc3", "\uFFFD"},
		{"0123456789abcdef\xe2\x82Azz", "0123456789abcdef\uFFFDAzz"},
		{"ab\xf0\x9f\x98\x80" + "01234567" + "\xc3", "ab😀01234567\uFFFD"},
		{"0123456\x80" + "89abcdef", "0123456\uFFFD89abcdef"},
	} {
		if got := string(appendJavaString(nil, []byte(tt.in))); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzJavaString: appendJavaString (ASCII runs appended whole) decodes as
// the sequence-by-sequence loop does, whatever the bytes.
func FuzzJavaString(f *testing.F) {
	for _, s := range []string{"plain", "0123456789abcdef\xe2\x82Azz", "\xed\xa0\x80abcdefgh\xf0\x9f", "abcdefg\xc3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []byte
		for rest := b; len(rest) > 0; {
			n, ok := javaUTF8Seq(rest)
			if ok {
				want = append(want, rest[:n]...)
			} else {
				want = append(want, "\uFFFD"...)
			}
			rest = rest[n:]
		}
		if got := appendJavaString(nil, b); string(got) != string(want) {
			t.Fatalf("%q: got %q, want %q", b, got, want)
		}
	})
}
