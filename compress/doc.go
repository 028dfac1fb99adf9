// Package compress compresses and decompresses the records section of Kafka
// record batches (and the value of legacy wrapper messages) with the five
// codecs of attributes bits 0-2: none, gzip, snappy, lz4 and zstd, in the
// framings Kafka's Java client writes and reads. It is pure Go (on
// klauspost/compress and pierrec/lz4), starts no goroutines, and runs
// unchanged under GOOS=js and GOOS=wasip1.
//
//	var enc compress.Encoder // zero value: Kafka's default levels
//	var dec compress.Decoder
//	payload, err := enc.AppendCompressed(buf[:0], compress.LZ4, records)
//	records, err = dec.AppendDecompressed(out[:0], compress.LZ4, payload, maxBatchBytes)
//	if errors.Is(err, format.ErrTooLarge) { ... }
//
// Encoder and Decoder multiplex over one small interface pair, Compressor
// and Decompressor, implemented per codec (GzipCompressor, LZ4Decompressor,
// ...), which can be used on their own. Everything appends to dst, never
// modifies dst[:len(dst)] and never retains dst or src.
//
// # Concurrency
//
// Encoders, Decoders and the per-codec types keep reusable state and are not
// safe for concurrent use: use one per goroutine. (SnappyCompressor and
// SnappyDecompressor hold no state and are the exception.)
//
// # Limits and errors
//
// AppendDecompressed appends at most limit bytes. More is an error wrapping
// format.ErrTooLarge, detected from a size the input declares (zstd's
// Frame_Content_Size, lz4's content size, snappy's block lengths, stored
// lz4 blocks, raw and RLE zstd blocks) before anything is allocated, or
// otherwise while decompressing, never after allocating the whole output.
// Every decode error is a *format.CorruptionError whose Offset is the byte
// in src where the problem was found (0 when a library cannot tell) and
// which wraps format.ErrCompressed (and format.ErrTruncated for input that
// ends early) or format.ErrTooLarge. An unknown codec wraps format.ErrCodec.
// On error dst is returned unchanged. For any input, decompression
// allocates at most about limit plus a small multiple of len(src) (see
// Allocation); malformed input never panics (each decoder is fuzzed).
//
// # gzip
//
// One member as Java's GZIPOutputStream writes it (the header below, then
// deflate data, then CRC-32 and ISIZE, little-endian). The deflate bytes
// come from klauspost/compress at the same level and differ from zlib's.
// Decoding accepts several concatenated members (RFC 1952), checks each
// member's CRC-32 and size, and rejects anything else after the last one.
//
//	offset  width  field   value we write
//	0       2      ID1 ID2 1f 8b
//	2       1      CM      08 (deflate)
//	3       1      FLG     00 (no name, comment, extra or header CRC)
//	4       4      MTIME   00000000
//	8       1      XFL     00 (Java writes 0 at every level)
//	9       1      OS      ff (unknown, as JDK 16 and later)
//
// # snappy
//
// Kafka's Java client uses snappy-java's SnappyOutputStream: a 16-byte xerial
// header, then, for each block of at most 32 KiB of input, a big-endian
// int32 length and a raw snappy block. Empty input is the header alone. We
// write exactly this framing (block contents from klauspost's encoder,
// valid snappy but not snappy-java's bytes).
//
//	offset  width  field                       value
//	0       8      magic                       82 53 4e 41 50 50 59 00 ("\x82SNAPPY\0")
//	8       4      version (int32 BE)          1
//	12      4      min compatible (int32 BE)   1
//	16      4      block length n (int32 BE)   length of the raw block that follows
//	20      n      raw snappy block            uvarint decoded length, then elements
//	...            (length, block) repeated until the end of input
//
// Decoding accepts this framing, recognised as snappy-java does by at least
// 16 bytes starting with the magic (version 0 is refused, as snappy-java
// refuses it), and a raw snappy block otherwise. Every chunk length is
// checked against the remaining input and every block's declared length
// against the limit before anything is allocated. By default blocks decode
// with klauspost's S2 decoder, twice as fast as the standard one; it also
// accepts S2's repeat-offset copies, which are invalid snappy that no Kafka
// client writes (Decoder.StrictSnappy selects the standard decoder).
//
// AppendSnappyBlock writes a raw block. Both writers give the encoder at
// most 64 KiB per call: klauspost's snappy encoder recurses once per 60
// bytes of a long match, and in a browser a 2 MiB run encoded in one call
// overflows the JavaScript engine's stack in a way recover cannot catch. A
// raw block is therefore the concatenation of the elements of each 64 KiB
// chunk after one length header, which every snappy decoder reads.
//
// # lz4
//
// Kafka uses the LZ4 frame format (KafkaLZ4BlockOutputStream, now
// Lz4BlockOutputStream), writing only part of it:
//
//	offset  width  field            Kafka writes
//	0       4      magic (LE)       04 22 4d 18 (0x184D2204)
//	4       1      FLG              60: version 01, block independence 1,
//	                                no block checksum, no content size,
//	                                no content checksum, no dictionary ID
//	5       1      BD               40: block maximum size 4 (64 KiB)
//	(6      8      content size     only if FLG bit 3; Kafka never writes it)
//	6       1      HC               (xxHash32(FLG BD) >> 8) & 0xff = 82
//	7       4      block size (LE)  bit 31 set: the block is stored as is
//	11      n      block            at most 64 KiB of input, compressed
//	                                independently (lz4 block format)
//	(+n     4      block checksum   only if FLG bit 4)
//	...            blocks repeated
//	        4      end mark         00000000
//	(       4      content checksum only if FLG bit 2: xxHash32 of the output)
//
// We write this exactly. A block is stored when compressing does not shrink
// it, as Java does, and at the default level blocks are compressed with
// pierrec/lz4's CompressorCCompat, whose output is the C library's (which
// lz4-java calls), so our frames are byte-identical to the Java client's:
// every LZ4 batch in ../shared/kafka-real re-encodes to the same bytes.
//
// KAFKA-3160: before Kafka 0.10, the header checksum was computed over the
// magic number as well as the descriptor, xxHash32(04 22 4d 18 FLG BD ...),
// giving 1a instead of 82 for Kafka's descriptor. Kafka still writes and
// accepts that form for magic-0 message sets; every other Go LZ4 reader
// rejects it. Decoding here accepts both forms always (the codec does not
// know the magic). AppendLZ4FrameKafkaLegacy, LZ4Compressor's
// LegacyHeaderChecksum and Encoder's LZ4LegacyHeaderChecksum write it, to
// reproduce magic-0 data as old brokers stored it.
//
// Decoding is our own frame parser around lz4.UncompressBlock, with Kafka's
// restrictions (version 1, independent blocks, no dictionary, reserved bits
// clear) and everything else of the format: content size (used to size the
// output exactly, and checked), block and content checksums (verified,
// where Java skips the content checksum), the 0x80000000 end mark Java also
// accepts, concatenated frames and skippable frames. Each block size is
// checked against the frame's maximum and the remaining input, stored
// blocks and the declared content size against the limit, all before
// decompressing.
//
// # zstd
//
// One frame per call from klauspost's encoder with concurrency 1, declaring
// its content size and, as zstd-jni's default, carrying no checksum. Kafka
// levels map to klauspost's four speeds (zstd.EncoderLevelFromZstd).
//
//	offset  width   field
//	0       4       magic (LE)              28 b5 2f fd
//	4       1       Frame_Header_Descriptor size flag, single segment, checksum, dict ID
//	        0-1     Window_Descriptor       absent in single-segment frames
//	        0-4     Dictionary_ID
//	        0-8     Frame_Content_Size      absent in zstd-jni's streamed frames
//	        3       block header (LE)       last bit, type (raw, RLE, compressed), size
//	        ...     blocks, each decoding to at most min(window, 128 KiB)
//	        0-4     Content_Checksum
//
// Decoding first walks every frame and block header itself: a declared size
// beyond the limit, or raw and RLE blocks that already add up to more, fail
// at once; otherwise the output is bounded by the declared sizes, or by the
// blocks' maximum sizes, dst grows once to that bound, and DecodeAll
// (concurrency 1, capped to dst's capacity) decodes in place. Java's
// zstd-jni streams (no declared size, many blocks), concatenated and
// skippable frames all decode. A frame without a declared size whose bound
// exceeds the limit is decoded by the streaming decoder instead, reading one
// byte past the limit at most; if its window is larger than the limit plus a
// block, it is decoded from a copy whose window descriptor is lowered to
// that (which changes nothing for output within the limit), so the
// decoder's buffer stays near the limit whatever the header claims; that
// buffer is kept for reuse when it is at most 8 MiB. This path is taken
// only when the output may be within a few blocks of the limit (Java's
// frames fill 128 KiB blocks, so their bound is within 128 KiB of the
// truth), or for writers that flush small blocks.
//
// # Allocation
//
// Every codec compresses and decompresses without allocating once its state
// is warm and dst has room (TestXAllocs asserts 0 allocs/op for each codec,
// both directions, through Encoder, Decoder and the per-codec types, and
// TestXAllocsForeign for other writers' frames: zstd streams without a
// declared size, pierrec/lz4's 4 MiB blocks, gzip members, raw snappy). State
// is created on first use: a gzip writer or reader (klauspost's flate
// tables), an lz4 compressor's hash tables, a zstd encoder or decoder.
//
// When dst is too small, decoders grow it once to a size taken from the
// input: exactly, where the input declares it (zstd and lz4 content sizes,
// snappy lengths); from the last gzip member's ISIZE (a hint, capped by the
// limit and deflate's 1032:1 ratio), then geometrically; for lz4 frames
// without a content size, full blocks for all but each frame's last block,
// which is decompressed in place if dst has room, otherwise into a scratch
// buffer of at most min(block maximum, 255 × its compressed size) kept for
// reuse; for zstd frames without a content size, the sum of the blocks'
// maximum sizes (within 128 KiB of the truth for Kafka's data, at most the
// limit).
//
// On a decompression bomb (TestBombs, limit 4 MiB, inputs inflating to 1
// GiB) declared sizes fail before allocating; gzip and lz4 stop after
// filling the limit (about 1× the limit allocated, plus one lz4 block of
// scratch); the zstd streaming path holds the output and the decoder's
// window, about 2.2× the limit at worst.
//
// # WASM
//
// Nothing here uses goroutines, cgo or assembly that the wasm builds lack
// (the libraries fall back to pure Go). The whole test suite runs under
// Node:
//
//	GOOS=js GOARCH=wasm go test -exec="$(go env GOROOT)/lib/wasm/go_js_wasm_exec" ./compress/
package compress
