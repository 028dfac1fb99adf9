// Package demo builds segviz's built-in demo: a Kafka log directory, written
// by segkit's own log engine into an in-memory filesystem, that shows every
// view of the visualiser something worth seeing.
//
// The log directory "kafka-logs" holds two partitions:
//
//   - orders-0, the demo proper: eight segments written over ten days of
//     a fake clock (seven remain: retention deleted the first), with batches of every codec (none, gzip, snappy, lz4,
//     zstd), a transaction that commits and one that aborts (so a
//     .txnindex), an idempotent producer, an empty batch left by compaction
//     (record count 0), tombstones, binary values and headers, a segment of
//     records replayed with 2019 timestamps (retention's far-past warning),
//     a segment already deleted by retention whose files are still there as
//     .deleted, and a log start offset moved by a DeleteRecords request.
//     Its timestamps make
//     Kafka's default retention (7 days) delete two segments at Now and keep
//     the rest. It carries a timeline (.segkit/timeline), written by the
//     engine's code paths with the same clock: a roll instant per roll
//     (the log is opened with kafkalog.Options.Timeline), a savepoint on the transactions segment taken and
//     released (timeline.Begin and Complete), and the retention check 20 s
//     before Now as a clean instant (retentionapply.Apply, the code of
//     `segviz retention --apply`); the DeleteRecords request is not
//     recorded, as the engine records no such instant.
//   - orders-1, a small partition damaged on purpose for the verification
//     view: a flipped byte (bad CRC), an offset index entry that points
//     inside a batch, a time index entry out of order, a torn tail, and
//     indexes left untrimmed (zero padding, which Kafka trusts).
//
// Everything is deterministic: the clock is fixed and the random source
// seeded, so two builds give the same bytes.
package demo
