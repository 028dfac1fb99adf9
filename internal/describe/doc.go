// Package describe turns the entries and index files of a Kafka partition
// into the views segviz shows them as, once, for every renderer: the text
// of `segviz dump` (Kafka's kafka-dump-log, line for line), its JSON lines
// (package dumplog) and the visualiser's data (package viz, natively and in
// the browser). A renderer picks the fields it prints and how; what a field
// means, and how it is found in the bytes, is decided here.
//
// The views are plain values without JSON tags:
//
//   - Batch: a log entry's header fields and attributes (NewBatch), a v2
//     batch or a legacy message in the same terms; a legacy wrapper's count
//     and first offset come from its inner messages (Walker.Wrapper).
//   - Record: one record of an entry with its headers, its sequence and, in
//     a control batch, its control type and transaction marker (Walker's
//     Reset, Next and Record).
//   - Message: a legacy message's own header, or those of a wrapper's inner
//     messages (Walker.Messages), which the record iterators do not show.
//   - IndexEntry: an entry of an offset or a time index, read through Index,
//     which opens either kind behind one type.
//   - Layout: the fields an entry's bytes encode, with their positions, for
//     the visualiser's byte map (LayoutEntry).
//
// PeekEntry reads an entry's header without checking it, so that a
// complete entry whose checksum fails can still be described, as Kafka's
// tool lists it (isvalid: false).
//
// Use:
//
//	var w describe.Walker
//	b := describe.NewBatch(e)
//	if err := w.Wrapper(&b, e); err != nil { ... }
//	for w.Reset(e); w.Next(); {
//		r := w.Record()
//		fmt.Println(r.Offset, r.KeySize, r.Sequence)
//	}
//	if err := w.Err(); err != nil { ... }
//
// The legacy field offsets are package record's (record.LegacyCRCOffset
// and the others of record/legacylayout.go); nothing here hard-codes a
// byte position.
//
// A Walker is not safe for concurrent use; the values it returns alias its
// buffers and are stale after its next call. An Index may be read
// concurrently, as the index types beneath it.
package describe
