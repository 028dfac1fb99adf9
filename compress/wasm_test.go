package compress

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/s2"
)

// TestSnappyEncoderChunks checks the guard against klauspost's recursive
// snappy encoder: no single call sees more than 64 KiB, however long the
// run, so the recursion depth stays near a thousand frames. In a browser a
// 2 MiB run encoded in one call overflows the JavaScript engine's stack in
// a way recover cannot catch.
func TestSnappyEncoderChunks(t *testing.T) {
	largest := 0
	encodeSnappy = func(dst, src []byte) []byte {
		largest = max(largest, len(src))
		return s2.EncodeSnappy(dst, src)
	}
	defer func() { encodeSnappy = s2.EncodeSnappy }()
	run := bytes.Repeat([]byte{'k'}, 2<<20)
	var e Encoder
	if _, err := e.AppendCompressed(nil, Snappy, run); err != nil {
		t.Fatal(err)
	}
	if largest != xerialBlockSize {
		t.Errorf("xerial: largest encoder call %d bytes, want %d", largest, xerialBlockSize)
	}
	largest = 0
	AppendSnappyBlock(nil, run)
	if largest > snappyChunk {
		t.Errorf("raw block: largest encoder call %d bytes, want at most %d", largest, snappyChunk)
	}
}

// TestLargeRepetitive round-trips 2 MiB runs through every codec. It is
// the test that matters under GOOS=js GOARCH=wasm (see doc.go for the
// command), where deep recursion or large stack frames would fail.
func TestLargeRepetitive(t *testing.T) {
	runs := []input{
		{"one_byte_run", bytes.Repeat([]byte{0}, 2<<20)},
		{"short_period", bytes.Repeat([]byte("abc"), 700000)},
		{"long_period", bytes.Repeat(randBytes(50, 4000), 525)},
	}
	var e Encoder
	var d Decoder
	for _, c := range allCodecs {
		for _, r := range runs {
			comp, err := e.AppendCompressed(nil, c, r.data)
			if err != nil {
				t.Fatalf("%v/%s: %v", c, r.name, err)
			}
			got, err := d.AppendDecompressed(nil, c, comp, len(r.data))
			if err != nil || !bytes.Equal(got, r.data) {
				t.Fatalf("%v/%s: %v", c, r.name, err)
			}
		}
	}
	for _, r := range runs {
		var sd SnappyDecompressor
		got, err := sd.AppendDecompressed(nil, AppendSnappyBlock(nil, r.data), len(r.data))
		if err != nil || !bytes.Equal(got, r.data) {
			t.Fatalf("raw snappy/%s: %v", r.name, err)
		}
	}
}
