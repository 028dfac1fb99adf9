package config

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// kafkaDefaults are Kafka 4.x's defaults as `kafka-configs --describe
// --all` prints them (LogConfig.java, ServerLogConfigs.java).
var kafkaDefaults = map[string]string{
	SegmentBytes:                "1073741824",
	SegmentMs:                   "604800000",
	SegmentJitterMs:             "0",
	SegmentIndexBytes:           "10485760",
	FlushMessages:               "9223372036854775807",
	FlushMs:                     "9223372036854775807",
	RetentionBytes:              "-1",
	RetentionMs:                 "604800000",
	MaxMessageBytes:             "1048588",
	IndexIntervalBytes:          "4096",
	DeleteRetentionMs:           "86400000",
	MinCompactionLagMs:          "0",
	MaxCompactionLagMs:          "9223372036854775807",
	FileDeleteDelayMs:           "60000",
	MinCleanableDirtyRatio:      "0.5",
	CleanupPolicy:               "delete",
	UncleanLeaderElectionEnable: "false",
	MinInsyncReplicas:           "1",
	CompressionType:             "producer",
	CompressionGzipLevel:        "-1",
	CompressionLz4Level:         "9",
	CompressionZstdLevel:        "3",
	Preallocate:                 "false",
	MessageTimestampType:        "CreateTime",
	MessageTimestampBeforeMaxMs: "9223372036854775807",
	MessageTimestampAfterMaxMs:  "3600000",
	RemoteStorageEnable:         "false",
	LocalRetentionMs:            "-2",
	LocalRetentionBytes:         "-2",
	RemoteLogCopyDisable:        "false",
	RemoteLogDeleteOnDisable:    "false",
}

