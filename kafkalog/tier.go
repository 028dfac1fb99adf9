package kafkalog

// LastStableOffset is the log's last stable offset: the first offset of
// the earliest transaction still open, or the high watermark when none is
// (UnifiedLog.lastStableOffset). Tiered storage copies only segments
// that end at or below it (RemoteLogManager.RLMCopyTask).
func (l *Log) LastStableOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.lastStableOffset()
}
