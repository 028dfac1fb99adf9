// Package fuzz holds segkit's cross-package fuzz targets. It has no API: the
// targets and their harness are in the package's test files, and the
// campaign runner is the command fuzz/campaign. docs/fuzzing.md
// says how to run them and what each checks; this comment is the
// specification of the input encodings, which the committed corpora depend
// on. Keep old inputs meaningful: give new meanings to reserved bits or new
// values only.
//
// # FuzzLogOps
//
// An input is a program: a 2-byte header, then operations of 4 bytes
// (opcode, a, b, c). Missing header bytes read as 0, a trailing partial
// operation is ignored, and at most 64 operations are read.
//
//	offset  size  field
//	     0     1  cfg0: bits 0-1 segment.bytes 512, 1024, 2048, 16384
//	                    bits 2-3 index.interval.bytes 0, 128, 512, 4096
//	                    bit 4    message.timestamp.type=LogAppendTime
//	                    bit 5    message.timestamp.after.max.ms unlimited (else 1 h)
//	                    bit 6    segment.index.bytes 64 (else 4096): rolls on a full index
//	                    bit 7    preallocate=true
//	     1     1  cfg1: bits 0-1 flush.messages: none, 1, 4, none
//	                    bit 2    file.delete.delay.ms 0 (else 60000)
//	                    bit 3    segment.ms 60000 (else 7 days)
//	                    bits 4-7 reserved
//	     2   4*n  operations
//
// The opcode is taken modulo 16. u16 is b<<8|c. The clock starts at
// 1700000000000 ms and moves only when an operation says so.
//
//	 0, 1  append     a leader append of one batch (Log.Append): a bits 0-2
//	                  records-1 (1-8), bits 3-5 codec (5-7: none), bits 6-7 value
//	                  size (0-8, 8-24, 24-48 bytes, null); b the timestamp mode
//	                  (below); c bits 0-1 producer (none, idempotent 1,
//	                  transactional 2, transactional 3), bit 2 new leader epoch,
//	                  bit 3 headers, bit 4 null keys, c>>4 == 15: an empty batch
//	 2     marker     a COMMIT (a bit 0 clear) or ABORT control batch for producer
//	                  2, 3, 1 or 9 (a bits 1-2), coordinator epoch b, stamped
//	                  clock+c-128
//	 3     follower   AppendAsFollower of 1-3 batches (a bits 0-1) carrying their
//	                  offsets, from the log end plus a gap of 0, 0, 1 or 7 (a bits
//	                  2-3), codec a bits 4-6; a bit 7: offsets below the log end
//	                  (must be refused); b timestamp mode; c two bits of records-1
//	                  per batch, bit 6 a gap between batches
//	 4     roll       Log.Roll
//	 5     flush      Log.Flush
//	 6     clock      advance u16 × (1 ms, 1 s, 1 min, 1 h)[a&3], plus 30 days if a bit 2
//	 7     retention  advance b × (1 s, 1 min, 1 h, 1 day)[c&3], then retention.Plan and
//	                  Apply with retention.ms (-1, 0, 1 s, 1 min, 1 h, 1 day, 7 days,
//	                  1 ms)[a&7] and retention.bytes (-1, 0, 100, 500, 1000, 2000,
//	                  5000, 20000)[a>>3&7], cleanup.policy compact only if a bit 6
//	 8     crash      crash: UnsyncedDataPercent (0, 50, 100, b%101)[a&3], torn
//	                  writes if a bit 2, repair.Recover before Open if a bit 3; with
//	                  a bit 4 the crash is armed instead: it happens after c%48
//	                  mutating file operations of the next operation; the crash image
//	                  is seeded with b<<8|c
//	 9     reopen     Close, check the files (a bit 0: and inspect.Verify),
//	                  repair.Recover if a bit 1, Open
//	10     truncate   TruncateTo(log start + u16 % (log end - log start + 2)), or with
//	                  a bit 0 TruncateTo(u16 % (log end + 2)), below the log start too
//	11     read       Read(log start - 1 + u16 % (log end - log start + 3)) with max
//	                  bytes (1, 200, 1000, 64 KiB)[a&3], NoMinOneMessage if a bit 2,
//	                  isolation (log end, high watermark, committed)[(a>>3)%3]
//	12     lookup     OffsetForTimestamp: a&7 0-2 a record's timestamp, +1, -1 (record
//	                  u16 % records); 3 clock + int16(u16) s; 4-7 the special
//	                  timestamps -1, -2, -3, -4 (-5 for 7 with b bit 0)
//	13     delete     IncrementLogStartOffset(log start - 1 + u16 % (hw - log start + 3))
//	14     hw         SetHighWatermark(log start + u16 % (log end - log start + 1))
//	15     house      MaybeFlush if a bit 0, then DeletePendingSegments
//
// Timestamp modes (b): bits 0-2 the mode, d = (b>>3)+1: 0 the clock; 1
// ascending by d ms; 2 none (-1); 3 descending by d s; 4 d×30 days in the
// past; 5 d hours in the future (refused beyond message.timestamp.after.max.ms);
// 6 none and clock+i alternating; 7 d minutes in the past.
//
// # FuzzRecoverCorrupt
//
// An input is a base partition, then a recipe of up to 16 corruption steps of
// 5 bytes (kind, file, position u16, argument).
//
//	base, byte 0 bit 7 clear: a generated partition from bytes 0-3
//	  byte 0  bits 0-1 segment.bytes 300, 600, 1200, 4096; bit 2 index.interval.bytes
//	          0 (else 128); bits 3-4 the state it is left in: closed cleanly;
//	          closed, marker removed; closed, marker and recovery point removed;
//	          a crash image with everything synced
//	  byte 1  batches: 1 + b%32
//	  byte 2  codecs (bit i: codec i mod 5), 0: none only
//	  byte 3  bit 0 transactions (one abort in two); bit 1 follower batches;
//	          bits 2-3 records per batch
//	base, byte 0 = 0x80: real files: uvarint count, then per file a uvarint
//	  name length, the name ("name" gives the partition directory's name,
//	  "p/<file>" a partition file, "d/<file>" a log-directory file), a
//	  uvarint data length and the data
//
// Corruption kinds (kind % 10), on file "file" of the sorted list of the
// partition's and log directory's files:
//
//	0 flip      xor the byte at position with arg|1
//	1 truncate  cut the file at position
//	2 zero      zero arg+1 bytes from position
//	3 garbage   append arg+1 pseudo-random bytes
//	4 delete    remove the file
//	5 junk      create a leftover or junk file (.deleted, .swap, .cleaned, a
//	            checkpoint, the clean-shutdown marker, odd names; arg chooses)
//	            of position%64 random bytes
//	6 marker    remove (arg even) or write the clean-shutdown marker
//	7 set-byte  set the byte at position to arg
//	8 copy      append arg+1 bytes copied from position of the same file
//	9 checkpoint set the recovery point (arg bit 0: the log start offset)
//	            checkpoint to position
//
// # FuzzDumpJSON
//
// An input is a mode byte and a file.
//
//	mode  bits 0-1  kind: 0 .log, 1 .index, 2 .timeindex, 3 .txnindex
//	      bit 2     --deep (a line per record)
//	      bit 3     --print-data
//	      bit 4     also the text dump
//	      bit 5     --verify-index (index kinds)
//	.log kind       the rest of the input is the .log
//	index kinds     a 2-byte big-endian length n, n bytes of .log, then the
//	                index file
package fuzz
