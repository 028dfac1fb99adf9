package interop

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segkit/segkit/compress"
	"github.com/segkit/segkit/internal/benchdata"
	"github.com/segkit/segkit/record"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Comparative benchmarks: the same batches (benchdata.Shapes, every
// codec) through segkit, franz-go, sarama and kafka-go in one run. Run them
// and print the ratio table with
//
//	go run ./cmd/ratios                 # interleaved rounds, with spread
//
// (or go test -run '^$' -bench . -count 5 | go run ./cmd/ratios -runs 0).
// SetBytes is the uncompressed batch size everywhere, so MB/s compare
// across codecs and libraries. Decoding starts from the same bytes for every
// library: the batch as segkit writes it (which is how Kafka's Java client
// writes it; the differential tests show every library reads it). Each
// decoder checks the CRC and visits every record, touching key, value and
// headers:
//
//   - segkit: record.ReadBatch (CRC-32C) and an Iterator.
//   - franz: kgo.ProcessFetchPartition, kgo's whole per-partition consume
//     path (CRC check on by default, kgo.DefaultDecompressor, records).
//   - kmsg: the lower-level franz-go path a kmsg user writes:
//     kmsg.RecordBatch.ReadFrom, a hash/crc32 check (kmsg checks none),
//     kgo.DefaultDecompressor, kmsg.Record.ReadFrom per record.
//   - sarama: RecordBatch.decode through sarama's decode() (CRC checked by
//     its crc32Field), as its consumer runs it for each batch.
//   - kafkago: protocol.RecordSet.ReadFrom (CRC computed while reading),
//     then ReadRecord over the records; key and value are page references
//     whose Len is read and which are then closed, as kafka-go documents.
//
// Encoding builds the batch from each library's own record type, prepared
// outside the timed loop:
//
//   - segkit: Builder.AppendBatch into a warm dst.
//   - franz: FranzEncoder (kgo's sink.go appendTo restated over kbin, and
//     kgo.DefaultCompressor) into a warm dst. franz6 is the same with gzip
//     at level 6, segkit's (Java's default), instead of kgo's default 5.
//   - sarama: encode() of a RecordBatch (sarama sizes and allocates the
//     output itself; it has no way to append to a caller's buffer).
//   - kafkago: protocol.RecordSet.WriteTo into a warm bytes.Buffer; its
//     records carry key and value readers that writing consumes, so they
//     are rebuilt (protocol.NewBytes) in the loop, as its API requires.
//
// BenchmarkCRC32C is hash/crc32's Castagnoli over the uncompressed batch's
// bytes [21, end): the floor of a decode that checks the CRC.
// BenchmarkRaw measures segkit's compress package alone on the records
// section, the reference for the compressed targets.

var sink int

type benchInput struct {
	shape   benchdata.Shape
	codec   compress.Codec
	batch   Batch
	raw     []byte // segkit's encoding
	plain   []byte // segkit's encoding, uncompressed
	recs    []record.Record
	payload []byte // records section, uncompressed
}

func newBenchInput(b *testing.B, s benchdata.Shape, codec compress.Codec) *benchInput {
	in := &benchInput{shape: s, codec: codec, recs: benchdata.Records(s)}
	var recs []Record
	for _, r := range in.recs {
		recs = append(recs, Record{Timestamp: r.Timestamp, Key: r.Key, Value: r.Value})
	}
	in.batch = NewBatch(0, codec, recs)
	var w record.Builder
	var err error
	if in.raw, err = SegkitAppend(&w, nil, &in.batch); err != nil {
		b.Fatal(err)
	}
	plain := in.batch
	plain.Codec = compress.None
	if in.plain, err = SegkitAppend(&w, nil, &plain); err != nil {
		b.Fatal(err)
	}
	in.payload = in.plain[record.RecordsOffset:]
	in.recs = in.batch.SegkitRecords()
	return in
}

func forEachInput(b *testing.B, f func(b *testing.B, in *benchInput)) {
	for _, s := range benchdata.Shapes {
		for _, codec := range allCodecs {
			b.Run(s.Name+"/"+codec.String(), func(b *testing.B) {
				in := newBenchInput(b, s, codec)
				b.SetBytes(int64(len(in.plain)))
				b.ReportAllocs()
				f(b, in)
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	b.Run("segkit", func(b *testing.B) {
		forEachInput(b, func(b *testing.B, in *benchInput) {
			var it record.Iterator
			var r record.Record
			settle()
			for b.Loop() {
				bt, _, err := record.ReadBatch(in.raw)
				if err != nil {
					b.Fatal(err)
				}
				it.Reset(&bt)
				for it.Next(&r) {
					sink += len(r.Key) + len(r.Value) + len(r.Headers)
				}
				if err := it.Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("franz", func(b *testing.B) {
		forEachInput(b, func(b *testing.B, in *benchInput) {
			dec := kgo.DefaultDecompressor()
			rp := kmsg.FetchResponseTopicPartition{HighWatermark: 1 << 62, LastStableOffset: 1 << 62}
			settle()
			for b.Loop() {
				rp.RecordBatches = in.raw
				fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{}, &rp, dec, nil)
				if fp.Err != nil || len(fp.Records) != in.shape.Count {
					b.Fatal(fp.Err, len(fp.Records))
				}
				for _, r := range fp.Records {
					sink += len(r.Key) + len(r.Value) + len(r.Headers)
				}
			}
		})
	})
	b.Run("kmsg", func(b *testing.B) {
		forEachInput(b, func(b *testing.B, in *benchInput) {
			dec := kgo.DefaultDecompressor()
			var rb kmsg.RecordBatch
			var rec kmsg.Record
			settle()
			for b.Loop() {
				if err := rb.ReadFrom(in.raw); err != nil {
					b.Fatal(err)
				}
				if uint32(rb.CRC) != crc32.Checksum(in.raw[21:], castagnoli) {
					b.Fatal("crc")
				}
				recs, err := dec.Decompress(rb.Records, kgo.CompressionCodecType(rb.Attributes&7))
				if err != nil {
					b.Fatal(err)
				}
				for range rb.NumRecords {
					length, n := varint(recs)
					if n <= 0 || int(length)+n > len(recs) {
						b.Fatal("record length")
					}
					if err := rec.ReadFrom(recs[:n+int(length)]); err != nil {
						b.Fatal(err)
					}
					recs = recs[n+int(length):]
					sink += len(rec.Key) + len(rec.Value) + len(rec.Headers)
				}
			}
		})
	})
	b.Run("sarama", func(b *testing.B) {
		forEachInput(b, func(b *testing.B, in *benchInput) {
			settle()
			for b.Loop() {
				var rb sarama.RecordBatch
				if err := SaramaDecodeRecordBatch(in.raw, &rb); err != nil {
					b.Fatal(err)
				}
				for _, r := range rb.Records {
					sink += len(r.Key) + len(r.Value) + len(r.Headers)
				}
			}
		})
	})
	b.Run("kafkago", func(b *testing.B) {
		forEachInput(b, func(b *testing.B, in *benchInput) {
			set := KafkaGoRecordSet(in.raw)
			var buf bytes.Buffer
			settle()
			for b.Loop() {
				buf.Reset()
				buf.Write(set)
				var rs protocol.RecordSet
				if _, err := rs.ReadFrom(&buf); err != nil {
					b.Fatal(err)
				}
				for {
					r, err := rs.Records.ReadRecord()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					if r.Key != nil {
						sink += r.Key.Len()
						r.Key.Close()
					}
					if r.Value != nil {
						sink += r.Value.Len()
						r.Value.Close()
					}
					sink += len(r.Headers)
				}
			}
		})
	})
}

// varint is a zigzag varint decoder for the kmsg benchmark's record
// framing (kmsg.Record.ReadFrom needs the record's own bytes).
func varint(b []byte) (int32, int) {
	var u uint32
	for i := 0; i < 5 && i < len(b); i++ {
		u |= uint32(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return int32(u>>1) ^ -int32(u&1), i + 1
		}
	}
	return 0, 0
}

func BenchmarkEncode(b *testing.B) {
	b.Run("segkit", func(b *testing.B) {
		forEachInput(b, func(b *testing.B, in *benchInput) {
			var w record.Builder
			spec := in.batch.Spec()
			spec.UseRecordOffsets = false // positional offsets, as a producer builds batches
			dst, err := w.AppendBatch(nil, &spec, in.recs)
			if err != nil {
				b.Fatal(err)
			}
			settle()
			for b.Loop() {
				if dst, err = w.AppendBatch(dst[:0], &spec, in.recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(dst)), "B/batch")
		})
	})
	b.Run("franz", func(b *testing.B) {
		forEachInput(b, func(b *testing.B, in *benchInput) {
			var e FranzEncoder
			dst, err := e.AppendBatch(nil, &in.batch)
			if err != nil {
				b.Fatal(err)
			}
			settle()
			for b.Loop() {
				if dst, err = e.AppendBatch(dst[:0], &in.batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(dst)), "B/batch")
		})
	})
	// franz-go at segkit's gzip level, 6 (Java's default: the bytes Kafka's
	// Java client writes) instead of its own default, klauspost's 5: the
	// same work, for a like-for-like gzip comparison.
	b.Run("franz6", func(b *testing.B) {
		for _, s := range benchdata.Shapes {
			b.Run(s.Name+"/gzip", func(b *testing.B) {
				in := newBenchInput(b, s, compress.Gzip)
				b.SetBytes(int64(len(in.plain)))
				b.ReportAllocs()
				comp, err := kgo.DefaultCompressor(kgo.GzipCompression().WithLevel(6))
				if err != nil {
					b.Fatal(err)
				}
				var e FranzEncoder
				e.comps[compress.Gzip] = comp
				dst, err := e.AppendBatch(nil, &in.batch)
				if err != nil {
					b.Fatal(err)
				}
				settle()
				for b.Loop() {
					if dst, err = e.AppendBatch(dst[:0], &in.batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(dst)), "B/batch")
			})
		}
	})
	b.Run("sarama", func(b *testing.B) {
		forEachInput(b, func(b *testing.B, in *benchInput) {
			tmpl := *SaramaRecordBatch(&in.batch)
			settle()
			for b.Loop() {
				rb := tmpl // a fresh batch: sarama caches the compressed records in it
				out, err := SaramaEncodeRecordBatch(&rb)
				if err != nil {
					b.Fatal(err)
				}
				sink += len(out)
			}
		})
	})
	b.Run("kafkago", func(b *testing.B) {
		forEachInput(b, func(b *testing.B, in *benchInput) {
			var buf bytes.Buffer
			recs := make([]protocol.Record, len(in.batch.Records))
			settle()
			for b.Loop() {
				for i, r := range in.batch.Records {
					recs[i] = protocol.Record{Offset: r.Offset, Time: time.UnixMilli(r.Timestamp),
						Key: protocol.NewBytes(r.Key), Value: protocol.NewBytes(r.Value)}
				}
				out, err := KafkaGoEncode(&buf, &in.batch, recs)
				if err != nil {
					b.Fatal(err)
				}
				sink += len(out)
			}
		})
	})
}

// settle finishes the garbage collection that a benchmark's set-up
// started, before its loop: a cycle still marking while the loop runs adds
// its work (write barriers, scanning) to the loop's, unevenly between the
// two callgrind runs whose difference ratios -instr takes. With zstd's
// tables made during set-up, segkit's 16 x 1 KiB zstd encode counted 21%
// more instructions than the raw compression of the same bytes, in the
// same time.
func settle() { runtime.GC() }

func BenchmarkCRC32C(b *testing.B) {
	for _, s := range benchdata.Shapes {
		b.Run(s.Name, func(b *testing.B) {
			in := newBenchInput(b, s, compress.None)
			b.SetBytes(int64(len(in.plain)))
			b.ReportAllocs()
			settle()
			for b.Loop() {
				sink += int(crc32.Checksum(in.plain[record.AttributesOffset:], castagnoli))
			}
		})
	}
}

// BenchmarkRaw: segkit's compress package alone on the records section
// (decompress the payload of the compressed batch; compress the
// uncompressed records section), into warm buffers.
func BenchmarkRaw(b *testing.B) {
	for _, op := range []string{"decompress", "compress"} {
		b.Run(op, func(b *testing.B) {
			for _, s := range benchdata.Shapes {
				for _, codec := range allCodecs[1:] {
					b.Run(s.Name+"/"+codec.String(), func(b *testing.B) {
						in := newBenchInput(b, s, codec)
						b.SetBytes(int64(len(in.plain)))
						b.ReportAllocs()
						var dec compress.Decoder
						var enc compress.Encoder
						src := in.raw[record.RecordsOffset:]
						dst := make([]byte, 0, 2*len(in.payload)+1024)
						run := func() {
							var err error
							if op == "decompress" {
								dst, err = dec.AppendDecompressed(dst[:0], codec, src, 1<<28)
							} else {
								dst, err = enc.AppendCompressed(dst[:0], codec, in.payload)
							}
							if err != nil {
								b.Fatal(err)
							}
						}
						// The codec's state (zstd's tables: megabytes) is
						// made on first use: before the loop, not in it.
						run()
						settle()
						for b.Loop() {
							run()
						}
					})
				}
			}
		})
	}
}
