package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/kafkalog"
	"github.com/segkit/segkit/kafkalog/checkpoint"
	"github.com/segkit/segkit/kafkalog/config"
	"github.com/segkit/segkit/retention"
	"github.com/segkit/segkit/tier"
	"github.com/segkit/segkit/timeline"
	"github.com/segkit/segkit/vfs"
)

const tierHelp = `Usage: segviz tier status [--remote URI] [--now T] [config flags] [--json] DIR
       segviz tier upload --remote URI [--now T] [config flags] [--json] DIR

Tiered storage (KIP-405) for the partition directory DIR: Kafka 3.9+
copies closed segments to a remote store and keeps only the recent ones on
local disk (local.retention.ms/bytes), while retention.ms/bytes decide how
long records live in total. The remote is a directory in the layout of
Kafka's LocalTieredStorage (file://DIR, its rsm.config.dir), with the
remote log metadata segkit keeps beside it (DIR/.segkit-tier; a broker
keeps it in its __remote_log_metadata topic instead: a remote a broker
wrote, without that metadata, is read from its files alone by status and
"segviz read --remote", and refused by upload). s3:// is not built into
this segviz yet.

  status   lists the local and remote segments on one list: base offset,
           next offset, size, where the data is (local, remote, both, or
           none: the metadata of a remote copy whose files are deleted) and
           the remote state (COPY_SEGMENT_STARTED, COPY_SEGMENT_FINISHED,
           DELETE_SEGMENT_STARTED, DELETE_SEGMENT_FINISHED); the earliest
           offset (the log start offset, ListOffsets "earliest"), the
           earliest local one ("earliest-local"), the highest offset copied;
           and what the next check at --now would do: copy (Kafka's copy
           rule), delete locally (local retention) and delete remotely
           (total retention). With remote.storage.enable it forecasts,
           for every segment, if nothing more is appended: when a copy
           task copies it, "on local disk until" (the retention check
           that deletes it locally: copied, and local.retention.ms past
           its newest record, local.retention.bytes breached, or the log
           start offset moved past it) and "readable until" (the
           expiration task that deletes its remote copy: retention.ms
           past its newest record or retention.bytes breached over the
           remote plus local-only bytes). The checks run every
           log.retention.check.interval.ms (phase fixed by
           --broker-start), the copy and expiration tasks every
           remote.log.manager.task.interval.ms (phase unknown: a time is
           then the latest the task can run). It is read-only: no lock is taken, nothing is
           created or changed in DIR or in the remote. Without --remote it
           shows what the first upload would copy to an empty remote.

  upload   does that check, under Kafka's lock of the log directory (an
           flock of its .lock; if a broker or another segviz holds it,
           nothing is written, exit 3): opens DIR as a writer, resolves what
           an interrupted upload left in the remote (a copy that never
           finished is deleted, as Kafka deletes a failed copy; a deletion
           that never finished is finished; temporary files are removed;
           files no metadata knows are reported, not removed) and says so,
           copies the segments Kafka's rules allow, oldest first (a segment
           whose successor starts at or below the last stable offset; never
           the active one), then applies local retention (only segments
           wholly copied, by local.retention.ms then local.retention.bytes;
           -2 means retention.ms/bytes) and total retention (retention.ms on
           a remote segment's newest timestamp, retention.bytes over the
           remote plus the local-only bytes). It says what it removed: local
           segments and bytes, remote segments and bytes.

Each step is recorded on the partition's timeline (DIR/.segkit/timeline,
see "segviz history"), stamped with --now: a "tier" instant per segment
copied (requested and inflight once COPY_SEGMENT_STARTED is durable,
before the files are copied; completed once COPY_SEGMENT_FINISHED is) and
per remote segment deleted (the same around DELETE_SEGMENT_STARTED and
FINISHED), and a "clean" instant for each local deletion (its rule "time"
for local.retention.ms, "size" for local.retention.bytes, "logStartOffset"
for segments below a log start offset total retention moved; its config
the effective local retention).

DIR needs a topic id (its partition.metadata, which a broker writes) and,
as a partition directory carries no topic config, the topic's settings
from the flags below, --config key=value (repeatable) or --config-file (a
.properties file): remote.storage.enable=true for an upload, and the
retention settings; unset ones are Kafka's defaults. Compacted topics are
not tiered (Kafka's rule): refused. The high watermark is the log
directory's replication-offset-checkpoint entry, else the log end offset.

JSON (--json), one object; field names are stable, offsets and sizes are
numbers, times epoch milliseconds:

  status: {"partition", "remote" (the URI, or null), "now",
           "logStartOffset", "localLogStartOffset", "logEndOffset",
           "highWatermark", "lastStableOffset", "highestCopiedOffset",
           "discovered" (true: the remote has no segkit metadata and its
           segments were read from its files, as a broker writes them),
           "segments": [{"baseOffset", "nextOffset", "size", "where",
                         "remoteState", "remoteId", "maxTimestamp"}],
           "nextCheck": {"copy": [seg], "deleteLocal": [seg],
                         "deleteRemote": [seg]},
           "forecast" (null unless remote.storage.enable): {
             "retentionChecks", "tasks" (their schedules in words),
             "segments": [{"baseOffset", "nextOffset", "where",
               "copiedBy", "localUntil", "localReason", "readableUntil",
               "reason", "explanation"}]}}
  upload: {"partition", "remote", "now", "startup": {"copiesAbandoned":
           [seg], "deletesFinished": [seg], "tempRemoved": [names],
           "unknown": [names], "missing": [names],
           "localSegmentsDeleted"}, "lastStableOffset", "copied": [seg],
           "deletedLocal": [seg], "deletedLocalBytes", "deletedRemote":
           [seg], "deletedRemoteBytes", "removedFiles": [names],
           "logStartOffset", "localLogStartOffset", "highestCopiedOffset",
           "instants": [as "segviz history --json" prints them]}

A seg is {"baseOffset", "nextOffset", "size", "where", "remoteState",
"remoteId", "maxTimestamp", "reason"}: remoteState and remoteId are null
for a segment only local; reason (why a deletion, by Kafka's config name,
or "log start offset", "failed copy", "start-up") is null elsewhere.

Exit status: 0 when done (also when there was nothing to do), 1 when
damage (corruption) in DIR or in the remote's metadata stopped the
command, 2 for a bad command line or a refusal (a compacted topic, remote
storage not enabled, no topic id, an s3:// remote), 3 when the command
could not run (the log directory locked, I/O errors; what an interrupted
upload left is resolved by the next one).

Examples:
  segviz tier status --remote file:///var/kafka-tiered /var/kafka-logs/orders-0
  segviz tier upload --remote file:///var/kafka-tiered --config remote.storage.enable=true \
      --local.retention.ms 60000 /var/kafka-logs/orders-0
  segviz tier status --remote file:///var/kafka-tiered --json orders-0 | jq .nextCheck
`

