package timeline

import (
	"encoding/json"
	"fmt"
)

// Action is what an instant did to the partition. Its text is the
// extension of the instant's file names.
type Action string

// The actions. These names are part of the on-disk format and should not
// be changed.
const (
	// ActionRoll: a new active segment was rolled (Roll).
	ActionRoll Action = "roll"
	// ActionClean: retention deleted segments (Clean).
	ActionClean Action = "clean"
	// ActionCompaction: the log cleaner rewrote segments (Compaction).
	ActionCompaction Action = "compaction"
	// ActionTruncate: the log was truncated (Truncate).
	ActionTruncate Action = "truncate"
	// ActionRecovery: the loader recovered the log (Recovery).
	ActionRecovery Action = "recovery"
	// ActionTier: segments moved to or from remote storage (Tier; recorded
	// once tiering exists).
	ActionTier Action = "tier"
	// ActionSavepoint: a savepoint (legal hold) was taken (Savepoint).
	ActionSavepoint Action = "savepoint"
	// ActionRestore: the log was restored to a savepoint (Restore).
	ActionRestore Action = "restore"
	// ActionRollback: a pending instant was rolled back (Rollback). Only
	// Txn.Rollback writes it; Begin refuses it.
	ActionRollback Action = "rollback"
)

// actions are the known actions, in the order of the constants.
var actions = []Action{ActionRoll, ActionClean, ActionCompaction, ActionTruncate, ActionRecovery, ActionTier, ActionSavepoint, ActionRestore, ActionRollback}

// Actions returns every known action.
func Actions() []Action { return append([]Action(nil), actions...) }

// Known reports whether a is one of the actions of this package.
func (a Action) Known() bool { return newPayload(a) != nil }

// State is how far an instant has come: REQUESTED, then INFLIGHT, then
// COMPLETED, as in Hudi's timeline.
type State uint8

// The states, in order.
const (
	// Requested: the action is planned; it has changed nothing yet.
	Requested State = iota + 1
	// Inflight: the action may have begun to change files.
	Inflight
	// Completed: the action is done and its last change is durable.
	Completed
)

// These names are part of the on-disk format and should not be changed.
var stateNames = [...]string{Requested: "requested", Inflight: "inflight", Completed: "completed"}

// String returns "requested", "inflight" or "completed".
func (s State) String() string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// MarshalText returns the state's name.
func (s State) MarshalText() ([]byte, error) {
	if int(s) >= len(stateNames) || stateNames[s] == "" {
		return nil, fmt.Errorf("timeline: invalid state %d", uint8(s))
	}
	return []byte(stateNames[s]), nil
}

// UnmarshalText parses a state's name.
func (s *State) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n != "" && n == string(b) {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("timeline: unknown state %q", b)
}

// Payload is the JSON body of an instant: what Begin planned, or what
// Complete reports. Each action has its own payload type (Roll for
// ActionRoll, ...), and the timeline refuses a payload of another
// action's type. Readers of this version ignore payload fields they do
// not know, so later versions may add fields.
type Payload interface {
	// Action returns the action the payload belongs to.
	Action() Action
}

// newPayload returns a new payload of a's type, nil for an unknown action.
func newPayload(a Action) Payload {
	switch a {
	case ActionRoll:
		return new(Roll)
	case ActionClean:
		return new(Clean)
	case ActionCompaction:
		return new(Compaction)
	case ActionTruncate:
		return new(Truncate)
	case ActionRecovery:
		return new(Recovery)
	case ActionTier:
		return new(Tier)
	case ActionSavepoint:
		return new(Savepoint)
	case ActionRestore:
		return new(Restore)
	case ActionRollback:
		return new(Rollback)
	}
	return nil
}

