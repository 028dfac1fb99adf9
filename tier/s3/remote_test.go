package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/record"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/tier/s3"
	"github.com/segkit/segkit/vfs"
)

var testTP = tier.TopicIDPartition{TopicID: checkpoint.UUID{15: 42}, Topic: "orders", Partition: 3}

func newRemote(t *testing.T) *s3.Remote {
	return s3.NewRemote(newBucket(t), "cluster-a/tiered", time.Minute)
}

// segmentFiles writes a fake segment's files to a MemFS.
func segmentFiles(t *testing.T, txn bool) tier.SegmentData {
	fsys := vfs.NewMem()
	files := map[string][]byte{
		"/p/00000000000000000100.log":       bytes.Repeat([]byte("logbytes"), 1000),
		"/p/00000000000000000100.index":     []byte("offset-index"),
		"/p/00000000000000000100.timeindex": []byte("time-index"),
		"/p/00000000000000000200.snapshot":  []byte("producer-snapshot"),
	}
	if txn {
		files["/p/00000000000000000100.txnindex"] = []byte("txn-index")
	}
	if err := fsys.MkdirAll("/p", 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := vfs.WriteFileAtomic(fsys, name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := tier.SegmentData{FS: fsys, LogSegment: "/p/00000000000000000100.log", OffsetIndex: "/p/00000000000000000100.index",
		TimeIndex: "/p/00000000000000000100.timeindex", ProducerSnapshot: "/p/00000000000000000200.snapshot",
		LeaderEpochIndex: []byte("0\n1\n0 0\n")}
	if txn {
		d.TransactionIndex = "/p/00000000000000000100.txnindex"
	}
	return d
}

func segmentMeta(t *testing.T, seed uint64, start int64) tier.SegmentMetadata {
	id, err := tier.NewSegmentID(testTP, rand.NewChaCha8([32]byte{byte(seed)}))
	if err != nil {
		t.Fatal(err)
	}
	return tier.SegmentMetadata{ID: id, StartOffset: start, EndOffset: start + 99, SegmentSizeInBytes: 8000,
		SegmentLeaderEpochs: []checkpoint.EpochEntry{{Epoch: 0, StartOffset: 0}}, State: tier.CopySegmentStarted}
}

// TestRemoteStorageManager runs the SPI on the S3 remote and on tier.Dir
// side by side: the same names, the same bytes, the same errors.
func TestRemoteStorageManager(t *testing.T) {
	r := newRemote(t)
	memfs := vfs.NewMem()
	dir := tier.NewDir(memfs, "/remote")
	remotes := []struct {
		name string
		r    interface {
			tier.Remote
			tier.Auditor
		}
	}{{"s3", r}, {"dir", dir}}

	m := segmentMeta(t, 1, 100)
	d := segmentFiles(t, false)
	log := bytes.Repeat([]byte("logbytes"), 1000)
	for _, rem := range remotes {
		t.Run(rem.name, func(t *testing.T) {
			for range 2 { // a retry overwrites
				if err := rem.r.CopyLogSegmentData(m, d); err != nil {
					t.Fatal(err)
				}
			}
			for _, rg := range [][2]int64{{0, -1}, {0, 8}, {100, 7000}, {7999, 8000}, {8000, -1}, {7990, 1 << 30}} {
				end := rg[1]
				if end < 0 || end > int64(len(log)) {
					end = int64(len(log))
				}
				if got := readAll(t)(rem.r.FetchLogSegment(m, rg[0], rg[1])); !bytes.Equal(got, log[rg[0]:end]) {
					t.Errorf("FetchLogSegment(%d, %d): %d bytes, want %d", rg[0], rg[1], len(got), end-rg[0])
				}
			}
			if rc, err := rem.r.FetchLogSegment(m, 9000, -1); err == nil {
				rc.Close()
				t.Errorf("FetchLogSegment past the end: no error")
			}
			for typ, want := range map[tier.IndexType]string{tier.IndexOffset: "offset-index", tier.IndexTimestamp: "time-index",
				tier.IndexProducerSnapshot: "producer-snapshot", tier.IndexLeaderEpoch: "0\n1\n0 0\n"} {
				if got := readAll(t)(rem.r.FetchIndex(m, typ)); string(got) != want {
					t.Errorf("FetchIndex(%v) = %q, want %q", typ, got, want)
				}
			}
			_, err := rem.r.FetchIndex(m, tier.IndexTransaction)
			var nf *tier.NotFoundError
			if !errors.As(err, &nf) || !errors.Is(err, tier.ErrNotFound) || nf.Segment != m.ID || nf.What != "TRANSACTION" {
				t.Fatalf("FetchIndex(TRANSACTION) without one: %v, want *tier.NotFoundError", err)
			}
			files, err := rem.r.Files(testTP)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 5 {
				t.Fatalf("Files = %v, want 5 files", files)
			}
			for _, f := range files {
				if f.ID != m.ID.ID || f.StartOffset != 100 {
					t.Errorf("Files: %+v, want segment %s at 100", f, m.ID.ID)
				}
			}
			for range 2 { // idempotent
				if err := rem.r.DeleteLogSegmentData(m); err != nil {
					t.Fatal(err)
				}
			}
			_, err = rem.r.FetchLogSegment(m, 0, 10)
			if !errors.As(err, &nf) || nf.What != "log" {
				t.Fatalf("FetchLogSegment after delete: %v, want *tier.NotFoundError", err)
			}
			if files, err := rem.r.Files(testTP); err != nil || len(files) != 0 {
				t.Fatalf("Files after delete = %v, %v", files, err)
			}
		})
	}

	// With a transaction index: the same six names on both remotes.
	m2 := segmentMeta(t, 2, 200)
	d2 := segmentFiles(t, true)
	var names [2][]string
	for i, rem := range remotes {
		if err := rem.r.CopyLogSegmentData(m2, d2); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t)(rem.r.FetchIndex(m2, tier.IndexTransaction)); string(got) != "txn-index" {
			t.Fatalf("%s: txn index %q", rem.name, got)
		}
		files, err := rem.r.Files(testTP)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			names[i] = append(names[i], f.Name)
		}
		slices.Sort(names[i])
	}
	if !slices.Equal(names[0], names[1]) || len(names[0]) != 6 {
		t.Fatalf("names differ:\ns3:  %q\ndir: %q", names[0], names[1])
	}
	want := tier.SegmentFileName(200, m2.ID.ID, tier.FileSegment)
	if !slices.Contains(names[0], want) {
		t.Fatalf("no %s in %q", want, names[0])
	}
	if k := r.FileKey(m2, tier.FileSegment); k != "cluster-a/tiered/kafka-tiered-storage/orders-3-"+testTP.TopicID.String()+"/"+want {
		t.Fatalf("key %q", k)
	}
	// An unknown object in the partition prefix is listed with a zero id,
	// and RemoveFile removes it (twice: idempotent).
	ctx := context.Background()
	if err := r.Bucket().PutBytes(ctx, r.PartitionPrefix(testTP)+"stray.bin", []byte("?")); err != nil {
		t.Fatal(err)
	}
	files, err := r.Files(testTP)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(files, func(f tier.RemoteFile) bool { return f.Name == "stray.bin" })
	if i < 0 || files[i].ID != (tier.UUID{}) {
		t.Fatalf("Files = %+v, want stray.bin with a zero id", files)
	}
	for range 2 {
		if err := r.RemoveFile(testTP, "stray.bin"); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.RemoveFile(testTP, "../x"); err == nil {
		t.Fatal("RemoveFile(../x): no error")
	}
}

func TestMetadata(t *testing.T) {
	r := newRemote(t)
	if got, err := r.ListSegmentMetadata(testTP); err != nil || len(got) != 0 {
		t.Fatalf("empty remote: %v, %v", got, err)
	}
	var ms []tier.SegmentMetadata
	for i, start := range []int64{300, 0, 100, 100} {
		m := segmentMeta(t, uint64(10+i), start)
		ms = append(ms, m)
		if err := r.PutSegmentMetadata(m); err != nil {
			t.Fatal(err)
		}
	}
	ms[1].State = tier.CopySegmentFinished // replaces the earlier state
	if err := r.PutSegmentMetadata(ms[1]); err != nil {
		t.Fatal(err)
	}
	got, err := r.ListSegmentMetadata(testTP)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].StartOffset != 0 || got[0].State != tier.CopySegmentFinished || got[3].StartOffset != 300 ||
		got[1].ID.ID.String() > got[2].ID.ID.String() {
		t.Fatalf("ListSegmentMetadata = %+v", got)
	}
	// The metadata object holds tier.AppendMetadata's bytes, as Dir's file.
	p, err := r.Bucket().ReadAll(context.Background(), r.MetadataKey(ms[1]), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p, tier.AppendMetadata(nil, ms[1])) {
		t.Fatalf("metadata object %q", p)
	}
	// Other partitions are not listed.
	other := testTP
	other.Partition = 4
	if got, err := r.ListSegmentMetadata(other); err != nil || len(got) != 0 {
		t.Fatalf("other partition: %v, %v", got, err)
	}

	// Damage is a *format.CorruptionError naming the object.
	ctx := context.Background()
	bad := r.MetadataKey(ms[0])
	if err := r.Bucket().PutBytes(ctx, bad, p[:len(p)-3]); err != nil {
		t.Fatal(err)
	}
	_, err = r.ListSegmentMetadata(testTP)
	var ce *format.CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, format.ErrTruncated) || !strings.HasSuffix(ce.Path, bad) {
		t.Fatalf("torn metadata: %v, want a CorruptionError wrapping ErrTruncated", err)
	}
	// Whole metadata under another segment's name.
	if err := r.Bucket().PutBytes(ctx, bad, p); err != nil {
		t.Fatal(err)
	}
	if _, err = r.ListSegmentMetadata(testTP); !errors.As(err, &ce) || !errors.Is(err, format.ErrInvalid) {
		t.Fatalf("misplaced metadata: %v, want a CorruptionError wrapping ErrInvalid", err)
	}
	// Too large.
	saved := tier.MaxMetadataFileSize
	tier.MaxMetadataFileSize = 64
	defer func() { tier.MaxMetadataFileSize = saved }()
	if err := r.Bucket().PutBytes(ctx, bad, tier.AppendMetadata(nil, ms[0])); err != nil {
		t.Fatal(err)
	}
	if _, err = r.ListSegmentMetadata(testTP); !errors.As(err, &ce) || !errors.Is(err, format.ErrTooLarge) {
		t.Fatalf("large metadata: %v, want a CorruptionError wrapping ErrTooLarge", err)
	}
}

