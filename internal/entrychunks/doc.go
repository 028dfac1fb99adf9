// Package entrychunks reads a segment's .log on several goroutines in
// chunks of whole entries, and hands the chunks' results back in file
// order: for work that depends on nothing but each entry's bytes (a
// batch's CRC, decoding or formatting its records), done by the parallel
// dump (package dumplog) and by verify (package inspect).
//
// Run works so:
//
//   - one goroutine reads the file in chunks of Options.ChunkSize bytes
//     (4 MiB) and cuts each at the end of its last whole entry, by the
//     entries' length fields alone; the rest goes to the next chunk. With
//     Options.Map the chunks are slices of read-only mapping windows of
//     Options.MapWindow bytes (64 MiB), not copies; a window is unmapped
//     once the reader has moved past it and its last chunk is released;
//   - Options.Workers goroutines process the chunks (the caller's
//     process function), each saying whether its chunk is clean: whole,
//     valid entries and nothing the sequential reading would report;
//   - the calling goroutine applies the clean chunks' results in file
//     order (the caller's apply function).
//
// At the first chunk that is not clean, at anything irregular in the
// length fields (zeros, a size out of range, an entry past the end of the
// file or larger than Options.MaxEntry), at a read error, at a fault on a
// mapping (the file shrank), or at a partial entry at the end, Run stops
// and returns where it stopped: the end of the last chunk applied. The
// caller reads on from there sequentially, which reports what the
// sequential reading would have from the start. So the result is the
// sequential one by construction, provided a clean chunk's results are
// those of its entries read one by one.
//
// Memory: at most 2 chunks per worker in flight, each ChunkSize bytes (or
// one larger entry, up to MaxEntry); mapped, the windows those chunks are
// in.
//
// Readers of a mapping fault if the file shrinks under it: Run's
// goroutines, the workers included, run with debug.SetPanicOnFault: a
// fault in process makes the chunk not clean, one in apply (which may
// have applied part of the chunk) is Run's error, maprange.ErrShrank.
package entrychunks
