package inspect

import "github.com/segkit/segkit/finding"

// Level says how serious a Problem is: Info, Warning or Error. It is
// finding.Level, so that the findings of the index verifiers pass through
// unchanged; in JSON it is "info", "warning" or "error".
type Level = finding.Level

// Levels.
const (
	// Info: a fact worth knowing that is not a defect (a follower's
	// multi-batch index entry, an offset gap in a compacted log).
	Info = finding.Info
	// Warning: not a defect of the data, but a state to know about (the
	// preallocated index of the active segment, a torn tail that recovery
	// will cut, timestamps that make retention delete early).
	Warning = finding.Warning
	// Error: something is wrong: a read, a lookup or Kafka's recovery
	// would lose or misplace data. Report.OK is false.
	Error = finding.Error
)

// Problem is one finding of Verify: a finding.Problem.
type Problem = finding.Problem

// Problem kinds of Verify: the finding.Kind* constants under the names
// this package had before package finding held them all.
const (
	KindLogCRC                 = finding.KindLogCRC
	KindLogCorrupt             = finding.KindLogCorrupt
	KindLogInvalidRecords      = finding.KindLogInvalidRecords
	KindLogTornTail            = finding.KindLogTornTail
	KindLogZeroTail            = finding.KindLogZeroTail
	KindLogOffsetOrder         = finding.KindLogOffsetOrder
	KindLogOffsetRange         = finding.KindLogOffsetRange
	KindLogOffsetGap           = finding.KindLogOffsetGap
	KindIndexMissing           = finding.KindIndexMissing
	KindTimeIndexNoFinal       = finding.KindTimeIndexNoFinal
	KindOrphanFile             = finding.KindOrphanFile
	KindLeftoverFile           = finding.KindLeftoverFile
	KindNoSegments             = finding.KindNoSegments
	KindIndexTooLarge          = finding.KindIndexTooLarge
	KindSymlink                = finding.KindSymlink
	KindSegmentName            = finding.KindSegmentName
	KindTxnMissingAbort        = finding.KindTxnMissingAbort
	KindTxnMismatch            = finding.KindTxnMismatch
	KindSnapshotCorrupt        = finding.KindSnapshotCorrupt
	KindSnapshotCRC            = finding.KindSnapshotCRC
	KindSnapshotMismatch       = finding.KindSnapshotMismatch
	KindSnapshotProducerAbsent = finding.KindSnapshotProducerAbsent
	KindSnapshotPastEnd        = finding.KindSnapshotPastEnd
	KindProducerState          = finding.KindProducerState
	KindEpochCorrupt           = finding.KindEpochCorrupt
	KindEpochMissing           = finding.KindEpochMissing
	KindEpochOrder             = finding.KindEpochOrder
	KindEpochMismatch          = finding.KindEpochMismatch
	KindPartitionMetadata      = finding.KindPartitionMetadata
	KindCheckpointCorrupt      = finding.KindCheckpointCorrupt
	KindRecoveryPointPastEnd   = finding.KindRecoveryPointPastEnd
	KindLogStartBelowSegments  = finding.KindLogStartBelowSegments
	KindLogStartPastEnd        = finding.KindLogStartPastEnd
	KindHighWatermarkPastEnd   = finding.KindHighWatermarkPastEnd
	KindFarPastTimestamp       = finding.KindFarPastTimestamp
	KindFutureTimestamp        = finding.KindFutureTimestamp
	KindMtimeFallback          = finding.KindMtimeFallback
	KindTimestampOrder         = finding.KindTimestampOrder
)
