package compress_test

import (
	"errors"
	"fmt"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/format"
)

func ExampleEncoder() {
	var enc compress.Encoder // zero value: default levels
	records := []byte(`{"user":"alice","event":"login"}{"user":"bob","event":"login"}`)
	payload, err := enc.AppendCompressed(nil, compress.LZ4, records)
	if err != nil {
		panic(err)
	}
	// Kafka's LZ4 frame header: magic, FLG, BD, header checksum.
	fmt.Printf("% x\n", payload[:7])
	// Output:
	// 04 22 4d 18 60 40 82
}

func ExampleDecoder() {
	var enc compress.Encoder
	var dec compress.Decoder
	records := []byte("the records section of a batch")
	for _, c := range []compress.Codec{compress.Gzip, compress.Snappy, compress.LZ4, compress.Zstd} {
		payload, _ := enc.AppendCompressed(nil, c, records)
		out, err := dec.AppendDecompressed(nil, c, payload, 1<<20)
		fmt.Printf("%-6v %q %v\n", c, out, err)
	}
	// Output:
	// gzip   "the records section of a batch" <nil>
	// snappy "the records section of a batch" <nil>
	// lz4    "the records section of a batch" <nil>
	// zstd   "the records section of a batch" <nil>
}

func ExampleDecoder_limit() {
	var enc compress.Encoder
	var dec compress.Decoder
	payload, _ := enc.AppendCompressed(nil, compress.Zstd, make([]byte, 1<<20))
	// One MiB of zeros, decompressed with a 64 KiB limit: the frame
	// declares its size, so this fails before allocating anything.
	_, err := dec.AppendDecompressed(nil, compress.Zstd, payload, 64<<10)
	var ce *format.CorruptionError
	fmt.Println(errors.Is(err, format.ErrTooLarge), errors.As(err, &ce))
	fmt.Println(err)
	// Output:
	// true true
	// byte 5: format: size exceeds limit: zstd: decompressed size exceeds limit of 65536 bytes
}

func ExampleAppendLZ4FrameKafkaLegacy() {
	// A magic-0 message set as Kafka 0.8/0.9 compressed it: the header
	// checksum covers the magic number too (KAFKA-3160).
	frame := compress.AppendLZ4FrameKafkaLegacy(nil, []byte("old message set"))
	fmt.Printf("% x\n", frame[:7])
	var d compress.LZ4Decompressor
	out, err := d.AppendDecompressed(nil, frame, 100)
	fmt.Printf("%q %v\n", out, err)
	// Output:
	// 04 22 4d 18 60 40 1a
	// "old message set" <nil>
}

func ExampleSnappyCompressor() {
	var c compress.SnappyCompressor
	stream, _ := c.AppendCompressed(nil, []byte("hello"))
	// xerial framing: magic, version 1, minimum compatible version 1, then
	// a big-endian block length and a raw snappy block.
	fmt.Printf("% x\n", stream)
	// Output:
	// 82 53 4e 41 50 50 59 00 00 00 00 01 00 00 00 01 00 00 00 07 05 10 68 65 6c 6c 6f
}

func ExampleNewCompressor() {
	c, err := compress.NewCompressor(compress.Gzip, 9)
	if err != nil {
		panic(err)
	}
	d, _ := compress.NewDecompressor(compress.Gzip)
	payload, _ := c.AppendCompressed(nil, []byte("records"))
	out, err := d.AppendDecompressed(nil, payload, 100)
	fmt.Printf("% x | %s %v\n", payload[:10], out, err)
	// Output:
	// 1f 8b 08 00 00 00 00 00 00 ff | records <nil>
}
