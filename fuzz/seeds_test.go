package fuzz

// Hand-written seeds, added with f.Add and committed by TestGenerateSeeds
// as edge-*. Each exercises one feature the random corpus may take long to
// reach; doc.go explains the bytes.

// edgePrograms are FuzzLogOps programs.
func edgePrograms() []program {
	ap := func(a, b, c byte) op { return op{opAppend, a, b, c} }
	var (
		roll     = op{opRoll, 0, 0, 0}
		flush    = op{opFlush, 0, 0, 0}
		reopen   = op{opReopen, 1, 0, 0} // with inspect.Verify
		readAll  = op{opRead, 3, 0, 1}   // from the log start, 64 KiB
		crash    = func(a byte) op { return op{opCrash, a, 7, 3} }
		lookup   = func(a, b, c byte) op { return op{opLookup, a, b, c} }
		clock    = func(a, b, c byte) op { return op{opClock, a, b, c} }
		retain   = func(a, b, c byte) op { return op{opRetention, a, b, c} }
		truncate = func(a byte, u uint16) op { return op{opTruncate, a, byte(u >> 8), byte(u)} }
	)
	codecs := []op{ap(0x07, 1, 0), ap(0x0f, 1, 0), ap(0x17, 1, 0), ap(0x1f, 1, 0), ap(0x27, 1, 0)}
	var ps []program
	// Every codec, then reads, lookups and a crash of each kind.
	for _, c := range []byte{0, 1, 2, 3, 4 | 1, 4 | 2, 8 | 2, 0x10 | 2} {
		ps = append(ps, program{cfg0: 0x01, ops: append(append([]op{}, codecs...), readAll, lookup(6, 0, 0), crash(c), readAll, reopen)})
	}
	// Every timestamp mode, with lookups around the records' timestamps.
	for m := byte(0); m < 8; m++ {
		ps = append(ps, program{cfg0: 0x20, ops: []op{ap(0x03, m, 0), ap(0x43, m|0x18, 8), lookup(0, 1, 0), lookup(1, 2, 0), lookup(2, 3, 0), lookup(3, 0xff, 0x9c), lookup(6, 0, 0), retain(0x05, 30, 1), readAll}})
	}
	ps = append(ps,
		// Transactions: open, abort, commit, read_committed reads.
		program{cfg0: 0x03, ops: []op{ap(0x02, 0, 0x02), ap(0x01, 0, 0x03), op{opTxnMarker, 0x01, 1, 128}, op{opRead, 0x13, 0, 1}, op{opTxnMarker, 0x02, 1, 128}, op{opRead, 0x13, 0, 1}, reopen, op{opRead, 0x13, 0, 1}}},
		// Follower appends: gaps, several batches, one that does not follow.
		program{cfg0: 0x02, ops: []op{op{opFollower, 0x02, 1, 0x55}, op{opFollower, 0x0e, 1, 0x6a}, op{opFollower, 0x80, 0, 0}, readAll, truncate(0, 3), readAll, crash(2), reopen}},
		// Retention: time, size, compact only, after DeleteRecords, below
		// the high watermark.
		program{cfg0: 0x00, cfg1: 0x04, ops: []op{ap(0x07, 1, 0), ap(0x07, 1, 0), roll, ap(0x07, 1, 0), roll, ap(0x07, 1, 0), retain(0x08, 0, 0), retain(0x02, 10, 0), op{opDeleteRecords, 0, 0, 9}, retain(0x40, 0, 0), op{opHighWatermark, 0, 0, 3}, retain(0x01, 1, 3), op{opHousekeeping, 1, 0, 0}, readAll, reopen}},
		// Truncation inside a batch, below the log start, below the first
		// segment.
		program{cfg0: 0x00, ops: []op{ap(0x07, 1, 0), ap(0x07, 1, 0), roll, ap(0x07, 1, 0), truncate(0, 11), op{opDeleteRecords, 0, 0, 6}, truncate(1, 3), ap(0x07, 1, 0), truncate(1, 0), readAll, crash(1), reopen}},
		// An empty batch (count 0) between records.
		program{cfg0: 0x03, ops: []op{ap(0x01, 0, 0), ap(0x00, 0, 0xf0), ap(0x01, 0, 0), readAll, lookup(6, 0, 0), crash(2), reopen}},
		// LogAppendTime.
		program{cfg0: 0x10, ops: []op{ap(0x03, 5, 0), clock(0, 0, 10), ap(0x03, 3, 0), lookup(0, 0, 0), lookup(6, 0, 0), retain(0x03, 1, 2), reopen}},
		// Preallocated segments, crashes and clean reopens.
		program{cfg0: 0x80, ops: []op{ap(0x07, 1, 0), flush, ap(0x07, 1, 0), crash(0x06), ap(0x07, 1, 0), roll, reopen, crash(2), readAll}},
		// segment.ms: time-based rolls as the clock moves.
		program{cfg0: 0x03, cfg1: 0x08, ops: []op{ap(0x01, 0, 0), clock(2, 0, 2), ap(0x01, 0, 0), clock(2, 0, 2), ap(0x01, 0, 0), readAll, retain(0x03, 1, 0)}},
		// A small index: rolls on a full index, recovery of full indexes.
		program{cfg0: 0x40, ops: []op{ap(0x00, 0, 0), ap(0x00, 0, 0), ap(0x00, 0, 0), ap(0x00, 0, 0), ap(0x00, 0, 0), ap(0x00, 0, 0), ap(0x00, 0, 0), ap(0x00, 0, 0), ap(0x00, 0, 0), ap(0x00, 0, 0), crash(2), reopen}},
		// flush.messages=1: every append durable, then a harsh crash.
		program{cfg0: 0x01, cfg1: 0x01, ops: []op{ap(0x07, 1, 0), ap(0x07, 1, 0), ap(0x07, 1, 0), crash(0x07), readAll}},
		// A crash inside each kind of operation (armed crash).
		program{cfg0: 0x00, ops: []op{ap(0x07, 1, 0), op{opCrash, 0x12, 1, 2}, roll, op{opCrash, 0x11, 2, 3}, ap(0x07, 1, 0), op{opCrash, 0x16, 3, 4}, retain(0x01, 1, 3), op{opCrash, 0x12, 4, 2}, truncate(0, 1), op{opCrash, 0x1a, 5, 6}, reopen, readAll}},
		// Reads at every isolation and size limit, out of range too.
		program{cfg0: 0x02, ops: []op{ap(0x07, 1, 0), ap(0x47, 1, 2), op{opHighWatermark, 0, 0, 4}, op{opRead, 0x00, 0, 0}, op{opRead, 0x05, 0, 2}, op{opRead, 0x0a, 0, 3}, op{opRead, 0x13, 0, 1}, op{opRead, 0x03, 0xff, 0xff}}},
		// Far-future timestamps refused, then allowed.
		program{cfg0: 0x00, ops: []op{ap(0x01, 5, 0), ap(0x01, 0x15, 0), readAll}},
		program{cfg0: 0x20, ops: []op{ap(0x01, 5, 0), ap(0x01, 0x15, 0), lookup(6, 0, 0), readAll}},
		// repair.Recover after a clean close, and of a crash image.
		program{cfg0: 0x01, ops: []op{ap(0x07, 1, 0), roll, ap(0x07, 1, 0), op{opReopen, 3, 0, 0}, ap(0x07, 1, 0), crash(0x0a), readAll}},
	)
	return ps
}

// edgeDumps are FuzzDumpJSON inputs (generatedDumps adds many more).
func edgeDumps() [][]byte {
	return [][]byte{
		encodeDump(dumpDeep|dumpPrintData|dumpText, nil, nil),
		encodeDump(1|dumpVerify|dumpText, nil, make([]byte, 16)),
		encodeDump(2|dumpVerify, nil, make([]byte, 12)),
		encodeDump(3|dumpVerify, nil, make([]byte, 40)),
		encodeDump(dumpDeep, make([]byte, 17), nil),
	}
}

// edgeRecoverCases are FuzzRecoverCorrupt inputs: every corruption kind,
// on partitions left in each state.
func edgeRecoverCases() []recoverCase {
	var cs []recoverCase
	for k := byte(0); k < numCorruptions; k++ {
		for state := byte(0); state < 4; state++ {
			cs = append(cs, recoverCase{
				gen:    [4]byte{state<<3 | k&3, 6 + k, 0x1f, 0x07},
				recipe: []corruption{{k, k * 3, 40 + uint16(k)*37, k*11 + 1}},
			})
		}
	}
	return cs
}