// tierSegJSON is one segment of the tier JSON objects.
type tierSegJSON struct {
	BaseOffset   int64   `json:"baseOffset"`
	NextOffset   int64   `json:"nextOffset"`
	Size         int64   `json:"size"`
	Where        string  `json:"where"`
	RemoteState  *string `json:"remoteState"`
	RemoteID     *string `json:"remoteId"`
	MaxTimestamp int64   `json:"maxTimestamp"`
	Reason       *string `json:"reason"`
}

type tierNextJSON struct {
	Copy         []tierSegJSON `json:"copy"`
	DeleteLocal  []tierSegJSON `json:"deleteLocal"`
	DeleteRemote []tierSegJSON `json:"deleteRemote"`
}

type tierStatusJSON struct {
	Partition           string            `json:"partition"`
	Remote              *string           `json:"remote"`
	Now                 int64             `json:"now"`
	LogStartOffset      int64             `json:"logStartOffset"`
	LocalLogStartOffset int64             `json:"localLogStartOffset"`
	LogEndOffset        int64             `json:"logEndOffset"`
	HighWatermark       int64             `json:"highWatermark"`
	LastStableOffset    int64             `json:"lastStableOffset"`
	HighestCopiedOffset int64             `json:"highestCopiedOffset"`
	Discovered          bool              `json:"discovered"`
	Segments            []tierSegJSON     `json:"segments"`
	NextCheck           tierNextJSON      `json:"nextCheck"`
	Forecast            *tierForecastJSON `json:"forecast"`
}

// tierForecastJSON is tier.ReadableUntil's answer; times are epoch ms,
// null for never.
type tierForecastJSON struct {
	RetentionChecks string                `json:"retentionChecks"`
	Tasks           string                `json:"tasks"`
	Segments        []tierSegForecastJSON `json:"segments"`
}

type tierSegForecastJSON struct {
	BaseOffset    int64   `json:"baseOffset"`
	NextOffset    int64   `json:"nextOffset"`
	Where         string  `json:"where"`
	CopiedBy      *int64  `json:"copiedBy"`
	LocalUntil    *int64  `json:"localUntil"`
	LocalReason   *string `json:"localReason"`
	ReadableUntil *int64  `json:"readableUntil"`
	Reason        *string `json:"reason"`
	Explanation   string  `json:"explanation"`
}

// msOrNull is t, or nil for never (and for 0, "not applicable").
func msOrNull(t int64) *int64 {
	if t == retention.Never || t == 0 {
		return nil
	}
	return &t
}

func strOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// tierForecast is the forecast of the partition status describes.
func tierForecast(o tierOpts, rs tier.RemoteLog, locals []tier.LocalSegment, l *kafkalog.Log, lso int64) (*tierForecastJSON, error) {
	p := retention.PolicyFrom(o.cfg, o.broker)
	checks := p.UnknownSchedule()
	if o.hasStart {
		checks = p.NewSchedule(o.brokerStart)
	}
	// The remote log manager schedules its tasks when the broker becomes
	// the partition's leader: their phase is not known.
	tasks := retention.Schedule{Interval: max(o.broker.RemoteLogManagerTaskIntervalMs, 1), Unknown: true}
	fc, err := tier.ReadableUntil(tier.ForecastParams{
		Now: o.now, Local: locals, LocalLogStartOffset: l.LogStartOffset(), LogEndOffset: l.LogEndOffset(),
		HighWatermark: l.HighWatermark(), LastStableOffset: lso, Remote: rs, Config: o.cfg,
		RetentionChecks: checks, Tasks: tasks,
	})
	if err != nil {
		return nil, err
	}
	out := &tierForecastJSON{RetentionChecks: checks.String(), Tasks: strings.Replace(tasks.String(), "checks", "tasks", 1), Segments: []tierSegForecastJSON{}}
	for _, s := range fc.Segments {
		where := "local"
		switch {
		case s.Local && s.Remote:
			where = "both"
		case s.Remote:
			where = "remote"
		}
		local := s.LocalUntil
		if !s.Local {
			local = 0
		}
		copied := s.CopiedBy
		if s.Remote {
			copied = 0
		}
		out.Segments = append(out.Segments, tierSegForecastJSON{
			BaseOffset: s.BaseOffset, NextOffset: s.NextOffset, Where: where, CopiedBy: msOrNull(copied),
			LocalUntil: msOrNull(local), LocalReason: strOrNull(s.LocalReason),
			ReadableUntil: msOrNull(s.ReadableUntil), Reason: strOrNull(s.Reason), Explanation: s.Explanation,
		})
	}
	return out, nil
}

type tierStartupJSON struct {
	CopiesAbandoned      []tierSegJSON `json:"copiesAbandoned"`
	DeletesFinished      []tierSegJSON `json:"deletesFinished"`
	TempRemoved          []string      `json:"tempRemoved"`
	Unknown              []string      `json:"unknown"`
	Missing              []string      `json:"missing"`
	LocalSegmentsDeleted int           `json:"localSegmentsDeleted"`
}

type tierUploadJSON struct {
	Partition           string          `json:"partition"`
	Remote              string          `json:"remote"`
	Now                 int64           `json:"now"`
	Startup             tierStartupJSON `json:"startup"`
	LastStableOffset    int64           `json:"lastStableOffset"`
	Copied              []tierSegJSON   `json:"copied"`
	DeletedLocal        []tierSegJSON   `json:"deletedLocal"`
	DeletedLocalBytes   int64           `json:"deletedLocalBytes"`
	DeletedRemote       []tierSegJSON   `json:"deletedRemote"`
	DeletedRemoteBytes  int64           `json:"deletedRemoteBytes"`
	RemovedFiles        []string        `json:"removedFiles"`
	LogStartOffset      int64           `json:"logStartOffset"`
	LocalLogStartOffset int64           `json:"localLogStartOffset"`
	HighestCopiedOffset int64           `json:"highestCopiedOffset"`
	Instants            []instantJSON   `json:"instants"`
}

func strp(s string) *string { return &s }

