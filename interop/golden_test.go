package interop

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/record"
)

var update = flag.Bool("update", false, "rewrite ../testdata/golden from the generator")

const goldenDir = "../testdata/golden"

func manifestName(log string) string { return log[:len(log)-len(".log")] + ".json" }

func marshalManifest(m *Manifest) ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	return append(b, '\n'), err
}

// TestGolden regenerates the golden files and checks that the committed
// ones are byte-identical (-update rewrites them), then checks what they
// prove: segkit reads each to its manifest, franz-go and sarama agree on the
// files they can read, and pierrec/lz4 rejects the KAFKA-3160 frames.
func TestGolden(t *testing.T) {
	files, err := GenerateGolden()
	if err != nil {
		t.Fatal(err)
	}
	again, err := GenerateGolden()
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		if !bytes.Equal(files[i].Log, again[i].Log) {
			t.Fatalf("%s: the generator is not deterministic", files[i].Name)
		}
	}
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		js, err := marshalManifest(&f.Manifest)
		if err != nil {
			t.Fatal(err)
		}
		for _, out := range []struct {
			name string
			data []byte
		}{{f.Name, f.Log}, {manifestName(f.Name), js}} {
			path := filepath.Join(goldenDir, out.name)
			if *update {
				if err := os.WriteFile(path, out.data, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			have, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -args -update)", err)
			}
			if !bytes.Equal(have, out.data) {
				t.Errorf("%s differs from what the generator writes now (%d bytes committed, %d generated); "+
					"if the change is intended, run go test -run TestGolden -args -update and explain it in testdata/README.md",
					path, len(have), len(out.data))
			}
		}
		t.Run(f.Name, func(t *testing.T) { checkGoldenFile(t, &f) })
	}
}

// manifestBatches turns a manifest back into Batches for Diff.
func manifestBatches(m *Manifest) []Batch {
	var out []Batch
	for _, e := range m.Entries {
		b := Batch{Magic: e.Magic, BaseOffset: e.BaseOffset, PartitionLeaderEpoch: e.PartitionLeaderEpoch,
			LogAppendTime: e.TimestampType == "LogAppendTime", MaxTimestamp: e.MaxTimestamp,
			ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch, BaseSequence: e.BaseSequence,
			Transactional: e.Transactional, Control: e.Control}
		c, err := compress.ParseCodec(e.Codec)
		if err != nil {
			panic(err)
		}
		b.Codec = c
		for _, r := range e.Records {
			rec := Record{Offset: r.Offset, Timestamp: r.Timestamp, Key: r.Key, Value: r.Value}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, Header{Key: h.Key, Value: h.Value})
			}
			b.Records = append(b.Records, rec)
		}
		out = append(out, b)
	}
	return out
}

func checkGoldenFile(t *testing.T, f *GoldenFile) {
	// The manifest survives JSON with nil and empty apart.
	js, _ := marshalManifest(&f.Manifest)
	var back Manifest
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, f.Manifest) {
		t.Fatal("manifest does not round-trip through JSON")
	}
	want := manifestBatches(&f.Manifest)

	// segkit.
	got, err := segkitDecodeLog(f.Log)
	if err != nil {
		t.Fatalf("segkit: %v", err)
	}
	compareLog(t, 0, "segkit", want, got, true)
	s := record.NewScanner(f.Log, f.Name, 0)
	for i := 0; s.Next(); i++ {
		e := s.Entry()
		m := f.Manifest.Entries[i]
		if e.Position != m.Position || e.Size() != m.Size || e.LastOffset() != m.LastOffset {
			t.Errorf("entry %d: segkit position/size/lastOffset %d/%d/%d, manifest %d/%d/%d",
				i, e.Position, e.Size(), e.LastOffset(), m.Position, m.Size, m.LastOffset)
		}
	}

	switch f.Name {
	case "zstd-franz.log", "txn-abort-franz.log":
		var franz FranzDecoder
		got, err := franz.Decode(f.Log)
		if err != nil {
			t.Fatalf("franz-go: %v", err)
		}
		compareLog(t, 0, "franz-go", want, got, true)
		if got, err = SaramaDecode(f.Log); err != nil {
			t.Fatalf("sarama: %v", err)
		}
		compareLog(t, 0, "sarama", want, got, true)
	case "magic0-sarama.log":
		var franz FranzDecoder
		got, err := franz.Decode(f.Log)
		if err != nil {
			t.Fatalf("franz-go: %v", err)
		}
		compareLog(t, 0, "franz-go", want, got, true)
		if got, err = SaramaDecode(f.Log); err != nil {
			t.Fatalf("sarama: %v", err)
		}
		compareLog(t, 0, "sarama", want, got, true)
	case "magic0-lz4.log":
		checkKafka3160(t, f)
	}
}