func TestDefaultsAreKafkas(t *testing.T) {
	got := Default().Props()
	if !reflect.DeepEqual(got, kafkaDefaults) {
		for k, v := range kafkaDefaults {
			if got[k] != v {
				t.Errorf("%s: default %q, Kafka's is %q", k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := kafkaDefaults[k]; !ok {
				t.Errorf("%s: not a Kafka default", k)
			}
		}
	}
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("Parse(nil) = %+v, want Default()", c)
	}
	if err := Default().Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	if got := len(Names()); got != len(kafkaDefaults)+1 { // + internal.segment.bytes
		t.Errorf("Names() has %d names, want %d", got, len(kafkaDefaults)+1)
	}
}

// TestEveryKeyParses sets each property to a valid non-default value and
// checks that exactly that field changed.
func TestEveryKeyParses(t *testing.T) {
	values := map[string]string{
		SegmentBytes:                "2097152",
		SegmentMs:                   "3600000",
		SegmentJitterMs:             "1000",
		SegmentIndexBytes:           "4096",
		FlushMessages:               "1",
		FlushMs:                     "1000",
		RetentionBytes:              "1073741824",
		RetentionMs:                 "-1",
		MaxMessageBytes:             "0",
		IndexIntervalBytes:          "0",
		DeleteRetentionMs:           "0",
		MinCompactionLagMs:          "10",
		MaxCompactionLagMs:          "100000",
		FileDeleteDelayMs:           "0",
		MinCleanableDirtyRatio:      "0.25",
		CleanupPolicy:               "compact , delete",
		UncleanLeaderElectionEnable: "TRUE",
		MinInsyncReplicas:           "2",
		CompressionType:             "zstd",
		CompressionGzipLevel:        "9",
		CompressionLz4Level:         "17",
		CompressionZstdLevel:        "-131072",
		Preallocate:                 " true ",
		MessageTimestampType:        "LogAppendTime",
		MessageTimestampBeforeMaxMs: "0",
		MessageTimestampAfterMaxMs:  "9223372036854775807",
		RemoteStorageEnable:         "true",
		LocalRetentionMs:            "-2",
		LocalRetentionBytes:         "-2",
		RemoteLogCopyDisable:        "false",
		RemoteLogDeleteOnDisable:    "true",
		InternalSegmentBytes:        "14",
	}
	want := map[string]any{
		SegmentBytes:                int32(2097152),
		SegmentMs:                   int64(3600000),
		SegmentJitterMs:             int64(1000),
		SegmentIndexBytes:           int32(4096),
		FlushMessages:               int64(1),
		FlushMs:                     int64(1000),
		RetentionBytes:              int64(1073741824),
		RetentionMs:                 int64(-1),
		MaxMessageBytes:             int32(0),
		IndexIntervalBytes:          int32(0),
		DeleteRetentionMs:           int64(0),
		MinCompactionLagMs:          int64(10),
		MaxCompactionLagMs:          int64(100000),
		FileDeleteDelayMs:           int64(0),
		MinCleanableDirtyRatio:      0.25,
		CleanupPolicy:               []string{"compact", "delete"},
		UncleanLeaderElectionEnable: true,
		MinInsyncReplicas:           int32(2),
		CompressionType:             "zstd",
		CompressionGzipLevel:        int32(9),
		CompressionLz4Level:         int32(17),
		CompressionZstdLevel:        int32(-131072),
		Preallocate:                 true,
		MessageTimestampType:        "LogAppendTime",
		MessageTimestampBeforeMaxMs: int64(0),
		MessageTimestampAfterMaxMs:  int64(math.MaxInt64),
		RemoteStorageEnable:         true,
		LocalRetentionMs:            int64(-2),
		LocalRetentionBytes:         int64(-2),
		RemoteLogCopyDisable:        false,
		RemoteLogDeleteOnDisable:    true,
		InternalSegmentBytes:        int32(14),
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			raw, ok := values[name]
			if !ok {
				t.Fatalf("no test value for %s", name)
			}
			props := map[string]string{name: raw}
			if name == RemoteStorageEnable {
				props[CleanupPolicy] = "delete" // remote storage needs delete
			}
			c, err := Parse(props)
			if err != nil {
				t.Fatal(err)
			}
			k := topicKeys[slices.IndexFunc(topicKeys, func(k keyOf[Config]) bool { return k.name == name })]
			if got := deref(k.field(&c)); !reflect.DeepEqual(got, want[name]) {
				t.Errorf("%s=%q parsed as %#v, want %#v", name, raw, got, want[name])
			}
			d := Default()
			set(k.field(&d), want[name])
			if !reflect.DeepEqual(c, d) {
				t.Errorf("%s changed other fields:\n got %+v\nwant %+v", name, c, d)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		props map[string]string
		opts  ParseOptions
		want  string
		err   error
	}{
		{"unknown", map[string]string{"segment.size": "1"}, ParseOptions{}, "Unknown topic config name: segment.size", ErrUnknownName},
		{"unknown_sorted_first", map[string]string{"zz": "1", "aa": "1", SegmentMs: "x"}, ParseOptions{}, "Unknown topic config name: aa", ErrUnknownName},
		{"broker_name_is_not_topic", map[string]string{"log.segment.bytes": "1"}, ParseOptions{}, "Unknown topic config name: log.segment.bytes", ErrUnknownName},
		{"segment_bytes_4x", map[string]string{SegmentBytes: "10"}, ParseOptions{}, "Invalid value 10 for configuration segment.bytes: Value must be at least 1048576", ErrInvalidValue},
		{"segment_bytes_4x_just_below", map[string]string{SegmentBytes: "1048575"}, ParseOptions{}, "Invalid value 1048575 for configuration segment.bytes: Value must be at least 1048576", ErrInvalidValue},
		{"segment_bytes_legacy", map[string]string{SegmentBytes: "10"}, ParseOptions{AllowSmallSegments: true}, "Invalid value 10 for configuration segment.bytes: Value must be at least 14", ErrInvalidValue},
		{"segment_bytes_not_int", map[string]string{SegmentBytes: "1GB"}, ParseOptions{}, "Invalid value 1GB for configuration segment.bytes: Not a number of type INT", ErrInvalidValue},
		{"segment_bytes_overflow", map[string]string{SegmentBytes: "2147483648"}, ParseOptions{}, "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT", ErrInvalidValue},
		{"value_printed_parsed", map[string]string{SegmentBytes: " +0010 "}, ParseOptions{}, "Invalid value 10 for configuration segment.bytes: Value must be at least 1048576", ErrInvalidValue},
		{"raw_printed_on_parse_error", map[string]string{RetentionMs: " 7d "}, ParseOptions{}, "Invalid value  7d  for configuration retention.ms: Not a number of type LONG", ErrInvalidValue},
		{"segment_ms", map[string]string{SegmentMs: "0"}, ParseOptions{}, "Invalid value 0 for configuration segment.ms: Value must be at least 1", ErrInvalidValue},
		{"segment_index_bytes", map[string]string{SegmentIndexBytes: "3"}, ParseOptions{AllowSmallSegments: true}, "Invalid value 3 for configuration segment.index.bytes: Value must be at least 4", ErrInvalidValue},
		{"retention_ms", map[string]string{RetentionMs: "-2"}, ParseOptions{}, "Invalid value -2 for configuration retention.ms: Value must be at least -1", ErrInvalidValue},
		{"retention_ms_empty", map[string]string{RetentionMs: ""}, ParseOptions{}, "Invalid value  for configuration retention.ms: Not a number of type LONG", ErrInvalidValue},
		{"flush_messages", map[string]string{FlushMessages: "0"}, ParseOptions{}, "Invalid value 0 for configuration flush.messages: Value must be at least 1", ErrInvalidValue},
		{"max_compaction_lag", map[string]string{MaxCompactionLagMs: "0"}, ParseOptions{}, "Invalid value 0 for configuration max.compaction.lag.ms: Value must be at least 1", ErrInvalidValue},
		{"ratio_low", map[string]string{MinCleanableDirtyRatio: "-0.1"}, ParseOptions{}, "Invalid value -0.1 for configuration min.cleanable.dirty.ratio: Value must be at least 0", ErrInvalidValue},
		{"ratio_high", map[string]string{MinCleanableDirtyRatio: "2"}, ParseOptions{}, "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1", ErrInvalidValue},
		{"ratio_high_exp", map[string]string{MinCleanableDirtyRatio: "1e10"}, ParseOptions{}, "Invalid value 1.0E10 for configuration min.cleanable.dirty.ratio: Value must be no more than 1", ErrInvalidValue},
		{"ratio_nan", map[string]string{MinCleanableDirtyRatio: "NaN"}, ParseOptions{}, "Invalid value NaN for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE", ErrInvalidValue},
		{"ratio_word", map[string]string{MinCleanableDirtyRatio: "half"}, ParseOptions{}, "Invalid value half for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE", ErrInvalidValue},
		{"bool", map[string]string{Preallocate: "yes"}, ParseOptions{}, "Invalid value yes for configuration preallocate: Expected value to be either true or false", ErrInvalidValue},
		{"compression", map[string]string{CompressionType: "zip"}, ParseOptions{}, "Invalid value zip for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer", ErrInvalidValue},
		{"compression_case", map[string]string{CompressionType: "GZIP"}, ParseOptions{}, "Invalid value GZIP for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer", ErrInvalidValue},
		{"timestamp_type", map[string]string{MessageTimestampType: "createtime"}, ParseOptions{}, "Invalid value createtime for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime", ErrInvalidValue},
		{"cleanup_policy", map[string]string{CleanupPolicy: "delete,forever"}, ParseOptions{}, "Invalid value forever for configuration cleanup.policy: String must be one of: compact, delete", ErrInvalidValue},
		{"cleanup_policy_dup", map[string]string{CleanupPolicy: "delete, delete"}, ParseOptions{}, "Configuration 'cleanup.policy' values must not be duplicated.", ErrInvalidValue},
		{"cleanup_policy_empty_elem", map[string]string{CleanupPolicy: "delete,"}, ParseOptions{}, "Configuration 'cleanup.policy' values must not be empty.", ErrInvalidValue},
		{"gzip_level", map[string]string{CompressionGzipLevel: "0"}, ParseOptions{}, "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1", ErrInvalidValue},
		{"lz4_level", map[string]string{CompressionLz4Level: "18"}, ParseOptions{}, "Invalid value 18 for configuration compression.lz4.level: Value must be no more than 17", ErrInvalidValue},
		{"zstd_level", map[string]string{CompressionZstdLevel: "-131073"}, ParseOptions{}, "Invalid value -131073 for configuration compression.zstd.level: Value must be at least -131072", ErrInvalidValue},
		{"local_retention_ms", map[string]string{LocalRetentionMs: "-3"}, ParseOptions{}, "Invalid value -3 for configuration local.retention.ms: Value must be at least -2", ErrInvalidValue},
		{"min_insync", map[string]string{MinInsyncReplicas: "0"}, ParseOptions{}, "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1", ErrInvalidValue},
		{"internal_segment_bytes", map[string]string{InternalSegmentBytes: "13"}, ParseOptions{}, "Invalid value 13 for configuration internal.segment.bytes: Value must be at least 14", ErrInvalidValue},
		// Definition order decides which error comes first, as in
		// ConfigDef.parse: segment.bytes is defined before retention.ms.
		{"definition_order", map[string]string{RetentionMs: "x", SegmentBytes: "1"}, ParseOptions{}, "Invalid value 1 for configuration segment.bytes: Value must be at least 1048576", ErrInvalidValue},
		// Cross-field checks (LogConfig.validateValues and
		// validateTopicLogConfigValues).
		{"compaction_lag_conflict", map[string]string{MinCompactionLagMs: "10", MaxCompactionLagMs: "5"}, ParseOptions{}, "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)", ErrInvalidValue},
		{"remote_needs_delete", map[string]string{RemoteStorageEnable: "true", CleanupPolicy: "compact"}, ParseOptions{}, "Remote log storage only supports topics with cleanup.policy=delete or cleanup.policy being an empty list.", ErrInvalidValue},
		{"remote_local_bytes_minus_one", map[string]string{RemoteStorageEnable: "true", RetentionBytes: "1000", LocalRetentionBytes: "-1"}, ParseOptions{}, "Invalid value -1 for configuration local.retention.bytes: Value must not be -1 as retention.bytes value is set as 1000.", ErrInvalidValue},
		{"remote_local_bytes_more", map[string]string{RemoteStorageEnable: "true", RetentionBytes: "1000", LocalRetentionBytes: "2000"}, ParseOptions{}, "Invalid value 2000 for configuration local.retention.bytes: Value must not be more than retention.bytes property value: 1000", ErrInvalidValue},
		{"remote_local_ms_more", map[string]string{RemoteStorageEnable: "true", LocalRetentionMs: "604800001"}, ParseOptions{}, "Invalid value 604800001 for configuration local.retention.ms: Value must not be more than retention.ms property value: 604800000", ErrInvalidValue},
		{"remote_copy_disabled", map[string]string{RemoteStorageEnable: "true", RemoteLogCopyDisable: "true", LocalRetentionMs: "1000"}, ParseOptions{}, "When `remote.log.copy.disable` is set to true, the `local.retention.ms` and `retention.ms` must be set to the identical value because there will be no more logs copied to the remote storage.", ErrInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.opts.Parse(tt.props)
			if err == nil {
				t.Fatalf("Parse(%v) succeeded, want %q", tt.props, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%v):\n got %q\nwant %q", tt.props, err.Error(), tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v does not wrap %v", err, tt.err)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Name == "" {
				t.Errorf("error %v is not an *Error naming a property", err)
			}
		})
	}
}

func TestSegmentMinimums(t *testing.T) {
	tests := []struct {
		props map[string]string
		opts  ParseOptions
		ok    bool
	}{
		{map[string]string{SegmentBytes: "1048576"}, ParseOptions{}, true},
		{map[string]string{SegmentBytes: "1048575"}, ParseOptions{}, false},
		{map[string]string{SegmentBytes: "14"}, ParseOptions{}, false},
		{map[string]string{SegmentBytes: "14"}, ParseOptions{AllowSmallSegments: true}, true},
		{map[string]string{SegmentBytes: "13"}, ParseOptions{AllowSmallSegments: true}, false},
		// KIP-1030 leaves segment.index.bytes at 4 until Kafka 5.0.
		{map[string]string{SegmentIndexBytes: "4"}, ParseOptions{}, true},
		{map[string]string{SegmentIndexBytes: "3"}, ParseOptions{}, false},
		// Kafka 4.x's own way to small segments.
		{map[string]string{InternalSegmentBytes: "100"}, ParseOptions{}, true},
	}
	for _, tt := range tests {
		c, err := tt.opts.Parse(tt.props)
		if (err == nil) != tt.ok {
			t.Errorf("%+v.Parse(%v) error = %v, want ok=%v", tt.opts, tt.props, err, tt.ok)
			continue
		}
		if err == nil {
			if verr := tt.opts.Validate(c); verr != nil {
				t.Errorf("Validate after Parse(%v) = %v", tt.props, verr)
			}
		}
	}
	c, _ := Parse(map[string]string{InternalSegmentBytes: "100"})
	if c.SegmentSize() != 100 || c.SegmentBytes != 1<<30 {
		t.Errorf("SegmentSize() = %d with internal.segment.bytes=100", c.SegmentSize())
	}
	small := Default()
	small.SegmentBytes = 14
	if err := small.Validate(); err == nil || err.Error() != "Invalid value 14 for configuration segment.bytes: Value must be at least 1048576" {
		t.Errorf("Validate(segment.bytes=14) = %v", err)
	}
	if err := (ParseOptions{AllowSmallSegments: true}).Validate(small); err != nil {
		t.Errorf("Validate(segment.bytes=14, AllowSmallSegments) = %v", err)
	}
}

func TestPropsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		c := Default()
		c.SegmentBytes = int32(MinSegmentBytes + r.IntN(1<<30))
		c.SegmentMs = 1 + r.Int64N(1<<40)
		c.SegmentJitterMs = r.Int64N(1000)
		c.SegmentIndexBytes = int32(4 + r.IntN(1<<24))
		c.RetentionBytes = r.Int64() - math.MaxInt64/2
		c.RetentionMs = -1 + r.Int64N(1<<40)
		c.MinCleanableDirtyRatio = r.Float64()
		c.CleanupPolicy = [][]string{{}, {"delete"}, {"compact"}, {"compact", "delete"}, {"delete", "compact"}}[r.IntN(5)]
		c.Preallocate = r.IntN(2) == 1
		c.CompressionType = []string{"producer", "zstd", "gzip", "uncompressed"}[r.IntN(4)]
		c.MessageTimestampType = []string{CreateTime, LogAppendTime}[r.IntN(2)]
		c.MinCompactionLagMs = r.Int64N(1000)
		c.MaxCompactionLagMs = 1000 + r.Int64N(1<<40)
		if r.IntN(4) == 0 {
			c.InternalSegmentBytes = int32(14 + r.IntN(1000))
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("case %d: generated config invalid: %v", i, err)
		}
		got, err := Parse(c.Props())
		if err != nil {
			t.Fatalf("case %d: Parse(Props()) = %v\nprops %v", i, err, c.Props())
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("case %d: round trip changed the config:\n got %+v\nwant %+v", i, got, c)
		}
	}
}