func remoteSegJSON(m tier.SegmentMetadata, where string) tierSegJSON {
	return tierSegJSON{BaseOffset: m.StartOffset, NextOffset: m.EndOffset + 1, Size: m.SegmentSizeInBytes, Where: where,
		RemoteState: strp(m.State.String()), RemoteID: strp(m.ID.ID.String()), MaxTimestamp: m.MaxTimestampMs}
}

// remoteWhere says where a remote copy's data is: "remote" while its
// files are there, "none" once deleted.
func remoteWhere(m tier.SegmentMetadata) string {
	if m.State == tier.DeleteSegmentFinished {
		return "none"
	}
	return "remote"
}

// errRemoteScheme is a --remote URI this segviz cannot open: exit 2.
var errRemoteScheme = errors.New("unsupported remote")

// parseTierRemote parses a --remote URI: file://DIR; s3:// is refused.
func parseTierRemote(uri string) (string, error) {
	if strings.HasPrefix(uri, "s3://") {
		return "", fmt.Errorf("%w: --remote %q: s3:// remotes are not built into this segviz yet (the S3 remote is a separate module); give file://DIR, a LocalTieredStorage directory", errRemoteScheme, uri)
	}
	dir, err := parseRemote(uri)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errRemoteScheme, err)
	}
	return filepath.ToSlash(filepath.Clean(dir)), nil
}

func runTier(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "segviz tier: give a subcommand: status or upload (see segviz tier --help)")
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, tierHelp)
		return exitOK
	case "status":
		return runTierCmd("status", args[1:], stdout, stderr)
	case "upload":
		return runTierCmd("upload", args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "segviz tier: unknown subcommand %q: want status or upload (see segviz tier --help)\n", args[0])
	return exitUsage
}

// tierOpts are the parsed flags of a tier subcommand.
type tierOpts struct {
	sub    string
	broker config.Broker
	// brokerStart fixes the phase of the retention checks (hasStart).
	brokerStart int64
	hasStart    bool
	uri         string
	remote      string // the directory, "" without --remote
	now         int64
	json        bool
	cfg         config.Config
	dir         string
}

func runTierCmd(sub string, args []string, stdout, stderr io.Writer) int {
	name := "tier " + sub
	fset := newFlagSet(name, tierHelp, stderr)
	topicFlags := []struct{ name, usage string }{
		{config.RemoteStorageEnable, "remote.storage.enable: tier the topic (default false; an upload needs true)"},
		{config.LocalRetentionMs, "local.retention.ms: how long copied segments stay on local disk (default -2: retention.ms)"},
		{config.LocalRetentionBytes, "local.retention.bytes: local size kept of copied segments (default -2: retention.bytes)"},
		{config.RetentionMs, "retention.ms: total retention, local and remote (default 604800000, 7 days; -1 disables)"},
		{config.RetentionBytes, "retention.bytes: total size kept, remote plus local-only (default -1, disabled)"},
		{config.CleanupPolicy, "cleanup.policy: delete (compacted topics are not tiered)"},
	}
	vals := map[string]*string{}
	for _, f := range topicFlags {
		vals[f.name] = fset.String(f.name, "", f.usage)
	}
	var cfgPairs multiFlag
	fset.Var(&cfgPairs, "config", "a topic setting `key=value` (repeatable)")
	cfgFile := fset.String("config-file", "", "a .properties `file` of topic settings")
	nowFlag := fset.String("now", "", "the time of the check, epoch ms or RFC 3339 (default: the current time)")
	startFlag := fset.String("broker-start", "", "status: when the broker started, epoch ms or RFC 3339: fixes the phase of the retention checks in the forecast")
	for _, b := range []struct{ name, usage string }{
		{config.LogRetentionCheckIntervalMs, "status: log.retention.check.interval.ms, the period of the checks that delete local segments (default 300000)"},
		{config.LogInitialTaskDelayMs, "status: log.initial.task.delay.ms, the first check's delay after --broker-start (default 30000)"},
		{config.RemoteLogManagerTaskIntervalMs, "status: remote.log.manager.task.interval.ms, the period of the copy and expiration tasks (default 30000)"},
	} {
		vals[b.name] = fset.String(b.name, "", b.usage)
	}
	var o tierOpts
	o.sub = sub
	fset.StringVar(&o.uri, "remote", "", "the remote store: file://`DIR`, a LocalTieredStorage directory")
	fset.BoolVar(&o.json, "json", false, "print one JSON object")
	var dirs []string
	for rest := args; ; {
		if code := parseFlags(fset, rest, stdout); code >= 0 {
			return code
		}
		if fset.NArg() == 0 {
			break
		}
		dirs = append(dirs, fset.Arg(0))
		rest = fset.Args()[1:]
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "segviz %s: "+format+"\n", append([]any{name}, a...)...)
		return exitUsage
	}
	if len(dirs) != 1 {
		return usageErr("give one partition directory (got %d arguments); see segviz tier --help", len(dirs))
	}
	props, brokerProps := map[string]string{}, map[string]string{}
	setProp := func(k, v string) {
		switch k {
		case config.LogRetentionCheckIntervalMs, config.LogInitialTaskDelayMs, config.RemoteLogManagerTaskIntervalMs:
			brokerProps[k] = v
		default:
			props[k] = v
		}
	}
	if bad, err := applyConfig(*cfgFile, cfgPairs, setProp); err != nil {
		fmt.Fprintf(stderr, "segviz %s: %v\n", name, err)
		return exitFailure
	} else if bad != "" {
		return usageErr("--config %q: want key=value", bad)
	}
	fset.Visit(func(f *flag.Flag) {
		if v, ok := vals[f.Name]; ok {
			setProp(f.Name, *v)
		}
	})
	var err error
	if o.cfg, err = (config.ParseOptions{AllowSmallSegments: true}).Parse(props); err != nil {
		return usageErr("%v", err)
	}
	if o.broker, err = config.ParseBroker(brokerProps); err != nil {
		return usageErr("%v", err)
	}
	if *startFlag != "" {
		if o.brokerStart, err = parseTimeFlag(*startFlag); err != nil {
			return usageErr("--broker-start: %v", err)
		}
		o.hasStart = true
	}
	o.now = time.Now().UnixMilli()
	if *nowFlag != "" {
		if o.now, err = parseTimeFlag(*nowFlag); err != nil {
			return usageErr("--now: %v", err)
		}
	}
	if o.uri == "" && sub == "upload" {
		return usageErr("give the remote with --remote file://DIR")
	}
	if o.uri != "" {
		if o.remote, err = parseTierRemote(o.uri); err != nil {
			return usageErr("%v", err)
		}
		st, err := os.Stat(o.remote)
		if err != nil {
			fmt.Fprintf(stderr, "segviz %s: the remote %s: %v\n", name, o.uri, err)
			return exitFailure
		}
		if !st.IsDir() {
			return usageErr("the remote %s is not a directory", o.uri)
		}
	}
	if o.cfg.Compact() {
		return usageErr("%s has cleanup.policy %v: compacted topics are not tiered (Kafka's rule, KAFKA-19273)", dirs[0], o.cfg.CleanupPolicy)
	}
	dir, code := osDir(name, dirs[0], stderr)
	if code >= 0 {
		return code
	}
	o.dir = dir
	if code := checkPartition(name, vfs.OS(), dir, stderr); code >= 0 {
		return code
	}
	if sub == "status" {
		return tierStatus(o, stdout, stderr)
	}
	return tierUpload(o, stdout, stderr)
}

