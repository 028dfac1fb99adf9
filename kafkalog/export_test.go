package kafkalog

import "github.com/segkit/segkit/kafkalog/producer"

// Abandon simulates the death of the process that has l open: the log
// directory's lock goes, as the kernel releases a dead process's locks,
// and l is left as it is, never closed. Tests then reopen the directory as
// after an unclean shutdown.
func Abandon(l *Log) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unlockDir()
}

// ProducerEntry returns the loaded producer state's entry for producer
// id, for tests of how Open builds that state.
func ProducerEntry(l *Log, id int64) (producer.Entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.producers.LastEntry(id)
}