func TestMethods(t *testing.T) {
	c := Default()
	if !c.Delete() || c.Compact() {
		t.Errorf("default policy: Delete=%v Compact=%v", c.Delete(), c.Compact())
	}
	c.CleanupPolicy = []string{"compact"}
	c.MaxCompactionLagMs = 1000
	if got := c.MaxSegmentMs(); got != 1000 {
		t.Errorf("MaxSegmentMs compacted = %d, want 1000", got)
	}
	c.CleanupPolicy = []string{}
	if c.Delete() || c.Compact() || c.MaxSegmentMs() != c.SegmentMs {
		t.Errorf("empty policy: Delete=%v Compact=%v MaxSegmentMs=%d", c.Delete(), c.Compact(), c.MaxSegmentMs())
	}
	if c.EffectiveLocalRetentionMs() != c.RetentionMs || c.EffectiveLocalRetentionBytes() != c.RetentionBytes {
		t.Error("local retention -2 must defer to retention.*")
	}
	c.LocalRetentionMs, c.LocalRetentionBytes = 5, 6
	if c.EffectiveLocalRetentionMs() != 5 || c.EffectiveLocalRetentionBytes() != 6 {
		t.Error("explicit local retention ignored")
	}
	if c.InitFileSize() != 0 {
		t.Error("InitFileSize without preallocate")
	}
	c.Preallocate = true
	if c.InitFileSize() != c.SegmentBytes {
		t.Error("InitFileSize with preallocate")
	}
	r := rand.New(rand.NewPCG(3, 4))
	if c.RandomSegmentJitter(r) != 0 {
		t.Error("jitter without segment.jitter.ms")
	}
	c.SegmentJitterMs, c.SegmentMs = 1000, 10
	for range 100 {
		if j := c.RandomSegmentJitter(r); j < 0 || j >= 10 {
			t.Fatalf("jitter %d outside [0, min(jitter, segment.ms))", j)
		}
	}
}

