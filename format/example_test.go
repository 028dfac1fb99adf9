package format_test

import (
	"errors"
	"fmt"

	"github.com/segkit/segkit/format"
)

// Kafka's varints are zigzag-encoded: -1 is one byte, 0x01.
func ExampleAppendVarint() {
	var b []byte
	for _, v := range []int32{0, -1, 1, 300} {
		b = format.AppendVarint(b, v)
	}
	fmt.Printf("% x\n", b)
	for len(b) > 0 {
		v, n := format.Varint(b)
		fmt.Print(v, " ")
		b = b[n:]
	}
	fmt.Println()
	// Output:
	// 00 01 02 d8 04
	// 0 -1 1 300
}

// A v2 batch's CRC is CRC-32C (Castagnoli) over its bytes from the
// attributes on.
func ExampleCRC32C() {
	fmt.Printf("%08x\n", format.CRC32C([]byte("123456789")))
	// Output:
	// e3069283
}

// Decoders return a *CorruptionError naming the file and byte position,
// which matches the sentinel that says what kind of damage it is.
func ExampleCorruptionError() {
	err := format.Corruptf("", 8, format.ErrTruncated, "record runs past its batch")
	err2 := format.WithPath(err, "00000000000000000000.log", 4096)
	var ce *format.CorruptionError
	fmt.Println(errors.As(err2, &ce), ce.Path, ce.Offset, errors.Is(err2, format.ErrTruncated))
	// Output:
	// true 00000000000000000000.log 4104 true
}
