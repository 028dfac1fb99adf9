package checkpoint

import (
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

// wantCorrupt checks that err is a *format.CorruptionError at offset off
// wrapping format.ErrInvalid, whose message contains msg.
func wantCorrupt(t *testing.T, err error, off int64, msg string) {
	t.Helper()
	var ce *format.CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *format.CorruptionError", err, err)
	}
	if !errors.Is(err, format.ErrInvalid) {
		t.Errorf("error %v does not wrap format.ErrInvalid", err)
	}
	if ce.Offset != off {
		t.Errorf("error %v at offset %d, want %d", err, ce.Offset, off)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q does not say %q", err, msg)
	}
}

func TestParseOffsets(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []OffsetEntry
	}{
		{"empty_file", "", nil},
		{"version_only", "0\n", nil},
		{"version_no_newline", "0", nil},
		{"zero_entries", "0\n0\n", []OffsetEntry{}},
		{"two", "0\n2\norders 0 42\norders 1 17\n", []OffsetEntry{{TopicPartition{"orders", 0}, 42}, {TopicPartition{"orders", 1}, 17}}},
		{"no_final_newline", "0\n1\nt 3 9", []OffsetEntry{{TopicPartition{"t", 3}, 9}}},
		{"crlf", "0\r\n1\r\nt 3 9\r\n", []OffsetEntry{{TopicPartition{"t", 3}, 9}}},
		{"cr_only", "0\r1\rt 3 9\r", []OffsetEntry{{TopicPartition{"t", 3}, 9}}},
		{"tabs_and_runs", "0\n1\nt\t 3  \t9 \t\n", []OffsetEntry{{TopicPartition{"t", 3}, 9}}},
		{"signs_and_zeros", "+0\n+1\nt +03 -0009\n", []OffsetEntry{{TopicPartition{"t", 3}, -9}}},
		{"duplicates_kept", "0\n2\nt 0 1\nt 0 2\n", []OffsetEntry{{TopicPartition{"t", 0}, 1}, {TopicPartition{"t", 0}, 2}}},
		{"extremes", "0\n1\nt 2147483647 9223372036854775807\n", []OffsetEntry{{TopicPartition{"t", 2147483647}, 9223372036854775807}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOffsets([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("ParseOffsets(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseTextErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		off  int64
		msg  string
	}{
		{"version", "1\n0\n", 0, "Unrecognised version:1, expected version: 0"},
		{"version_not_int", "v0\n0\n", 0, `Malformed line: "v0"`},
		{"version_space", " 0\n0\n", 0, `Malformed line: " 0"`},
		{"count_not_int", "0\ntwo\n", 2, `Malformed line: "two"`},
		{"count_negative", "0\n-1\n", 2, "Illegal entry count -1"},
		{"too_few", "0\n3\nt 0 1\nt 1 2\n", 2, "Expected [3] entries in checkpoint file, but found only [2]"},
		{"too_many", "0\n1\nt 0 1\nt 1 2\n", 2, "Expected [1] entries in checkpoint file, but found only [2]"},
		{"huge_count", "0\n2147483647\nt 0 1\n", 2, "Expected [2147483647] entries in checkpoint file, but found only [1]"},
		{"two_fields", "0\n2\nt 0 1\nt 1\n", 10, `Malformed line: "t 1"`},
		{"four_fields", "0\n1\nt 0 1 2\n", 4, `Malformed line: "t 0 1 2"`},
		{"leading_space", "0\n1\n 0 1\n", 4, `Malformed line: " 0 1"`},
		{"empty_line", "0\n1\n\n", 4, `Malformed line: ""`},
		{"blank_last_line", "0\n1\nt 0 1\n\n", 10, `Malformed line: ""`},
		{"partition_not_int", "0\n1\nt x 1\n", 4, `Malformed line: "t x 1"`},
		{"partition_overflow", "0\n1\nt 2147483648 1\n", 4, "Malformed line"},
		{"offset_overflow", "0\n1\nt 0 9223372036854775808\n", 4, "Malformed line"},
		{"offset_hex", "0\n1\nt 0 0x10\n", 4, "Malformed line"},
		{"invalid_utf8", "0\n1\nt\xff 0 1\n", 4, "Malformed line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOffsets([]byte(tt.in))
			wantCorrupt(t, err, tt.off, tt.msg)
		})
	}
}

func TestParseLeaderEpochs(t *testing.T) {
	got, err := ParseLeaderEpochs([]byte("0\n3\n0 0\n2 1020\n5 6437\n"))
	want := []EpochEntry{{0, 0}, {2, 1020}, {5, 6437}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseLeaderEpochs = %v, %v; want %v", got, err, want)
	}
	if b := AppendLeaderEpochs(nil, want); string(b) != "0\n3\n0 0\n2 1020\n5 6437\n" {
		t.Errorf("AppendLeaderEpochs = %q", b)
	}
	_, err = ParseLeaderEpochs([]byte("0\n1\n0 0 0\n"))
	wantCorrupt(t, err, 4, `Malformed line: "0 0 0"`)
	_, err = ParseLeaderEpochs([]byte("0\n1\n2147483648 0\n"))
	wantCorrupt(t, err, 4, "Malformed line")
}

func TestJavaFields(t *testing.T) {
	for in, want := range map[string][]string{
		"":        {""},
		"a":       {"a"},
		"a b":     {"a", "b"},
		" a b":    {"", "a", "b"},
		"a b  \t": {"a", "b"},
		"   ":     nil,
		"a\vb\fc": {"a", "b", "c"},
	} {
		if got := javaFields(in); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("javaFields(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOffsetsFiles(t *testing.T) {
	m := vfs.NewMem()
	if _, err := ReadOffsets(m, RecoveryPointFile); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	offs := map[TopicPartition]int64{{"b", 1}: 10, {"a", 2}: 20, {"a", 10}: 30, {"a", 1}: 40}
	if err := WriteOffsets(m, RecoveryPointFile, offs); err != nil {
		t.Fatal(err)
	}
	b, _ := vfs.ReadFile(m, RecoveryPointFile)
	if want := "0\n4\na 1 40\na 2 20\na 10 30\nb 1 10\n"; string(b) != want {
		t.Errorf("file = %q, want %q (sorted)", b, want)
	}
	got, err := ReadOffsets(m, RecoveryPointFile)
	if err != nil || !reflect.DeepEqual(got, offs) {
		t.Errorf("ReadOffsets = %v, %v", got, err)
	}
	if _, err := vfs.ReadFile(m, RecoveryPointFile+".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a .tmp file is left after a successful write: %v", err)
	}
	// Later duplicates win, as in OffsetCheckpointFile.read.
	vfs.WriteFile(m, "dup", []byte("0\n2\nt 0 1\nt 0 2\n"), 0o644)
	if got, _ := ReadOffsets(m, "dup"); got[TopicPartition{"t", 0}] != 2 {
		t.Errorf("duplicate: %v", got)
	}
	// Corruption names the file.
	vfs.WriteFile(m, "bad", []byte("0\n1\nt 0\n"), 0o644)
	_, err = ReadOffsets(m, "bad")
	wantCorrupt(t, err, 4, "Malformed line")
	var ce *format.CorruptionError
	if errors.As(err, &ce) && ce.Path != "bad" {
		t.Errorf("Path = %q", ce.Path)
	}
	for _, topic := range []string{"", "a b", "a\nb", "\xff"} {
		err := WriteOffsetEntries(m, "x", []OffsetEntry{{TopicPartition{topic, 0}, 1}})
		if !errors.Is(err, ErrUnencodable) {
			t.Errorf("writing topic %q: %v, want ErrUnencodable", topic, err)
		}
	}
}

func TestParseDirName(t *testing.T) {
	uid := "e1a7c3b2f2e14c7a9d4b7a0e6f3c2d1a"
	tests := []struct {
		name string
		want PartitionDir
		ok   bool
	}{
		{"topic-3", PartitionDir{TopicPartition{"topic", 3}, DirLive, ""}, true},
		{"__consumer_offsets-49", PartitionDir{TopicPartition{"__consumer_offsets", 49}, DirLive, ""}, true},
		{"my-topic-with-dashes-12", PartitionDir{TopicPartition{"my-topic-with-dashes", 12}, DirLive, ""}, true},
		{"a.b-0", PartitionDir{TopicPartition{"a.b", 0}, DirLive, ""}, true},
		{"t-+3", PartitionDir{TopicPartition{"t", 3}, DirLive, ""}, true}, // Integer.parseInt accepts a sign
		{"topic-3." + uid + "-delete", PartitionDir{TopicPartition{"topic", 3}, DirDelete, uid}, true},
		{"topic-3." + uid + "-future", PartitionDir{TopicPartition{"topic", 3}, DirFuture, uid}, true},
		{"topic-3." + uid + "-stray", PartitionDir{TopicPartition{"topic", 3}, DirStray, uid}, true},
		{"a.b-3." + uid + "-delete", PartitionDir{TopicPartition{"a.b", 3}, DirDelete, uid}, true},
		{"topic", PartitionDir{}, false},
		{"topic-", PartitionDir{}, false},
		{"-3", PartitionDir{}, false},
		{"topic-x", PartitionDir{}, false},
		{"topic-99999999999", PartitionDir{}, false},
		{"topic-3-delete", PartitionDir{}, false}, // no ".uniqueId"
		{"topic-3.-delete", PartitionDir{}, false},
		{"topic-3.a b-delete", PartitionDir{}, false},
		{"topic.x-delete", PartitionDir{}, false},
		{"topic-x.y-delete", PartitionDir{}, false},
		{"", PartitionDir{}, false},
		{"cleaner-offset-checkpoint", PartitionDir{}, false},
		{"meta.properties", PartitionDir{}, false},
	}
	for _, tt := range tests {
		got, err := ParsePartitionDir(tt.name)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePartitionDir(%q) = %+v, %v; want %+v ok=%v", tt.name, got, err, tt.want, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrNotPartitionDir) {
			t.Errorf("ParsePartitionDir(%q) error %v does not wrap ErrNotPartitionDir", tt.name, err)
		}
		tp, err := ParseDirName(tt.name)
		switch {
		case !tt.ok:
			if err == nil {
				t.Errorf("ParseDirName(%q) accepted", tt.name)
			}
		case tt.want.Kind != DirLive:
			if !errors.Is(err, ErrRenamedDir) {
				t.Errorf("ParseDirName(%q) = %v, want ErrRenamedDir", tt.name, err)
			}
		default:
			if err != nil || tp != tt.want.TopicPartition {
				t.Errorf("ParseDirName(%q) = %v, %v", tt.name, tp, err)
			}
		}
	}
	// Round trips.
	tp := TopicPartition{"orders", 7}
	if tp.DirName() != "orders-7" || tp.String() != "orders-7" {
		t.Errorf("DirName = %q", tp.DirName())
	}
	for k := DirDelete; k <= DirStray; k++ {
		name := tp.RenamedDirName(k, uid)
		d, err := ParsePartitionDir(name)
		if err != nil || d != (PartitionDir{tp, k, uid}) {
			t.Errorf("ParsePartitionDir(RenamedDirName(%v)) = %+v, %v", k, d, err)
		}
	}
	// Long topics are cut to keep -delete and -stray names within 255
	// bytes; -future names are not.
	long := TopicPartition{strings.Repeat("t", 249), 1}
	if n := len(long.RenamedDirName(DirDelete, uid)); n != 255 {
		t.Errorf("capped -delete name is %d bytes", n)
	}
	if n := len(long.RenamedDirName(DirFuture, uid)); n != 249+2+1+32+7 {
		t.Errorf("-future name is %d bytes", n)
	}
	if DirDelete.String() != "delete" || DirLive.String() != "live" {
		t.Errorf("DirKind strings: %v %v", DirDelete, DirLive)
	}
}

func TestUUID(t *testing.T) {
	u, err := ParseUUID("AAAAAAAAAAAAAAAAAAAAAQ")
	if err != nil || u != MetadataTopicID || u.String() != "AAAAAAAAAAAAAAAAAAAAAQ" {
		t.Fatalf("metadata topic id: %v %v", u, err)
	}
	u, err = ParseUUID("vH1Xu-ntQPu9P3I3F8wp8Q")
	if err != nil || u.String() != "vH1Xu-ntQPu9P3I3F8wp8Q" {
		t.Fatalf("ParseUUID: %v %v", u, err)
	}
	if p, err := ParseUUID("vH1Xu-ntQPu9P3I3F8wp8Q=="); err != nil || p != u {
		t.Errorf("padded form: %v %v", p, err)
	}
	for _, s := range []string{"", "vH1Xu+ntQPu9P3I3F8wp8Q", "vH1Xu/ntQPu9P3I3F8wp8Q", "vH1Xu-ntQPu9P3I3F8wp8", "vH1Xu-ntQPu9P3I3F8wp8Qx", "vH1Xu-ntQPu9P3I3F8wp8Q===", "vH1Xu-ntQPu9P3I3F8w\np8Q"} {
		if _, err := ParseUUID(s); !errors.Is(err, ErrBadUUID) {
			t.Errorf("ParseUUID(%q) = %v, want ErrBadUUID", s, err)
		}
	}
}

func TestPartitionMetadata(t *testing.T) {
	id, _ := ParseUUID("Rkh9AX0GSAe8U38BBNFwlg")
	ok := []struct {
		in   string
		want PartitionMetadata
	}{
		{"version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg", PartitionMetadata{0, id}},
		{"version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg\n", PartitionMetadata{0, id}},
		{"version:\t 7\r\ntopic_id:  Rkh9AX0GSAe8U38BBNFwlg\nignored", PartitionMetadata{7, id}},
	}
	for _, tt := range ok {
		got, err := ParsePartitionMetadata([]byte(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("ParsePartitionMetadata(%q) = %+v, %v", tt.in, got, err)
		}
	}
	bad := []struct {
		in  string
		off int64
		msg string
	}{
		{"", 0, "Malformed line in partition metadata file: null"},
		{"version: 0", 10, "Malformed line in partition metadata file: null"},
		{"version:0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg", 0, `Malformed line in partition metadata file: "version:0"`},
		{"Version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg", 0, "Malformed line"},
		{"version: x\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg", 0, "Malformed line"},
		{"version: -1\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg", 0, "Unrecognized version of partition metadata file: -1"},
		{"version: 0\ntopic: Rkh9AX0GSAe8U38BBNFwlg", 11, "Malformed line"},
		{"version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwl", 11, "Malformed line"},
		{"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", 11, "Invalid topic ID in partition metadata file"},
	}
	for _, tt := range bad {
		_, err := ParsePartitionMetadata([]byte(tt.in))
		wantCorrupt(t, err, tt.off, tt.msg)
	}
	m := vfs.NewMem()
	m.MkdirAll("p", 0o755)
	if err := WritePartitionMetadata(m, "p", id); err != nil {
		t.Fatal(err)
	}
	if b, _ := vfs.ReadFile(m, "p/partition.metadata"); string(b) != "version: 0\ntopic_id: Rkh9AX0GSAe8U38BBNFwlg" {
		t.Errorf("written %q", b)
	}
	if got, err := ReadPartitionMetadata(m, "p"); err != nil || got.TopicID != id {
		t.Errorf("ReadPartitionMetadata = %v, %v", got, err)
	}
	if err := WritePartitionMetadata(m, "p", ZeroUUID); !errors.Is(err, ErrUnencodable) {
		t.Errorf("writing the zero UUID: %v", err)
	}
	if _, err := ReadPartitionMetadata(m, "q"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

func TestCleanShutdown(t *testing.T) {
	m := vfs.NewMem()
	m.MkdirAll("data", 0o755)
	if present, epoch, err := ReadCleanShutdown(m, "data"); present || epoch != UnknownBrokerEpoch || err != nil {
		t.Fatalf("missing marker: %v %d %v", present, epoch, err)
	}
	if err := WriteCleanShutdown(m, "data", 6439); err != nil {
		t.Fatal(err)
	}
	if b, _ := vfs.ReadFile(m, "data/.kafka_cleanshutdown"); string(b) != `{"version":0,"brokerEpoch":6439}` {
		t.Errorf("marker = %q", b)
	}
	if present, epoch, err := ReadCleanShutdown(m, "data"); !present || epoch != 6439 || err != nil {
		t.Errorf("ReadCleanShutdown = %v %d %v", present, epoch, err)
	}
	for content, want := range map[string]int64{
		"":                                  UnknownBrokerEpoch, // Kafka before 3.7
		`{"version":0,"brokerEpoch":-1}`:    -1,
		`{"brokerEpoch":5,"extra":[1,2]}`:   5,
		` {"version": 3, "brokerEpoch": 7}`: 7,
		`{"version":0}`:                     UnknownBrokerEpoch,
		`{"version":0,"brokerEpoch":null}`:  UnknownBrokerEpoch,
		`{"version":0,"brokerEpoch":1.5}`:   UnknownBrokerEpoch,
		`garbage`:                           UnknownBrokerEpoch,
		`[1]`:                               UnknownBrokerEpoch,
	} {
		vfs.WriteFile(m, "data/.kafka_cleanshutdown", []byte(content), 0o644)
		present, epoch, err := ReadCleanShutdown(m, "data")
		if !present || epoch != want || err != nil {
			t.Errorf("marker %q: %v %d %v, want present with epoch %d", content, present, epoch, err, want)
		}
	}
	if err := RemoveCleanShutdown(m, "data"); err != nil {
		t.Fatal(err)
	}
	if present, _, _ := ReadCleanShutdown(m, "data"); present {
		t.Error("marker still present after RemoveCleanShutdown")
	}
	if err := RemoveCleanShutdown(m, "data"); err != nil {
		t.Errorf("removing a missing marker: %v", err)
	}
	// The removal is durable: a crash right after it keeps it removed.
	if present, _, _ := ReadCleanShutdown(m.CrashClone(vfs.CrashConfig{}), "data"); present {
		t.Error("removal did not survive a crash")
	}
}

func TestMetaProperties(t *testing.T) {
	tests := []struct {
		in   string
		want MetaProperties
	}{
		{"#\n#Mon Dec 20 20:49:13 CST 2021\nversion=0\nbroker.id=0\n", MetaProperties{Version: 0, NodeID: 0, HasNodeID: true}},
		{"node.id=1\ndirectory.id=PSZ6JrcqE2NiTBfmqjFcvw\nversion=1\ncluster.id=2970469C-7EC0-468D-BED4-70F0765920ED\n",
			MetaProperties{Version: 1, NodeID: 1, HasNodeID: true, ClusterID: "2970469C-7EC0-468D-BED4-70F0765920ED"}},
		{"version = 0\n  cluster.id : abc\\\n    def\n! comment\nbroker.id 1001", MetaProperties{Version: 0, NodeID: 1001, HasNodeID: true, ClusterID: "abcdef"}},
		{"version=0\n", MetaProperties{}},
		{"cluster.id=a\\u0041\\=b\n", MetaProperties{ClusterID: "aA=b"}},
	}
	for _, tt := range tests {
		got, err := ParseMetaProperties([]byte(tt.in))
		if err != nil {
			t.Errorf("ParseMetaProperties(%q): %v", tt.in, err)
			continue
		}
		got.Props, got.DirectoryID = nil, UUID{}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseMetaProperties(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	for in, msg := range map[string]string{
		"version=2\n":                          `Unknown meta.properties version "2"`,
		"version=1\ncluster.id=x\n":            "node.id was not found.",
		"version=1\nnode.id=1\n":               "cluster.id was not found.",
		"version=0\nbroker.id=x\n":             "Failed to parse broker.id property as an int",
		"version=0\ndirectory.id=not-a-uuid\n": "Unable to read directory.id as a Uuid",
	} {
		_, err := ParseMetaProperties([]byte(in))
		if err == nil || !strings.Contains(err.Error(), msg) || !errors.Is(err, format.ErrInvalid) {
			t.Errorf("ParseMetaProperties(%q) = %v, want %q", in, err, msg)
		}
	}
}