func TestBroker(t *testing.T) {
	b, err := ParseBroker(nil)
	if err != nil || b != DefaultBroker() || b.RetentionCheckIntervalMs != 300000 || b.InitialTaskDelayMs != 30000 {
		t.Fatalf("ParseBroker(nil) = %+v, %v", b, err)
	}
	b, err = ParseBroker(map[string]string{LogRetentionCheckIntervalMs: "1000", LogInitialTaskDelayMs: "0"})
	if err != nil || b.RetentionCheckIntervalMs != 1000 || b.InitialTaskDelayMs != 0 {
		t.Fatalf("ParseBroker = %+v, %v", b, err)
	}
	if got, err := ParseBroker(b.Props()); err != nil || got != b {
		t.Errorf("broker round trip: %+v, %v", got, err)
	}
	for props, want := range map[string]string{
		LogRetentionCheckIntervalMs: "Invalid value 0 for configuration log.retention.check.interval.ms: Value must be at least 1",
		LogInitialTaskDelayMs:       "Invalid value -1 for configuration log.initial.task.delay.ms: Value must be at least 0",
		SegmentBytes:                "Unknown broker config name: segment.bytes",
	} {
		v := map[string]string{LogRetentionCheckIntervalMs: "0", LogInitialTaskDelayMs: "-1", SegmentBytes: "1"}[props]
		if _, err := ParseBroker(map[string]string{props: v}); err == nil || err.Error() != want {
			t.Errorf("ParseBroker(%s=%s) = %v, want %q", props, v, err, want)
		}
	}
	if err := (Broker{}).Validate(); err == nil {
		t.Error("zero Broker validated")
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		0.5: "0.5", 2: "2.0", -0.1: "-0.1", 1e10: "1.0E10", 1e-4: "1.0E-4", 1234567: "1234567.0",
		1e7: "1.0E7", 0.001: "0.001", 123.456: "123.456", math.Inf(1): "Infinity", 0: "0.0", 1.5e-10: "1.5E-10",
	} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", f, got, want)
		}
	}
	for s, ok := range map[string]bool{
		"0.5": true, ".5": true, "5.": true, "1e3": true, "-1E-3": true, "1.5d": true, "2f": true, "Infinity": true, "-Infinity": true,
		"NaN": false, "inf": false, "0x1p3": false, "1_0": false, "": false, "-": false, "d": false, "+-1": false, "1e": false,
	} {
		if _, got := parseJavaDouble(s); got != ok {
			t.Errorf("parseJavaDouble(%q) ok = %v, want %v", s, got, ok)
		}
	}
}