// SegmentRef describes one segment as an instant saw it.
type SegmentRef struct {
	// BaseOffset is the segment's base offset (its file name).
	BaseOffset int64 `json:"baseOffset"`
	// NextOffset is the offset after its last record: the next segment's
	// base offset, or the log end offset for the active segment.
	NextOffset int64 `json:"nextOffset"`
	// Size is the size of its .log file in bytes.
	Size int64 `json:"size"`
	// LargestTimestamp is the largest record timestamp of the segment
	// (Kafka's LogSegment.largestTimestamp; -1 when it has none).
	LargestTimestamp int64 `json:"largestTimestamp"`
}

// Roll records a roll of the active segment (UnifiedLog.roll).
type Roll struct {
	// Reason is the rule that rolled: "segment.bytes", "segment.ms",
	// "index full", "time index full", "offset overflow" or "requested"
	// (an explicit roll), the conditions of LogSegment.shouldRoll.
	Reason string `json:"reason"`
	// Closed is the segment that stopped being the active one, if any.
	Closed *SegmentRef `json:"closed,omitempty"`
	// NewBaseOffset is the base offset of the new active segment: the log
	// end offset at the roll ("Rolled new log segment at offset N").
	NewBaseOffset int64 `json:"newBaseOffset"`
}

// Action returns ActionRoll.
func (Roll) Action() Action { return ActionRoll }

// RetentionConfig is the retention config in force when a Clean ran, in
// Kafka's topic config names.
type RetentionConfig struct {
	RetentionMs       int64 `json:"retention.ms"`
	RetentionBytes    int64 `json:"retention.bytes"`
	FileDeleteDelayMs int64 `json:"file.delete.delay.ms"`
}

// Clean records a retention deletion (UnifiedLog.deleteOldSegments): one
// instant per rule that deleted, as Kafka logs one line per rule.
type Clean struct {
	// Rule is the rule that deleted the segments: "time" (Kafka's
	// RetentionMsBreach), "size" (RetentionSizeBreach) or
	// "logStartOffset" (StartOffsetBreach), the retention package's
	// Reason values.
	Rule string `json:"rule"`
	// Config is the retention config in force.
	Config RetentionConfig `json:"config"`
	// Now is the clock the check ran at (epoch ms).
	Now int64 `json:"now"`
	// Segments are the deleted segments, oldest first, with the largest
	// timestamps the time rule compared.
	Segments []SegmentRef `json:"segments"`
	// OldLogStartOffset and NewLogStartOffset are the log start offset
	// before and after the deletion.
	OldLogStartOffset int64 `json:"oldLogStartOffset"`
	NewLogStartOffset int64 `json:"newLogStartOffset"`
	// Local says the deletion was local retention of a tiered partition
	// (local.retention.ms and .bytes, in Config): only the local copies
	// went, the records stay readable from the remote store, and the log
	// start offsets above are the local ones (Kafka's earliest-local).
	Local bool `json:"local,omitempty"`
}

// Action returns ActionClean.
func (Clean) Action() Action { return ActionClean }

// Compaction records a pass of the log cleaner (Cleaner.doClean).
type Compaction struct {
	// Now is the clock the clean ran at (epoch ms), which the delete
	// horizons it stamps derive from.
	Now int64 `json:"now"`
	// FirstDirtyOffset is the cleaner-offset-checkpoint entry the clean
	// started from, EndOffset the one it wrote.
	FirstDirtyOffset int64 `json:"firstDirtyOffset"`
	EndOffset        int64 `json:"endOffset"`
	// DeleteRetentionMs is the delete.retention.ms in force.
	DeleteRetentionMs int64 `json:"delete.retention.ms"`
	// Sources are the segments the clean replaces, Cleaned those it
	// wrote in their place (the .cleaned → .swap → segment protocol).
	Sources []SegmentRef `json:"sources"`
	Cleaned []SegmentRef `json:"cleaned,omitempty"`
	// RecordsRemoved counts the records the clean dropped, by reason
	// ("superseded", "tombstone", "aborted", "unkeyed", "marker").
	RecordsRemoved map[string]int64 `json:"recordsRemoved,omitempty"`
}

// Action returns ActionCompaction.
func (Compaction) Action() Action { return ActionCompaction }

