// Package repair changes Kafka partition directories to make them
// readable again, and says exactly what it removed: the logic behind
// segviz recover and salvage. It never prints and runs on any vfs.FS.
// Reading without writing is package inspect's.
//
//	rep, err := repair.Recover(vfs.OS(), "/var/kafka-logs/orders-0", repair.RecoverOptions{})
//	for _, s := range rep.Segments {
//		fmt.Println(s.File, s.Why, s.Truncated) // bytes cut, and why
//	}
//	sr, err := repair.Salvage(vfs.OS(), "orders-0", vfs.OS(), "/tmp/orders-0", repair.SalvageOptions{})
//
// # Recover
//
// Recover runs the log engine's recovery (kafkalog, Kafka's LogLoader) on
// every segment of a partition, ignoring the clean-shutdown marker and the
// recovery point, under the log directory's lock, and reports what it cut
// and why, with what a salvage could still read from the cut bytes.
//
// # Salvage
//
// Kafka's recovery truncates a segment at its first bad entry and deletes
// every later segment: nothing after a hole is ever served. Salvage goes
// further: it walks each .log past damage (internal/resync), keeps every
// valid entry whose offsets increase, and appends them, offsets unchanged,
// to a new partition (kafkalog.Log.AppendAsFollower), reporting the byte
// ranges lost and the offsets they held. Its input is only read.
//
// # Concurrency
//
// Every function may be called concurrently with the others on different
// directories; a directory being recovered must not be written by anyone
// else (Recover holds its log directory's lock, as a broker does).
package repair
