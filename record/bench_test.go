package record_test

import (
	"hash/crc32"
	"testing"

	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/benchdata"
	"github.com/segkit/segkit/record"
)

var sinkInt int64

func encodedBatch(b *testing.B, s benchdata.Shape, codec compress.Codec) ([]byte, []record.Record) {
	recs := benchdata.Records(s)
	spec := record.NewBatchSpec(0, codec)
	var w record.Builder
	buf, err := w.AppendBatch(nil, &spec, recs)
	if err != nil {
		b.Fatal(err)
	}
	return buf, recs
}

func uncompressedSize(b *testing.B, s benchdata.Shape) int {
	buf, _ := encodedBatch(b, s, compress.None)
	return len(buf)
}

// BenchmarkDecode: ReadBatch (CRC check) plus full iteration of every
// record. SetBytes is the uncompressed batch size, so MB/s compare across
// codecs.
func BenchmarkDecode(b *testing.B) {
	for _, s := range benchdata.Shapes {
		for _, codec := range allCodecs {
			b.Run(s.Name+"/"+codec.String(), func(b *testing.B) {
				buf, _ := encodedBatch(b, s, codec)
				b.SetBytes(int64(uncompressedSize(b, s)))
				b.ReportAllocs()
				var it record.Iterator
				var r record.Record
				for b.Loop() {
					bt, _, err := record.ReadBatch(buf)
					if err != nil {
						b.Fatal(err)
					}
					it.Reset(&bt)
					for it.Next(&r) {
						sinkInt += int64(len(r.Value))
					}
					if it.Err() != nil {
						b.Fatal(it.Err())
					}
				}
			})
		}
	}
}

// BenchmarkCRC32C is the floor for uncompressed decode: the checksum over
// the same bytes with hash/crc32 alone.
func BenchmarkCRC32C(b *testing.B) {
	table := crc32.MakeTable(crc32.Castagnoli)
	for _, s := range benchdata.Shapes {
		b.Run(s.Name, func(b *testing.B) {
			buf, _ := encodedBatch(b, s, compress.None)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				sinkInt += int64(crc32.Checksum(buf[record.AttributesOffset:], table))
			}
		})
	}
}

// BenchmarkEncode: building a batch into a warm buffer.
func BenchmarkEncode(b *testing.B) {
	for _, s := range benchdata.Shapes {
		for _, codec := range allCodecs {
			b.Run(s.Name+"/"+codec.String(), func(b *testing.B) {
				recs := benchdata.Records(s)
				spec := record.NewBatchSpec(0, codec)
				var w record.Builder
				dst, err := w.AppendBatch(nil, &spec, recs)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(uncompressedSize(b, s)))
				b.ReportAllocs()
				for b.Loop() {
					dst, err = w.AppendBatch(dst[:0], &spec, recs)
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRawCodec measures the codec alone on the records section of the
// same batches, so that the compressed decode and encode figures above can
// be read as an overhead over raw (de)compression plus the uncompressed
// parse.
func BenchmarkRawCodec(b *testing.B) {
	for _, s := range benchdata.Shapes {
		plain, _ := encodedBatch(b, s, compress.None)
		payload := plain[record.RecordsOffset:]
		for _, codec := range allCodecs[1:] {
			var enc compress.Encoder
			comp, err := enc.AppendCompressed(nil, codec, payload)
			if err != nil {
				b.Fatal(err)
			}
			b.Run("compress/"+s.Name+"/"+codec.String(), func(b *testing.B) {
				b.SetBytes(int64(len(plain)))
				b.ReportAllocs()
				dst := make([]byte, 0, 2*len(payload)+1024)
				for b.Loop() {
					dst, _ = enc.AppendCompressed(dst[:0], codec, payload)
				}
			})
			b.Run("decompress/"+s.Name+"/"+codec.String(), func(b *testing.B) {
				var dec compress.Decoder
				b.SetBytes(int64(len(plain)))
				b.ReportAllocs()
				dst := make([]byte, 0, len(payload))
				for b.Loop() {
					dst, _ = dec.AppendDecompressed(dst[:0], codec, comp, 1<<30)
				}
			})
		}
	}
}