type fixedClock struct{ t *time.Time }

func (c fixedClock) Now() time.Time { return *c.t }

// tieredRun drives tier over remote: 40 records in 2 KiB segments, an
// upload, local retention, a read from offset 0, then total retention.
// It returns what it saw, to compare between remotes.
func tieredRun(t *testing.T, remote tier.Remote) []string {
	fsys := vfs.NewMem()
	now := time.UnixMilli(1_700_000_000_000)
	clk := fixedClock{&now}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		"segment.bytes": "2048", "segment.index.bytes": "4096", "remote.storage.enable": "true",
		"local.retention.ms": "60000", "retention.ms": "600000",
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := "/var/kafka-logs/orders-3"
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := checkpoint.WritePartitionMetadata(fsys, dir, testTP.TopicID); err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	for i := range 40 {
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: now.UnixMilli(), Value: []byte(strings.Repeat("x", 100) + fmt.Sprint(i))}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	opt := tier.Options{Clock: clk, Rand: rand.NewChaCha8([32]byte{7})}
	tr, _, err := tier.Open(fsys, l, remote, opt)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	up, err := tr.Upload()
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("copied %d, highest %d", len(up.Copied), tr.HighestCopiedOffset()))
	now = now.Add(2 * time.Minute)
	n, err := tr.DeleteLocal()
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("deleted %d local; earliest %d, earliest-local %d", n, tr.LogStartOffset(), tr.LocalLogStartOffset()))
	for off := int64(0); off < tr.LocalLogStartOffset(); {
		res, err := tr.Read(off, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Remote {
			t.Fatalf("read at %d below earliest-local %d not from the remote", off, tr.LocalLogStartOffset())
		}
		s := record.NewScanner(res.Records, "", 0)
		for s.Next() {
			e := s.Entry()
			out = append(out, fmt.Sprintf("remote batch %d-%d", e.BaseOffset(), e.LastOffset()))
			off = e.LastOffset() + 1
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A second Tier over the same remote sees the same metadata and has
	// nothing to resolve.
	tr2, rep, err := tier.Open(fsys, l, remote, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.CopiesAbandoned)+len(rep.DeletesFinished)+len(rep.Unknown)+len(rep.Missing)+len(rep.TempRemoved) != 0 {
		t.Fatalf("reopen resolved %+v", rep)
	}
	now = now.Add(20 * time.Minute) // past retention.ms
	n, err = tr2.DeleteRemote()
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("deleted %d remote; earliest %d", n, tr2.LogStartOffset()))
	for _, m := range tr2.Metadata() {
		out = append(out, fmt.Sprintf("segment %s [%d, %d] %v", m.ID.ID, m.StartOffset, m.EndOffset, m.State))
	}
	return out
}

// TestTieredLog runs the same tiering scenario over tier.Dir and the S3
// remote, with the same segment ids: the engine sees the same thing, and
// the bucket holds, key for key, the bytes Dir holds file for file.
func TestTieredLog(t *testing.T) {
	r := newRemote(t)
	memfs := vfs.NewMem()
	dir := tier.NewDir(memfs, "/remote")

	// Stop both runs after the upload to compare the stored bytes.
	fromS3 := tieredRun(t, r)
	fromDir := tieredRun(t, dir)
	if !slices.Equal(fromS3, fromDir) {
		t.Fatalf("over S3:\n%s\nover Dir:\n%s", strings.Join(fromS3, "\n"), strings.Join(fromDir, "\n"))
	}
	if len(fromS3) < 5 || !strings.HasPrefix(fromS3[0], "copied 3,") {
		t.Fatalf("unexpected run:\n%s", strings.Join(fromS3, "\n"))
	}
	t.Logf("over both remotes:\n%s", strings.Join(fromS3, "\n"))

	// The metadata objects equal Dir's metadata files, byte for byte.
	ctx := context.Background()
	ms, err := dir.ListSegmentMetadata(testTP)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		want, err := vfs.ReadFileLimit(memfs, dir.MetadataPath(m), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Bucket().ReadAll(ctx, r.MetadataKey(m), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: metadata object differs from Dir's file:\n%s\n%s", path.Base(dir.MetadataPath(m)), got, want)
		}
	}
}

// TestTieredFilesEqual uploads through tier to both remotes and compares
// every data object with Dir's file of the same name.
func TestTieredFilesEqual(t *testing.T) {
	r := newRemote(t)
	memfs := vfs.NewMem()
	dir := tier.NewDir(memfs, "/remote")
	for _, remote := range []tier.Remote{r, dir} {
		uploadOnly(t, remote)
	}
	dfiles, err := dir.Files(testTP)
	if err != nil {
		t.Fatal(err)
	}
	sfiles, err := r.Files(testTP)
	if err != nil {
		t.Fatal(err)
	}
	if len(dfiles) != len(sfiles) || len(dfiles) < 15 {
		t.Fatalf("Dir has %d files, S3 %d objects", len(dfiles), len(sfiles))
	}
	ctx := context.Background()
	for _, f := range dfiles {
		want, err := vfs.ReadFileLimit(memfs, path.Join(dir.PartitionDir(testTP), f.Name), 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Bucket().ReadAll(ctx, r.PartitionPrefix(testTP)+f.Name, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: object of %d bytes, Dir's file %d", f.Name, len(got), len(want))
		}
	}
}

func uploadOnly(t *testing.T, remote tier.Remote) {
	fsys := vfs.NewMem()
	now := time.UnixMilli(1_700_000_000_000)
	clk := fixedClock{&now}
	cfg, err := config.ParseOptions{AllowSmallSegments: true}.Parse(map[string]string{
		"segment.bytes": "2048", "segment.index.bytes": "4096", "remote.storage.enable": "true",
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := "/var/kafka-logs/orders-3"
	l, err := kafkalog.Open(fsys, dir, cfg, kafkalog.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := checkpoint.WritePartitionMetadata(fsys, dir, testTP.TopicID); err != nil {
		t.Fatal(err)
	}
	var w record.Builder
	for i := range 60 {
		spec := record.NewBatchSpec(0, compress.None)
		b, err := w.AppendBatch(nil, &spec, []record.Record{{Timestamp: now.UnixMilli() + int64(i), Value: []byte(strings.Repeat("y", 90) + fmt.Sprint(i))}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	tr, _, err := tier.Open(fsys, l, remote, tier.Options{Clock: clk, Rand: rand.NewChaCha8([32]byte{9})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Upload(); err != nil {
		t.Fatal(err)
	}
}

func TestParseURI(t *testing.T) {
	endpoint := requireServer(t)
	t.Setenv("AWS_ACCESS_KEY_ID", testAccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", testSecretKey)
	b := newBucket(t)
	r, err := s3.ParseURI("s3://" + b.Name() + "/x/y/?endpoint=" + endpoint + "&timeout=30s")
	if err != nil {
		t.Fatal(err)
	}
	m := segmentMeta(t, 3, 0)
	if err := r.PutSegmentMetadata(m); err != nil {
		t.Fatal(err)
	}
	if want := "x/y/.segkit-tier/"; !strings.HasPrefix(r.MetadataKey(m), want) {
		t.Fatalf("key %q, want prefix %q", r.MetadataKey(m), want)
	}
	if got, err := r.ListSegmentMetadata(testTP); err != nil || len(got) != 1 {
		t.Fatalf("ListSegmentMetadata = %v, %v", got, err)
	}
	for _, bad := range []string{"file:///x", "s3:///prefix", "s3://b?color=red", "s3://b?timeout=-1s", "s3://u@b/p"} {
		if _, err := s3.ParseURI(bad); err == nil {
			t.Errorf("ParseURI(%q): no error", bad)
		}
	}
}