// Truncate records a truncation of the log: a follower truncating to its
// leader (UnifiedLog.truncateTo) or a truncation to a new start
// (truncateFullyAndStartAt).
type Truncate struct {
	// Reason is why: "divergence" (the leader's epoch end offset), "high
	// watermark", "full" (truncateFullyAndStartAt) or the caller's words.
	Reason string `json:"reason"`
	// OldLogEndOffset and NewLogEndOffset are the log end offset before
	// and after.
	OldLogEndOffset int64 `json:"oldLogEndOffset"`
	NewLogEndOffset int64 `json:"newLogEndOffset"`
	// OldLogStartOffset and NewLogStartOffset are the log start offset
	// before and after (they differ after truncateFullyAndStartAt).
	OldLogStartOffset int64 `json:"oldLogStartOffset"`
	NewLogStartOffset int64 `json:"newLogStartOffset"`
	// Deleted are the segments removed whole; BytesTruncated the bytes
	// cut from the segment truncated in place.
	Deleted        []SegmentRef `json:"deleted,omitempty"`
	BytesTruncated int64        `json:"bytesTruncated"`
}

// Action returns ActionTruncate.
func (Truncate) Action() Action { return ActionTruncate }

// Recovery records what the loader did when it opened the log
// (LogLoader.load).
type Recovery struct {
	// CleanShutdown says the log directory had a clean-shutdown marker;
	// RecoveryPoint is the recovery-point-offset-checkpoint entry.
	CleanShutdown bool  `json:"cleanShutdown"`
	RecoveryPoint int64 `json:"recoveryPoint"`
	// LogStartOffset and LogEndOffset are the log's once loaded.
	LogStartOffset int64 `json:"logStartOffset"`
	LogEndOffset   int64 `json:"logEndOffset"`
	// Recovered are the base offsets of the segments rechecked
	// ("Recovering unflushed segment N"); BytesTruncated what was cut at
	// the first invalid batch; Deleted the segments after it, removed.
	Recovered      []int64      `json:"recovered,omitempty"`
	BytesTruncated int64        `json:"bytesTruncated"`
	Deleted        []SegmentRef `json:"deleted,omitempty"`
	// Leftovers are the names of the .deleted, .cleaned and .swap files
	// the loader resolved; IndexesRebuilt those of the indexes it rebuilt.
	Leftovers      []string `json:"leftovers,omitempty"`
	IndexesRebuilt []string `json:"indexesRebuilt,omitempty"`
}

// Action returns ActionRecovery.
func (Recovery) Action() Action { return ActionRecovery }

// Tier records a step of tiered storage (KIP-405, package tier): a
// segment copied to the remote store (COPY_SEGMENT_STARTED → FINISHED),
// or a remote segment deleted by total retention (DELETE_SEGMENT_STARTED
// → FINISHED).
type Tier struct {
	// Op is TierCopy or TierDelete.
	Op string `json:"op"`
	// Segment is the segment copied or deleted: its base offset, the
	// next segment's base, its size and largest timestamp.
	Segment SegmentRef `json:"segment"`
	// RemoteSegmentID is the remote segment's id, as Kafka prints a Uuid.
	RemoteSegmentID string `json:"remoteSegmentId,omitempty"`
	// Remote names the remote store (a URI).
	Remote string `json:"remote,omitempty"`
	// Rule is the total-retention rule of a deletion ("time", "size",
	// "logStartOffset").
	Rule string `json:"rule,omitempty"`
}

// The Ops of a Tier.
const (
	TierCopy   = "copy"
	TierDelete = "delete"
)

// Action returns ActionTier.
func (Tier) Action() Action { return ActionTier }