// tierTopic reads DIR's topic id (partition.metadata) and names the
// partition's remote identity; a missing id is a refusal.
func tierTopic(fsys vfs.FS, dir string, tp checkpoint.TopicPartition) (tier.TopicIDPartition, error) {
	pm, err := checkpoint.ReadPartitionMetadata(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && pm.TopicID.IsZero() {
		return tier.TopicIDPartition{}, fmt.Errorf("%w: %s has no %s with a topic id (a broker writes it when it creates the partition); the remote names the partition by it", tier.ErrNoTopicID, dir, checkpoint.PartitionMetadataFile)
	}
	if err != nil {
		return tier.TopicIDPartition{}, err
	}
	return tier.TopicIDPartition{TopicID: pm.TopicID, Topic: tp.Topic, Partition: tp.Partition}, nil
}

// tierErrCode maps an error to an exit status: 2 for tier's refusals, 1
// for damage, 3 for the rest.
func tierErrCode(err error) int {
	var ce *format.CorruptionError
	var le *kafkalog.CorruptLogError
	switch {
	case errors.Is(err, tier.ErrCompactedTopic), errors.Is(err, tier.ErrRemoteStorageDisabled), errors.Is(err, tier.ErrNoTopicID):
		return exitUsage
	case errors.As(err, &ce), errors.As(err, &le):
		return exitProblem
	}
	return exitFailure
}

func tierStatus(o tierOpts, stdout, stderr io.Writer) int {
	name := "tier status"
	fsys := vfs.OS()
	l, err := kafkalog.Open(fsys, o.dir, o.cfg, kafkalog.Options{ReadOnly: true, Clock: fixedClock(o.now)})
	if err != nil {
		fmt.Fprintf(stderr, "segviz %s: %v\n", name, err)
		return tierErrCode(err)
	}
	defer l.Close()
	if hw, _ := highWatermark(fsys, o.dir); hw > 0 {
		l.SetHighWatermark(hw)
	}
	var rs tier.RemoteLog
	discovered := false
	if o.remote != "" {
		tp, err := remotePartition(fsys, o.remote, o.dir)
		if err != nil {
			fmt.Fprintf(stderr, "segviz %s: %v\n", name, err)
			return tierErrCode(err)
		}
		if rs, discovered, err = remoteMetadata(tier.NewDir(vfs.OS(), o.remote), tp); err != nil {
			fmt.Fprintf(stderr, "segviz %s: the remote %s: %v\n", name, o.uri, err)
			return tierErrCode(err)
		}
	}
	lso, err := l.ReplayLastStableOffset(l.HighWatermark())
	if err != nil {
		fmt.Fprintf(stderr, "segviz %s: %v\n", name, err)
		return tierErrCode(err)
	}
	views := l.Segments()
	locals := make([]tier.LocalSegment, len(views))
	bases := make([]int64, len(views))
	for i, v := range views {
		ts, err := v.LargestTimestamp()
		if err != nil {
			fmt.Fprintf(stderr, "segviz %s: %v\n", name, err)
			return tierErrCode(err)
		}
		locals[i] = tier.LocalSegment{BaseOffset: v.BaseOffset(), Size: v.Size(), LargestTimestamp: ts}
		bases[i] = v.BaseOffset()
	}
	next := func(i int) int64 {
		if i+1 < len(views) {
			return bases[i+1]
		}
		return l.LogEndOffset()
	}
	localStart := l.LogStartOffset()
	high := rs.HighestCopiedOffset()
	out := tierStatusJSON{
		Partition: l.TopicPartition().String(), Now: o.now,
		LogStartOffset: rs.LogStartOffset(localStart), LocalLogStartOffset: localStart, LogEndOffset: l.LogEndOffset(),
		HighWatermark: l.HighWatermark(), LastStableOffset: lso, HighestCopiedOffset: high,
		Discovered: discovered,
		Segments:   []tierSegJSON{},
		NextCheck:  tierNextJSON{Copy: []tierSegJSON{}, DeleteLocal: []tierSegJSON{}, DeleteRemote: []tierSegJSON{}},
	}
	if o.uri != "" {
		out.Remote = strp(o.uri)
	}
	// One list: each local segment (both when a finished copy has its
	// offsets), then each remote copy not shown with one.
	shown := map[tier.UUID]bool{}
	localSeg := func(i int) tierSegJSON {
		s := tierSegJSON{BaseOffset: bases[i], NextOffset: next(i), Size: locals[i].Size, Where: "local", MaxTimestamp: locals[i].LargestTimestamp}
		for _, m := range rs {
			if m.State == tier.CopySegmentFinished && m.StartOffset == bases[i] && m.EndOffset+1 == next(i) {
				s.Where, s.RemoteState, s.RemoteID = "both", strp(m.State.String()), strp(m.ID.ID.String())
				shown[m.ID.ID] = true
			}
		}
		return s
	}
	for i := range views {
		out.Segments = append(out.Segments, localSeg(i))
	}
	for _, m := range rs {
		if !shown[m.ID.ID] {
			out.Segments = append(out.Segments, remoteSegJSON(m, remoteWhere(m)))
		}
	}
	sortSegs(out.Segments)
	// The next check, as tier.Tier plans it.
	for _, c := range tier.PlanCopy(bases, high, out.LogStartOffset, lso) {
		for i := range bases {
			if bases[i] == c.BaseOffset {
				s := localSeg(i)
				s.NextOffset = c.NextBaseOffset
				out.NextCheck.Copy = append(out.NextCheck.Copy, s)
			}
		}
	}
	// Local retention sees the copies of this check as done: the next
	// upload copies first, then deletes.
	afterCopy := high
	if n := len(out.NextCheck.Copy); n > 0 {
		afterCopy = max(afterCopy, out.NextCheck.Copy[n-1].NextOffset-1)
	}
	lp := tier.LocalParams{
		NowMs: o.now, LogEndOffset: l.LogEndOffset(), HighWatermark: l.HighWatermark(),
		HighestCopiedOffset: afterCopy, LogStartOffset: out.LogStartOffset,
		RetentionMs: o.cfg.EffectiveLocalRetentionMs(), RetentionBytes: o.cfg.EffectiveLocalRetentionBytes(),
	}
	if o.cfg.RemoteLogCopyDisable {
		lp.RetentionMs, lp.RetentionBytes = o.cfg.RetentionMs, o.cfg.RetentionBytes
	}
	if o.cfg.RemoteStorageEnable {
		n, why := tier.PlanLocal(locals, lp)
		for i := range n {
			s := localSeg(i)
			s.Reason = strp(why[i])
			out.NextCheck.DeleteLocal = append(out.NextCheck.DeleteLocal, s)
		}
		// Total retention runs after the copies: they count as remote.
		served := rs.Served()
		for _, c := range out.NextCheck.Copy {
			served = append(served, tier.SegmentMetadata{StartOffset: c.BaseOffset, EndOffset: c.NextOffset - 1,
				MaxTimestampMs: c.MaxTimestamp, SegmentSizeInBytes: c.Size, State: tier.CopySegmentFinished})
		}
		var onlyLocal int64
		for _, s := range locals {
			if s.BaseOffset > afterCopy {
				onlyLocal += s.Size
			}
		}
		n, why = tier.PlanRemote(served, tier.RemoteParams{NowMs: o.now, OnlyLocalSize: onlyLocal, RetentionMs: o.cfg.RetentionMs, RetentionBytes: o.cfg.RetentionBytes})
		for i := range n {
			s := remoteSegJSON(served[i], "remote")
			if served[i].ID.ID.IsZero() { // copied by the same check
				s.RemoteID = nil
			}
			s.Reason = strp(why[i])
			out.NextCheck.DeleteRemote = append(out.NextCheck.DeleteRemote, s)
		}
	}
	if o.cfg.RemoteStorageEnable {
		if out.Forecast, err = tierForecast(o, rs, locals, l, lso); err != nil {
			fmt.Fprintf(stderr, "segviz %s: %v\n", name, err)
			return tierErrCode(err)
		}
	}
	if !report(stdout, stderr, name, o.json, out, func() { printTierStatus(stdout, o, out) }) {
		return exitFailure
	}
	return exitOK
}

func sortSegs(s []tierSegJSON) {
	for i := 1; i < len(s); i++ { // few rows; a stable insertion sort keeps local first
		for j := i; j > 0 && s[j].BaseOffset < s[j-1].BaseOffset; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func printTierStatus(w io.Writer, o tierOpts, st tierStatusJSON) {
	remote := "no remote given (--remote): the copy plan is the first upload's, to an empty remote"
	if st.Remote != nil {
		remote = "remote " + *st.Remote
	}
	fmt.Fprintf(w, "partition %s (%s), %s; at %s\n", st.Partition, o.dir, remote, retention.FormatTime(st.Now))
	fmt.Fprintf(w, "earliest (log start offset) %d, earliest-local %d, log end offset %d, high watermark %d, last stable offset %d\n",
		st.LogStartOffset, st.LocalLogStartOffset, st.LogEndOffset, st.HighWatermark, st.LastStableOffset)
	if st.HighestCopiedOffset < 0 {
		fmt.Fprintln(w, "highest copied offset: none (nothing in remote storage)")
	} else {
		fmt.Fprintf(w, "highest copied offset: %d\n", st.HighestCopiedOffset)
	}
	if st.Discovered {
		fmt.Fprintln(w, "the remote has no segkit metadata (.segkit-tier): its segments are read from the files alone, as a broker's LocalTieredStorage writes them (the broker keeps the metadata in its __remote_log_metadata topic)")
	}
	printTierSegs(w, "segments", st.Segments)
	if !o.cfg.RemoteStorageEnable {
		fmt.Fprintln(w, "remote.storage.enable is false (give --remote.storage.enable true): the next check would copy nothing and apply no tiered retention; the copy plan below is what it would copy once enabled")
	}
	say := func(what string, segs []tierSegJSON, none string) {
		if len(segs) == 0 {
			fmt.Fprintf(w, "next check %s: %s\n", what, none)
			return
		}
		var n int64
		for _, s := range segs {
			n += s.Size
		}
		fmt.Fprintf(w, "next check %s: %s, %d bytes\n", what, plural(len(segs), "segment"), n)
		for _, s := range segs {
			why := ""
			if s.Reason != nil {
				why = ": " + *s.Reason
			}
			fmt.Fprintf(w, "  %d (%s, %d bytes)%s\n", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), s.Size, why)
		}
	}
	say("copies", st.NextCheck.Copy, "nothing (only segments whose successor starts at or below the last stable offset are copied; never the active one)")
	say("deletes locally", st.NextCheck.DeleteLocal, "nothing")
	say("deletes remotely", st.NextCheck.DeleteRemote, "nothing")
	if st.Forecast == nil {
		return
	}
	fmt.Fprintf(w, "forecast, if nothing more is appended (retention %s; copy and expiration %s; a time is the latest the task can run when its phase is unknown):\n",
		st.Forecast.RetentionChecks, st.Forecast.Tasks)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  BASE\tNEXT\tWHERE\tCOPIED BY\tON LOCAL DISK UNTIL\tREADABLE UNTIL\tWHY")
	at := func(t *int64, none string) string {
		if t == nil {
			return none
		}
		return retention.FormatTime(*t)
	}
	for _, s := range st.Forecast.Segments {
		copied, local := at(s.CopiedBy, "never"), at(s.LocalUntil, "never")
		if s.Where != "local" {
			copied = "copied"
		}
		if s.Where == "remote" {
			local = "-"
		}
		why := "-"
		if s.LocalReason != nil || s.Reason != nil {
			why = strings.TrimPrefix(strings.Join([]string{deref(s.LocalReason, ""), deref(s.Reason, "")}, " / "), " / ")
			why = strings.TrimSuffix(why, " / ")
		}
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%s\t%s\t%s\n", s.BaseOffset, s.NextOffset, s.Where, copied, local, at(s.ReadableUntil, "never"), why)
	}
	tw.Flush()
}

func deref(s *string, none string) string {
	if s == nil {
		return none
	}
	return *s
}

func printTierSegs(w io.Writer, title string, segs []tierSegJSON) {
	fmt.Fprintf(w, "%s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  BASE\tNEXT\tBYTES\tWHERE\tREMOTE STATE\tREMOTE ID")
	for _, s := range segs {
		state, id := "-", "-"
		if s.RemoteState != nil {
			state = *s.RemoteState
		}
		if s.RemoteID != nil {
			id = *s.RemoteID
		}
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%s\t%s\t%s\n", s.BaseOffset, s.NextOffset, s.Size, s.Where, state, id)
	}
	tw.Flush()
}

// localRule maps a local-retention reason of package tier to the rule
// names of a timeline.Clean.
func localRule(reason string) string {
	switch reason {
	case tier.ReasonLocalMs, tier.ReasonRetentionMs:
		return string(retention.ReasonTime)
	case tier.ReasonLocalBytes, tier.ReasonRetentionBytes:
		return string(retention.ReasonSize)
	}
	return string(retention.ReasonLogStartOffset)
}

// tierRecorder turns tier's events into timeline instants.
type tierRecorder struct {
	tl       *timeline.Timeline
	uri      string
	cfg      config.Config
	now      int64
	l        *kafkalog.Log
	before   []timeline.SegmentRef // local segments before the current step
	start    int64                 // the local log start offset before it
	inLocal  bool                  // DeleteLocal runs: its clean is recorded around it
	localWhy []string              // its plan's reason per segment
	pending  map[tier.UUID]*timeline.Txn
	done     []timeline.Instant
	err      error
	// What went, for the report.
	deletedLocal  []tierSegJSON
	deletedRemote []tierSegJSON
	abandoned     []tierSegJSON
}

func (r *tierRecorder) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *tierRecorder) snapshot() {
	r.start = r.l.LogStartOffset()
	r.before = r.before[:0]
	views := r.l.Segments()
	for i, v := range views {
		next := r.l.LogEndOffset()
		if i+1 < len(views) {
			next = views[i+1].BaseOffset()
		}
		ts, _ := v.LargestTimestamp()
		r.before = append(r.before, timeline.SegmentRef{BaseOffset: v.BaseOffset(), NextOffset: next, Size: v.Size(), LargestTimestamp: ts})
	}
}

func tierRef(m tier.SegmentMetadata) timeline.SegmentRef {
	return timeline.SegmentRef{BaseOffset: m.StartOffset, NextOffset: m.EndOffset + 1, Size: m.SegmentSizeInBytes, LargestTimestamp: m.MaxTimestampMs}
}

func (r *tierRecorder) begin(m tier.SegmentMetadata, op, rule string) {
	p := &timeline.Tier{Op: op, Segment: tierRef(m), RemoteSegmentID: m.ID.ID.String(), Remote: r.uri, Rule: rule}
	x, err := r.tl.Begin(timeline.ActionTier, p)
	if err != nil {
		r.fail(fmt.Errorf("record the %s of remote segment %s: %w", op, m.ID.ID, err))
		return
	}
	if err := x.Inflight(); err != nil {
		r.fail(fmt.Errorf("record the %s of remote segment %s: %w", op, m.ID.ID, err))
		return
	}
	r.pending[m.ID.ID] = x
}

func (r *tierRecorder) complete(m tier.SegmentMetadata) {
	x := r.pending[m.ID.ID]
	if x == nil {
		return
	}
	delete(r.pending, m.ID.ID)
	if err := x.Complete(x.Instant().Plan); err != nil {
		r.fail(fmt.Errorf("record remote segment %s: %w", m.ID.ID, err))
		return
	}
	r.done = append(r.done, x.Instant())
}

func (r *tierRecorder) onEvent(e tier.Event) {
	m := e.Segment
	switch e.Kind {
	case tier.EventCopyStarted:
		r.begin(m, timeline.TierCopy, "")
	case tier.EventCopyFinished:
		r.complete(m)
	case tier.EventDeleteStarted:
		if x := r.pending[m.ID.ID]; x != nil { // a failed copy, deleted at once
			delete(r.pending, m.ID.ID)
			if err := x.Rollback("the copy failed; its files are deleted, as Kafka deletes a failed copy"); err != nil {
				r.fail(err)
			}
		}
		if !m.Abandoned {
			rule := e.Reason // "start-up": an interrupted deletion finished
			switch e.Reason {
			case tier.ReasonRetentionMs, tier.ReasonRetentionBytes, tier.ReasonLogStartOffset:
				rule = localRule(e.Reason) // timeline.Tier's rule names
			}
			r.begin(m, timeline.TierDelete, rule)
		}
	case tier.EventDeleteFinished:
		s := remoteSegJSON(m, "none")
		s.Reason = strp(e.Reason)
		if m.Abandoned {
			r.abandoned = append(r.abandoned, s)
			return
		}
		r.deletedRemote = append(r.deletedRemote, s)
		r.complete(m)
	case tier.EventLocalDelete:
		segs := r.before[:min(e.Segments, len(r.before))]
		for i, s := range segs {
			why := e.Reason
			if r.inLocal && i < len(r.localWhy) {
				why = r.localWhy[i]
			}
			r.deletedLocal = append(r.deletedLocal, tierSegJSON{BaseOffset: s.BaseOffset, NextOffset: s.NextOffset, Size: s.Size, Where: "remote", MaxTimestamp: s.LargestTimestamp, Reason: strp(why)})
		}
		if r.inLocal {
			return // recorded around DeleteLocal
		}
		// Deleted below a log start offset that total retention (or an
		// interrupted run) moved: recorded once done.
		c := r.clean(localRule(e.Reason), segs, e.LocalLogStartOffset)
		x, err := r.tl.Begin(timeline.ActionClean, c)
		if err == nil {
			err = x.Inflight()
		}
		if err == nil {
			err = x.Complete(c)
		}
		if err != nil {
			r.fail(fmt.Errorf("record the local deletion: %w", err))
			return
		}
		r.done = append(r.done, x.Instant())
		r.before, r.start = r.before[len(segs):], e.LocalLogStartOffset
	}
}

func (r *tierRecorder) clean(rule string, segs []timeline.SegmentRef, newStart int64) *timeline.Clean {
	return &timeline.Clean{Rule: rule, Now: r.now,
		Config:   timeline.RetentionConfig{RetentionMs: r.cfg.EffectiveLocalRetentionMs(), RetentionBytes: r.cfg.EffectiveLocalRetentionBytes(), FileDeleteDelayMs: r.cfg.FileDeleteDelayMs},
		Segments: append([]timeline.SegmentRef(nil), segs...), OldLogStartOffset: r.start, NewLogStartOffset: newStart, Local: true}
}

// deleteLocal applies local retention as one clean instant: begun with
// tier's plan, inflight before the first change, completed after.
func (r *tierRecorder) deleteLocal(t *tier.Tier) error {
	r.snapshot()
	n, why, err := t.LocalPlan()
	if err != nil || n == 0 {
		return err
	}
	old := r.start
	c := r.clean(localRule(why[n-1]), r.before[:n], max(old, r.before[n].BaseOffset))
	x, err := r.tl.Begin(timeline.ActionClean, c)
	if err != nil {
		return fmt.Errorf("record the local deletion: %w", err)
	}
	if err := x.Inflight(); err != nil {
		return fmt.Errorf("record the local deletion: %w", err)
	}
	r.inLocal, r.localWhy = true, why
	got, err := t.DeleteLocal()
	r.inLocal = false
	if err != nil {
		if r.l.LogStartOffset() == old { // its first change is that move
			x.Rollback("failed before changing anything: " + err.Error())
		}
		return err
	}
	res := *c
	res.NewLogStartOffset = r.l.LogStartOffset()
	res.Segments = r.before[:got]
	if err := x.Complete(&res); err != nil {
		return fmt.Errorf("the local deletion is done, but recording it failed: %w", err)
	}
	r.done = append(r.done, x.Instant())
	return nil
}

func tierUpload(o tierOpts, stdout, stderr io.Writer) int {
	name := "tier upload"
	fsys := vfs.OS()
	say := func(err error) int {
		fmt.Fprintf(stderr, "segviz %s: %v\n", name, err)
		return tierErrCode(err)
	}
	// The refusals come before the lock: nothing is written.
	if !o.cfg.RemoteStorageEnable || o.cfg.RemoteLogCopyDisable {
		fmt.Fprintf(stderr, "segviz %s: %v: give --remote.storage.enable true (and no remote.log.copy.disable); nothing was written\n", name, tier.ErrRemoteStorageDisabled)
		return exitUsage
	}
	tp, err := checkpoint.ParseDirName(path.Base(o.dir))
	if err != nil {
		return say(err)
	}
	ttp, err := tierTopic(fsys, o.dir, tp)
	if err != nil {
		return say(err)
	}
	if _, discovered, err := remoteMetadata(tier.NewDir(vfs.OS(), o.remote), ttp); err != nil {
		return say(err)
	} else if discovered {
		fmt.Fprintf(stderr, "segviz %s: the remote %s holds segments of %s but no segkit metadata (.segkit-tier): a broker's LocalTieredStorage wrote them, and keeps their metadata in its __remote_log_metadata topic; segkit does not upload beside a broker's remote (nothing was written)\n", name, o.uri, ttp)
		return exitUsage
	}
	lock, err := kafkalog.LockPartition(fsys, o.dir)
	if err != nil {
		if code := writerError(name, err, stderr); code >= 0 {
			return code
		}
		return say(err)
	}
	defer lock.Close() // after the log's Close: the lock goes last
	if _, err := timeline.Open(fsys, o.dir, timeline.Options{ReadOnly: true}); err != nil {
		fmt.Fprintf(stderr, "segviz %s: the timeline of %s cannot be read, so nothing was written: %v\n", name, o.dir, err)
		return exitFailure
	}
	clk := fixedClock(o.now)
	l, err := kafkalog.Open(fsys, o.dir, o.cfg, kafkalog.Options{Locked: true, Clock: clk, Timeline: true})
	if err != nil {
		if code := writerError(name, err, stderr); code >= 0 {
			return code
		}
		return say(err)
	}
	closed := false
	defer func() {
		if !closed {
			l.Close()
		}
	}()
	printRemoved(stderr, name, l.LoadReport())
	for _, res := range l.LoadReport().Resolved {
		what := "rolled back"
		if res.Completed {
			what = "completed"
		}
		fmt.Fprintf(stderr, "segviz %s: %s the %s instant %s an interrupted run left %s: %s\n", name, what, res.Instant.Action, res.Instant.Time, res.Instant.State, res.Why)
	}
	if later, err := l.Timeline().Instants(timeline.Filter{Since: timeline.InstantTime{Millis: o.now + 1}}); err == nil && len(later) > 0 {
		last := later[len(later)-1]
		fmt.Fprintf(stderr, "segviz %s: warning: the timeline has an instant at %s, after --now %s: instant times only increase, so this upload's instants are stamped after it\n",
			name, retention.FormatTime(last.Time.Millis), retention.FormatTime(o.now))
	}
	if hw, _ := highWatermark(fsys, o.dir); hw > 0 {
		l.SetHighWatermark(hw)
	}
	before, err := vfs.ReadDir(fsys, o.dir)
	if err != nil {
		return say(err)
	}
	rec := &tierRecorder{tl: l.Timeline(), uri: o.uri, cfg: o.cfg, now: o.now, l: l, pending: map[tier.UUID]*timeline.Txn{}}
	rec.snapshot()
	t, srep, err := tier.Open(fsys, l, tier.NewDir(vfs.OS(), o.remote), tier.Options{Clock: clk, OnEvent: rec.onEvent})
	out := tierUploadJSON{Partition: l.TopicPartition().String(), Remote: o.uri, Now: o.now,
		Startup: tierStartupJSON{CopiesAbandoned: []tierSegJSON{}, DeletesFinished: []tierSegJSON{}, TempRemoved: []string{}, Unknown: []string{}, Missing: []string{}},
		Copied:  []tierSegJSON{}, DeletedLocal: []tierSegJSON{}, DeletedRemote: []tierSegJSON{}, RemovedFiles: []string{}, Instants: []instantJSON{}}
	for _, m := range srep.CopiesAbandoned {
		out.Startup.CopiesAbandoned = append(out.Startup.CopiesAbandoned, remoteSegJSON(m, "none"))
	}
	for _, m := range srep.DeletesFinished {
		out.Startup.DeletesFinished = append(out.Startup.DeletesFinished, remoteSegJSON(m, "none"))
	}
	out.Startup.TempRemoved = append(out.Startup.TempRemoved, srep.TempRemoved...)
	out.Startup.Unknown = append(out.Startup.Unknown, srep.Unknown...)
	out.Startup.Missing = append(out.Startup.Missing, srep.Missing...)
	out.Startup.LocalSegmentsDeleted = srep.LocalSegmentsDeleted
	var runErr error
	if err != nil {
		runErr = fmt.Errorf("opening the remote %s: %w", o.uri, err)
	} else {
		up, err := t.Upload()
		out.LastStableOffset = up.LastStableOffset
		for _, m := range up.Copied {
			out.Copied = append(out.Copied, remoteSegJSON(m, "both"))
		}
		if err != nil {
			runErr = fmt.Errorf("upload: %w", err)
		} else if err := rec.deleteLocal(t); err != nil {
			runErr = fmt.Errorf("local retention: %w", err)
		} else {
			rec.snapshot()
			if _, err := t.DeleteRemote(); err != nil {
				runErr = fmt.Errorf("total retention: %w", err)
			}
		}
		out.LogStartOffset, out.LocalLogStartOffset, out.HighestCopiedOffset = t.LogStartOffset(), t.LocalLogStartOffset(), t.HighestCopiedOffset()
	}
	for _, s := range rec.deletedLocal {
		out.DeletedLocal = append(out.DeletedLocal, s)
		out.DeletedLocalBytes += s.Size
	}
	for _, s := range rec.deletedRemote {
		out.DeletedRemote = append(out.DeletedRemote, s)
		out.DeletedRemoteBytes += s.Size
	}
	for _, inst := range rec.done {
		out.Instants = append(out.Instants, instantJSONOf(inst))
	}
	closed = true
	closeErr := l.Close()
	removed, _ := removedFiles(fsys, o.dir, before)
	for _, f := range removed {
		out.RemovedFiles = append(out.RemovedFiles, f.Name())
	}
	if !report(stdout, stderr, name, o.json, out, func() { printTierUpload(stdout, o, out, srep, rec.abandoned, rec.done) }) {
		return exitFailure
	}
	switch {
	case runErr != nil:
		fmt.Fprintf(stderr, "segviz %s: %v\n", name, runErr)
		if code := tierErrCode(runErr); code != exitFailure {
			return code
		}
		fmt.Fprintf(stderr, "segviz %s: what was done is durable and listed above; the next upload resolves what this one left midway\n", name)
		return exitFailure
	case rec.err != nil:
		fmt.Fprintf(stderr, "segviz %s: the upload is done, but recording it on the timeline failed: %v\n", name, rec.err)
		return exitFailure
	case closeErr != nil:
		fmt.Fprintf(stderr, "segviz %s: the upload is done and recorded, but closing the partition failed: %v\n", name, closeErr)
		return exitFailure
	}
	return exitOK
}

func printTierUpload(w io.Writer, o tierOpts, out tierUploadJSON, srep tier.StartReport, abandoned []tierSegJSON, insts []timeline.Instant) {
	fmt.Fprintf(w, "partition %s (%s), remote %s; at %s\n", out.Partition, o.dir, o.uri, retention.FormatTime(out.Now))
	for _, s := range out.Startup.CopiesAbandoned {
		fmt.Fprintf(w, "start-up: removed the copy of segment %d (%s, %d bytes, remote id %s) an interrupted upload left unfinished (COPY_SEGMENT_STARTED): Kafka deletes a failed copy\n", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), s.Size, *s.RemoteID)
	}
	for _, s := range out.Startup.DeletesFinished {
		fmt.Fprintf(w, "start-up: finished the deletion of remote segment %d (%s, %d bytes, remote id %s) an interrupted run left at DELETE_SEGMENT_STARTED\n", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), s.Size, *s.RemoteID)
	}
	for _, n := range srep.TempRemoved {
		fmt.Fprintf(w, "start-up: removed %s, a temporary file of an interrupted write\n", n)
	}
	for _, n := range srep.Unknown {
		fmt.Fprintf(w, "start-up: warning: the remote holds %s, which no metadata knows: left in place\n", n)
	}
	for _, n := range srep.Missing {
		fmt.Fprintf(w, "start-up: warning: the remote lacks %s, a file of a finished copy\n", n)
	}
	if len(out.Copied) == 0 {
		fmt.Fprintf(w, "copied nothing (last stable offset %d; only segments whose successor starts at or below it are copied, never the active one)\n", out.LastStableOffset)
	} else {
		var n int64
		for _, s := range out.Copied {
			n += s.Size
		}
		fmt.Fprintf(w, "copied %s, %d bytes, to the remote (last stable offset %d):\n", plural(len(out.Copied), "segment"), n, out.LastStableOffset)
		for _, s := range out.Copied {
			fmt.Fprintf(w, "  %d (%s, %d bytes): remote id %s\n", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), s.Size, *s.RemoteID)
		}
	}
	for _, s := range abandoned {
		fmt.Fprintf(w, "removed the remote files of the failed copy of segment %d (%s, remote id %s)\n", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), *s.RemoteID)
	}
	if len(out.DeletedLocal) == 0 {
		fmt.Fprintln(w, "deleted nothing locally")
	} else {
		fmt.Fprintf(w, "deleted locally %s, %d bytes (their records stay readable from the remote):\n", plural(len(out.DeletedLocal), "segment"), out.DeletedLocalBytes)
		for _, s := range out.DeletedLocal {
			fmt.Fprintf(w, "  %d (%s, %d bytes): %s\n", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), s.Size, *s.Reason)
		}
	}
	if len(out.DeletedRemote) == 0 {
		fmt.Fprintln(w, "deleted nothing remotely")
	} else {
		fmt.Fprintf(w, "deleted remotely %s, %d bytes (their records are gone):\n", plural(len(out.DeletedRemote), "segment"), out.DeletedRemoteBytes)
		for _, s := range out.DeletedRemote {
			fmt.Fprintf(w, "  %d (%s, %d bytes, remote id %s): %s\n", s.BaseOffset, offsetRange(s.BaseOffset, s.NextOffset), s.Size, *s.RemoteID, *s.Reason)
		}
	}
	if len(out.RemovedFiles) > 0 {
		fmt.Fprintf(w, "removed %s from %s: %s\n", plural(len(out.RemovedFiles), "file"), o.dir, strings.Join(out.RemovedFiles, ", "))
	}
	high := "none"
	if out.HighestCopiedOffset >= 0 {
		high = fmt.Sprint(out.HighestCopiedOffset)
	}
	fmt.Fprintf(w, "now: earliest %d, earliest-local %d, highest copied offset %s\n", out.LogStartOffset, out.LocalLogStartOffset, high)
	if len(insts) > 0 {
		fmt.Fprintf(w, "recorded in %s/%s (see \"segviz history %s\"):\n", o.dir, timeline.DirName, o.dir)
		for _, inst := range insts {
			fmt.Fprintf(w, "  %s %s, completed %s: %s\n", inst.Time, inst.Action, inst.Completed, instantSummary(inst))
		}
	}
}
