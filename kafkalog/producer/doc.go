// Package producer keeps the producer state of a partition, as Apache
// Kafka's ProducerStateManager does, and reads and writes the producer
// snapshot files (NNNNNNNNNNNNNNNNNNNN.snapshot) that persist it, byte for
// byte as a broker writes them.
//
// The state records, for every producer id seen in the log, its epoch,
// its last batches (for sequence checks and duplicate detection), the
// epoch of the transaction coordinator that wrote its last marker, and its
// open transaction, if any. From the transactions it derives the last
// stable offset that read_committed consumers stop at, and the aborted
// transactions that go into the transaction index.
//
// # Snapshot format
//
// ProducerSnapshot.json, version 1, not flexible. All integers are
// big-endian; the CRC-32C covers bytes [6, end).
//
//	offset  size  field
//	     0     2  version (1)
//	     2     4  crc (CRC-32C of [6, end))
//	     6     4  entry count
//	    10  46*n  entries:
//
//	offset  size  entry field
//	     0     8  producerId
//	     8     2  epoch
//	    10     4  lastSequence (-1: no batch retained)
//	    14     8  lastOffset (-1: no batch retained)
//	    22     4  offsetDelta (lastOffset - first offset of the last batch)
//	    26     8  timestamp (of the last batch or marker)
//	    34     4  coordinatorEpoch (-1: none)
//	    38     8  currentTxnFirstOffset (-1: no open transaction)
//
// An empty snapshot is 10 bytes. The file is named after the offset the
// snapshot was taken at (the log end offset then, exclusive), printed as
// 20 digits. Kafka writes it in place and fsyncs it (no temporary file);
// the CRC is what catches a torn write, and a snapshot that fails to
// decode is deleted and the next older one used. Kafka 3.5 and later
// write the entries in the iteration order of a java.util.HashMap;
// State.Snapshot reproduces it (see Snapshot).
//
// # Use
//
// Recovery replays each v2 batch of the log:
//
//	st := producer.NewState()
//	info, err := producer.FromBatch(&batch, &it)
//	txn, lso, err := st.Replay(info)
//	if txn != nil && txn.IsAborted {
//		// append {txn.ProducerID, txn.FirstOffset, txn.LastOffset, lso} to the .txnindex
//	}
//	err = producer.WriteSnapshot(fsys, dir, st.MapEndOffset(), st.Snapshot())
//
// The append path calls Update, LastStableOffset, CompleteTxn and
// UpdateMapEndOffset itself, in that order (Replay is the four together).
//
// # Errors
//
// DecodeSnapshot and ReadSnapshot return *format.CorruptionError wrapping
// format.ErrTruncated, format.ErrInvalid or format.ErrCRC. The state
// machine returns errors wrapping ErrInvalidBatch, ErrInvalidTxnState or
// ErrTxnNotStarted, and then leaves the state unchanged.
//
// # Differences from Kafka
//
//   - Update applies batches as Kafka applies replicated ones: an older
//     epoch or an unexpected sequence is accepted (Kafka logs a warning).
//     The client-side checks of the leader's append path are not here.
//   - Load keeps expired producers; RemoveExpiredProducers drops them.
//   - WriteSnapshot truncates an existing file before writing; Kafka's
//     FileChannel.open(CREATE, WRITE) does not.
//
// # Concurrency
//
// A State is not safe for concurrent use: the log that owns it serialises
// access. The snapshot functions are safe for concurrent use on different
// files.
package producer
