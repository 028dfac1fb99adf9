package fuzz

import (
	"fmt"
	"strings"
)

// A FuzzLogOps input is a program: a 2-byte header and up to maxOps
// operations of opSize bytes each. The encoding is documented in doc.go;
// it is part of the committed corpus, so changes must keep old seeds
// meaningful (new meanings go in reserved bits or new opcodes).
const (
	headerSize = 2
	opSize     = 4
	maxOps     = 64
)

// Opcodes (the first byte of an op, modulo numOpcodes).
const (
	opAppend        = iota // leader append of one batch
	opAppendB              // the same (appends are weighted double)
	opTxnMarker            // a COMMIT or ABORT control batch
	opFollower             // a follower append of 1-3 batches with their offsets
	opRoll                 // Log.Roll
	opFlush                // Log.Flush
	opClock                // advance the clock
	opRetention            // retention.Plan + retention.Apply at the clock's time
	opCrash                // crash now (or arm a crash inside the next op), reopen
	opReopen               // Close, check the files, Open
	opTruncate             // Log.TruncateTo
	opRead                 // Log.Read, checked against the model
	opLookup               // Log.OffsetForTimestamp, checked against the model
	opDeleteRecords        // Log.IncrementLogStartOffset
	opHighWatermark        // Log.SetHighWatermark
	opHousekeeping         // MaybeFlush, DeletePendingSegments
	numOpcodes
)

var opNames = [numOpcodes]string{
	"append", "append", "txn-marker", "follower-append", "roll", "flush", "clock", "retention",
	"crash", "reopen", "truncate", "read", "lookup", "delete-records", "high-watermark", "housekeeping",
}

type op struct{ code, a, b, c byte }

func (o op) kind() int { return int(o.code) % numOpcodes }

func (o op) String() string {
	return fmt.Sprintf("%s(%#02x %#02x %#02x)", opNames[o.kind()], o.a, o.b, o.c)
}

// u16 is the op's b and c bytes as one number.
func (o op) u16() int64 { return int64(o.b)<<8 | int64(o.c) }

// program is a decoded FuzzLogOps input.
type program struct {
	cfg0, cfg1 byte
	ops        []op
}

// decodeProgram reads a program; every byte string decodes. Missing header
// bytes read as 0, a trailing partial op is ignored, and ops past maxOps
// are not read.
func decodeProgram(data []byte) program {
	var p program
	if len(data) > 0 {
		p.cfg0 = data[0]
	}
	if len(data) > 1 {
		p.cfg1 = data[1]
	}
	if len(data) > headerSize {
		data = data[headerSize:]
	} else {
		data = nil
	}
	for len(data) >= opSize && len(p.ops) < maxOps {
		p.ops = append(p.ops, op{data[0], data[1], data[2], data[3]})
		data = data[opSize:]
	}
	return p
}

func (p program) encode() []byte {
	b := []byte{p.cfg0, p.cfg1}
	for _, o := range p.ops {
		b = append(b, o.code, o.a, o.b, o.c)
	}
	return b
}

func (p program) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cfg %#02x %#02x:", p.cfg0, p.cfg1)
	for i, o := range p.ops {
		fmt.Fprintf(&b, " %d:%v", i, o)
	}
	return b.String()
}
