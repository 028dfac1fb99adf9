package record

// EntryIterator yields the records of one Entry of any magic: a v2 batch
// through an Iterator, a legacy message or compressed wrapper through a
// LegacyIterator. It is what a tool reading a whole .log uses, where old
// segments can still hold v0/v1 message sets:
//
//	var it record.EntryIterator
//	var r record.Record
//	for s.Next() {
//		e := s.Entry()
//		it.Reset(e)
//		for it.Next(&r) {
//			use(r.Offset, r.Key, r.Value)
//		}
//		if err := it.Err(); err != nil { ... }
//	}
//
// The zero value is ready; both iterators keep their buffers across
// entries. An EntryIterator is not safe for concurrent use.
type EntryIterator struct {
	// V2 and Legacy are the iterators used; set their MaxDecompressed to
	// bound decompression.
	V2     Iterator
	Legacy LegacyIterator
	legacy bool
}

// Reset starts iterating over the records of e.
func (it *EntryIterator) Reset(e *Entry) {
	it.legacy = e.Magic != MagicV2
	if it.legacy {
		it.Legacy.Reset(&e.Legacy)
	} else {
		it.V2.Reset(&e.Batch)
	}
}

// Next fills r with the next record and reports whether there was one.
func (it *EntryIterator) Next(r *Record) bool {
	if it.legacy {
		return it.Legacy.Next(r)
	}
	return it.V2.Next(r)
}

// Err returns the error that stopped Next, if any.
func (it *EntryIterator) Err() error {
	if it.legacy {
		return it.Legacy.Err()
	}
	return it.V2.Err()
}