// checkKafka3160 proves the quirk of magic0-lz4.log is real: pierrec/lz4's
// frame reader rejects each wrapper's frame with a header checksum error,
// accepts it once the checksum byte is recomputed as the LZ4 frame format
// defines it, and both give the inner message set; segkit's decompressor
// accepts both forms. franz-go and sarama, which read LZ4 with pierrec,
// reject the file.
func checkKafka3160(t *testing.T, f *GoldenFile) {
	frames := 0
	for _, e := range f.Manifest.Entries {
		if e.Codec != "lz4" {
			continue
		}
		raw := f.Log[e.Position : e.Position+int64(e.Size)]
		// v0: offset 8, size 4, crc 4, magic 1, attributes 1, key -1 (4), value length 4.
		if int32(binary.BigEndian.Uint32(raw[18:])) != -1 {
			t.Fatal("wrapper key is not null")
		}
		frame := raw[26:]
		if int(binary.BigEndian.Uint32(raw[22:])) != len(frame) {
			t.Fatal("value length")
		}
		frames++
		_, err := io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
		if err == nil || !errors.Is(err, lz4.ErrInvalidHeaderChecksum) {
			t.Errorf("pierrec/lz4 read the KAFKA-3160 frame at %d: err = %v, want ErrInvalidHeaderChecksum", e.Position, err)
		}
		fixed := bytes.Clone(frame)
		fixed[6] = byte(xxh32(fixed[4:6]) >> 8)
		if fixed[6] == frame[6] {
			t.Fatal("the KAFKA-3160 checksum equals the correct one for this header; the test proves nothing")
		}
		inner, err := io.ReadAll(lz4.NewReader(bytes.NewReader(fixed)))
		if err != nil {
			t.Errorf("pierrec/lz4 rejects the frame with a corrected checksum: %v", err)
		}
		var d compress.Decoder
		for _, fr := range [][]byte{frame, fixed} {
			got, err := d.AppendDecompressed(nil, compress.LZ4, fr, 1<<24)
			if err != nil {
				t.Errorf("segkit rejects the frame: %v", err)
			} else if !bytes.Equal(got, inner) {
				t.Error("segkit and pierrec decompress the frame differently")
			}
		}
		// The inner set holds the manifest's records at absolute offsets.
		if len(e.Records) > 0 && int64(binary.BigEndian.Uint64(inner)) != e.Records[0].Offset {
			t.Error("inner offsets are not absolute")
		}
	}
	if frames != 2 {
		t.Errorf("%d LZ4 frames, want 2", frames)
	}
	var franz FranzDecoder
	if _, err := franz.Decode(f.Log); err == nil {
		t.Error("franz-go read the KAFKA-3160 frames")
	}
	if _, err := SaramaDecode(f.Log); err == nil {
		t.Error("sarama read the KAFKA-3160 frames")
	}
}

// TestXXH32 checks the generator's XXH32 against known values.
func TestXXH32(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02cc5d05},
		{"a", 0x550d7456},
		{"abc", 0x32d153ff},
		{"Nobody inspects the spammish repetition", 0xe2293b2f},
	} {
		if got := xxh32([]byte(tt.in)); got != tt.want {
			t.Errorf("xxh32(%q) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}