// Savepoint records a savepoint (Hudi's): a legal hold on the offsets
// FirstOffset to LastOffset, which retention and compaction do not remove
// while it is in force — and, since Kafka deletes only a prefix of the
// log, on every later segment too. A savepoint instant whose Release is
// set takes no hold: it releases the hold of the savepoint instant it
// names. Holds lists the holds in force.
type Savepoint struct {
	// Label names the savepoint; By and Comment say who took it and why.
	Label   string `json:"label"`
	By      string `json:"by,omitempty"`
	Comment string `json:"comment,omitempty"`
	// FirstOffset and LastOffset are the first and the last offset held.
	FirstOffset int64 `json:"firstOffset"`
	LastOffset  int64 `json:"lastOffset"`
	// Release, when set, is the time of the savepoint instant whose hold
	// this one releases.
	Release *InstantTime `json:"release,omitempty"`
	// LogStartOffset and LogEndOffset are the log's when it was taken,
	// Segments its segments then.
	LogStartOffset int64        `json:"logStartOffset"`
	LogEndOffset   int64        `json:"logEndOffset"`
	Segments       []SegmentRef `json:"segments,omitempty"`
}

// Action returns ActionSavepoint.
func (Savepoint) Action() Action { return ActionSavepoint }

// Restore records a restore of the log to a savepoint.
type Restore struct {
	// Savepoint is the savepoint instant restored to.
	Savepoint InstantTime `json:"savepoint"`
	// OldLogEndOffset and NewLogEndOffset are the log end offset before
	// and after.
	OldLogEndOffset int64 `json:"oldLogEndOffset"`
	NewLogEndOffset int64 `json:"newLogEndOffset"`
	// Segments are the segments the log holds once restored.
	Segments []SegmentRef `json:"segments,omitempty"`
}

// Action returns ActionRestore.
func (Restore) Action() Action { return ActionRestore }

// Rollback is the payload of a rollback instant: the pending instant it
// rolled back, as it was. Txn.Rollback writes it as the rollback's plan.
type Rollback struct {
	// Instant, InstantAction and InstantState are the time, action and
	// state of the rolled-back instant.
	Instant       InstantTime `json:"instant"`
	InstantAction Action      `json:"action"`
	InstantState  State       `json:"state"`
	// Reason is the caller's explanation.
	Reason string `json:"reason"`
	// Plan is the rolled-back instant's plan (nil if it had none).
	Plan Payload `json:"-"`
}

// Action returns ActionRollback.
func (Rollback) Action() Action { return ActionRollback }

type rollbackJSON struct {
	Instant InstantTime     `json:"instant"`
	Action  Action          `json:"action"`
	State   State           `json:"state"`
	Reason  string          `json:"reason"`
	Plan    json.RawMessage `json:"plan"`
}

// MarshalJSON encodes the rollback with its plan.
func (r Rollback) MarshalJSON() ([]byte, error) {
	plan := json.RawMessage("null")
	if r.Plan != nil {
		b, err := json.Marshal(r.Plan)
		if err != nil {
			return nil, err
		}
		plan = b
	}
	return json.Marshal(rollbackJSON{Instant: r.Instant, Action: r.InstantAction, State: r.InstantState, Reason: r.Reason, Plan: plan})
}

// UnmarshalJSON decodes a rollback, its plan into the payload type of
// its Action.
func (r *Rollback) UnmarshalJSON(b []byte) error {
	var j rollbackJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.Action == ActionRollback {
		return fmt.Errorf("timeline: a rollback of a rollback")
	}
	p, err := decodePayload(j.Action, j.Plan)
	if err != nil {
		return err
	}
	if j.State != Requested && j.State != Inflight {
		return fmt.Errorf("timeline: a rollback of a %s instant", j.State)
	}
	*r = Rollback{Instant: j.Instant, InstantAction: j.Action, InstantState: j.State, Reason: j.Reason, Plan: p}
	return nil
}

// decodePayload decodes raw (absent or null: no payload) as a payload of
// action a.
func decodePayload(a Action, raw json.RawMessage) (Payload, error) {
	p := newPayload(a)
	if p == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownAction, string(a))
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if err := json.Unmarshal(raw, p); err != nil {
		return nil, err
	}
	return p, nil
}
