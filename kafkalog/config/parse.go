package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Sentinel errors, wrapped by every *Error.
var (
	// ErrUnknownName is returned for a property name Kafka does not
	// define (or that this package does not model; see the package doc).
	ErrUnknownName = errors.New("config: unknown config name")

	// ErrInvalidValue is returned for a value that does not parse, is out
	// of range, or conflicts with another setting.
	ErrInvalidValue = errors.New("config: invalid value")
)

// Error is a configuration error. Its message is Kafka's, word for word:
// "Unknown topic config name: x", "Invalid value 10 for configuration
// segment.bytes: Value must be at least 1048576", or the text of one of
// LogConfig's cross-field checks.
type Error struct {
	// Name is the property the error is about (for a cross-field error,
	// the one Kafka names, or the first of the two).
	Name string
	// Err is ErrUnknownName or ErrInvalidValue.
	Err error
	msg string
}

// Error returns Kafka's message.
func (e *Error) Error() string { return e.msg }

// Unwrap returns ErrUnknownName or ErrInvalidValue.
func (e *Error) Unwrap() error { return e.Err }

// invalid is ConfigException(name, value, message).
func invalid(name, value, message string) *Error {
	return &Error{Name: name, Err: ErrInvalidValue, msg: "Invalid value " + value + " for configuration " + name + ": " + message}
}

// ParseOptions relax how Parse and Validate check values. The zero value
// checks as Kafka 4.x does.
type ParseOptions struct {
	// AllowSmallSegments makes segment.bytes valid down to 14 bytes (the
	// format's floor, and Kafka 3.x's minimum) instead of Kafka 4.x's
	// 1048576, for tests and small demonstrations.
	AllowSmallSegments bool
}

type options struct {
	minSegmentBytes int64
	scope           string // "topic" or "broker", for unknown-name errors
}

func (po ParseOptions) options() *options {
	o := &options{minSegmentBytes: MinSegmentBytes, scope: "topic"}
	if po.AllowSmallSegments {
		o.minSegmentBytes = LegacyMinSegmentBytes
	}
	return o
}

// kind is a ConfigDef.Type.
type kind uint8

const (
	kindInt kind = iota
	kindLong
	kindDouble
	kindBool
	kindString
	kindList
)

var kindNames = [...]string{"INT", "LONG", "DOUBLE", "BOOLEAN", "STRING", "LIST"}

// topicKeys lists the properties in LogConfig's definition order, which is
// the order Kafka parses and validates them in.
var topicKeys = []keyOf[Config]{
	{name: SegmentBytes, kind: kindInt, field: func(c *Config) any { return &c.SegmentBytes }, valid: segmentBytesMin},
	{name: SegmentMs, kind: kindLong, field: func(c *Config) any { return &c.SegmentMs }, valid: atLeast(1)},
	{name: SegmentJitterMs, kind: kindLong, field: func(c *Config) any { return &c.SegmentJitterMs }, valid: atLeast(0)},
	{name: SegmentIndexBytes, kind: kindInt, field: func(c *Config) any { return &c.SegmentIndexBytes }, valid: atLeast(MinSegmentIndexBytes)},
	{name: FlushMessages, kind: kindLong, field: func(c *Config) any { return &c.FlushMessages }, valid: atLeast(1)},
	{name: FlushMs, kind: kindLong, field: func(c *Config) any { return &c.FlushMs }, valid: atLeast(0)},
	{name: RetentionBytes, kind: kindLong, field: func(c *Config) any { return &c.RetentionBytes }},
	{name: RetentionMs, kind: kindLong, field: func(c *Config) any { return &c.RetentionMs }, valid: atLeast(-1)},
	{name: MaxMessageBytes, kind: kindInt, field: func(c *Config) any { return &c.MaxMessageBytes }, valid: atLeast(0)},
	{name: IndexIntervalBytes, kind: kindInt, field: func(c *Config) any { return &c.IndexIntervalBytes }, valid: atLeast(0)},
	{name: DeleteRetentionMs, kind: kindLong, field: func(c *Config) any { return &c.DeleteRetentionMs }, valid: atLeast(0)},
	{name: MinCompactionLagMs, kind: kindLong, field: func(c *Config) any { return &c.MinCompactionLagMs }, valid: atLeast(0)},
	{name: MaxCompactionLagMs, kind: kindLong, field: func(c *Config) any { return &c.MaxCompactionLagMs }, valid: atLeast(1)},
	{name: FileDeleteDelayMs, kind: kindLong, field: func(c *Config) any { return &c.FileDeleteDelayMs }, valid: atLeast(0)},
	{name: MinCleanableDirtyRatio, kind: kindDouble, field: func(c *Config) any { return &c.MinCleanableDirtyRatio }, valid: between(0, 1)},
	{name: CleanupPolicy, kind: kindList, field: func(c *Config) any { return &c.CleanupPolicy }, valid: validList(CleanupPolicyCompact, CleanupPolicyDelete)},
	{name: UncleanLeaderElectionEnable, kind: kindBool, field: func(c *Config) any { return &c.UncleanLeaderElectionEnable }},
	{name: MinInsyncReplicas, kind: kindInt, field: func(c *Config) any { return &c.MinInsyncReplicas }, valid: atLeast(1)},
	{name: CompressionType, kind: kindString, field: func(c *Config) any { return &c.CompressionType },
		valid: oneOf(CompressionUncompressed, CompressionZstd, CompressionLZ4, CompressionSnappy, CompressionGzip, CompressionProducer)},
	{name: CompressionGzipLevel, kind: kindInt, field: func(c *Config) any { return &c.CompressionGzipLevel }, valid: gzipLevel},
	{name: CompressionLz4Level, kind: kindInt, field: func(c *Config) any { return &c.CompressionLz4Level }, valid: between(minLz4Level, maxLz4Level)},
	{name: CompressionZstdLevel, kind: kindInt, field: func(c *Config) any { return &c.CompressionZstdLevel }, valid: between(minZstdLevel, maxZstdLevel)},
	{name: Preallocate, kind: kindBool, field: func(c *Config) any { return &c.Preallocate }},
	{name: MessageTimestampType, kind: kindString, field: func(c *Config) any { return &c.MessageTimestampType }, valid: oneOf(CreateTime, LogAppendTime)},
	{name: MessageTimestampBeforeMaxMs, kind: kindLong, field: func(c *Config) any { return &c.MessageTimestampBeforeMaxMs }, valid: atLeast(0)},
	{name: MessageTimestampAfterMaxMs, kind: kindLong, field: func(c *Config) any { return &c.MessageTimestampAfterMaxMs }, valid: atLeast(0)},
	{name: RemoteStorageEnable, kind: kindBool, field: func(c *Config) any { return &c.RemoteStorageEnable }},
	{name: LocalRetentionMs, kind: kindLong, field: func(c *Config) any { return &c.LocalRetentionMs }, valid: atLeast(UseRetention)},
	{name: LocalRetentionBytes, kind: kindLong, field: func(c *Config) any { return &c.LocalRetentionBytes }, valid: atLeast(UseRetention)},
	{name: RemoteLogCopyDisable, kind: kindBool, field: func(c *Config) any { return &c.RemoteLogCopyDisable }},
	{name: RemoteLogDeleteOnDisable, kind: kindBool, field: func(c *Config) any { return &c.RemoteLogDeleteOnDisable }},
	{name: InternalSegmentBytes, kind: kindInt, field: func(c *Config) any { return &c.InternalSegmentBytes }, valid: atLeast(LegacyMinSegmentBytes), optional: true},
}

// Names returns every topic-level property name Parse accepts, in Kafka's
// definition order.
func Names() []string {
	out := make([]string, len(topicKeys))
	for i, k := range topicKeys {
		out[i] = k.name
	}
	return out
}

// Parse returns the configuration that props describe, starting from
// Default. Names are Kafka's topic-level property names; values are
// parsed and validated as Kafka 4.x does (see the package doc), then the
// cross-field checks run. The first problem is returned as an *Error.
func Parse(props map[string]string) (Config, error) { return ParseOptions{}.Parse(props) }

// Parse is the package's Parse with po's relaxations.
func (po ParseOptions) Parse(props map[string]string) (Config, error) {
	o := po.options()
	c := Default()
	if err := parseInto(&c, topicKeys, props, o); err != nil {
		return Config{}, err
	}
	if err := c.crossCheck(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks every field of c as Parse checks the values it parses,
// and then the cross-field rules, returning the first problem as an
// *Error.
func (c Config) Validate() error { return ParseOptions{}.Validate(c) }

// Validate is Config.Validate with po's relaxations.
func (po ParseOptions) Validate(c Config) error {
	o := po.options()
	for i := range topicKeys {
		k := &topicKeys[i]
		v := deref(k.field(&c))
		if k.optional && isZero(v) {
			continue
		}
		if err := check(k, v, o); err != nil {
			return err
		}
	}
	return c.crossCheck()
}

// Props returns c as Kafka properties: every setting (internal.segment.bytes
// only when set), formatted so that Parse gives c back.
func (c Config) Props() map[string]string {
	return props(&c, topicKeys)
}

func props[T any](c *T, keys []keyOf[T]) map[string]string {
	m := make(map[string]string, len(keys))
	for i := range keys {
		k := &keys[i]
		v := deref(k.field(c))
		if k.optional && isZero(v) {
			continue
		}
		m[k.name] = format(v)
	}
	return m
}

// validator checks the value v of property name.
type validator func(name string, v any, o *options) error

// A keyOf is one defined property of a T (Config or Broker): its name,
// its type, the field it fills (a pointer), and its validator (nil: any
// value of the type).
// Optional keys (internal.segment.bytes) have no default: the zero value
// of the field means unset, and is neither validated nor listed by Props.
type keyOf[T any] struct {
	name     string
	kind     kind
	field    func(c *T) any
	valid    validator
	optional bool
}

// parseInto rejects unknown names (in sorted order, so the error is
// deterministic), then parses and validates the given values in
// definition order, as ConfigDef.parse does.
func parseInto[T any](c *T, keys []keyOf[T], in map[string]string, o *options) error {
	if len(in) > 0 {
		names := make([]string, 0, len(in))
		for n := range in {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if !slices.ContainsFunc(keys, func(k keyOf[T]) bool { return k.name == n }) {
				return &Error{Name: n, Err: ErrUnknownName, msg: "Unknown " + o.scope + " config name: " + n}
			}
		}
	}
	for i := range keys {
		k := &keys[i]
		raw, ok := in[k.name]
		if !ok {
			continue
		}
		v, err := parseValue(k.name, k.kind, raw)
		if err != nil {
			return err
		}
		if err := check(k, v, o); err != nil {
			return err
		}
		set(k.field(c), v)
	}
	return nil
}

func check[T any](k *keyOf[T], v any, o *options) error {
	if k.valid == nil {
		return nil
	}
	return k.valid(k.name, v, o)
}

// parseValue is ConfigDef.parseType for a string value.
func parseValue(name string, t kind, raw string) (any, error) {
	s := javaTrim(raw)
	notA := func() error { return invalid(name, raw, "Not a number of type "+kindNames[t]) }
	switch t {
	case kindInt:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, notA()
		}
		return int32(n), nil
	case kindLong:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, notA()
		}
		return n, nil
	case kindDouble:
		f, ok := parseJavaDouble(s)
		if !ok {
			return nil, notA()
		}
		return f, nil
	case kindBool:
		switch {
		case strings.EqualFold(s, "true"):
			return true, nil
		case strings.EqualFold(s, "false"):
			return false, nil
		}
		return nil, invalid(name, raw, "Expected value to be either true or false")
	case kindString:
		return s, nil
	default: // kindList
		if s == "" {
			return []string{}, nil
		}
		return splitList(s), nil
	}
}

func deref(p any) any {
	switch p := p.(type) {
	case *int32:
		return *p
	case *int64:
		return *p
	case *float64:
		return *p
	case *bool:
		return *p
	case *string:
		return *p
	case *[]string:
		return *p
	}
	panic(fmt.Sprintf("config: unexpected field type %T", p))
}

func set(p, v any) {
	switch p := p.(type) {
	case *int32:
		*p = v.(int32)
	case *int64:
		*p = v.(int64)
	case *float64:
		*p = v.(float64)
	case *bool:
		*p = v.(bool)
	case *string:
		*p = v.(string)
	case *[]string:
		*p = v.([]string)
	}
}

func isZero(v any) bool {
	switch v := v.(type) {
	case int32:
		return v == 0
	case int64:
		return v == 0
	}
	return false
}

// format writes a value so that parseValue reads it back.
func format(v any) string {
	switch v := v.(type) {
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	case string:
		return v
	case []string:
		return strings.Join(v, ",")
	}
	panic(fmt.Sprintf("config: unexpected value type %T", v))
}

// number returns v (int32, int64 or float64) as a float64 for range
// checks, as Range.ensureValid compares doubleValue()s, and as Kafka
// prints it.
func number(v any) (float64, string) {
	switch v := v.(type) {
	case int32:
		return float64(v), strconv.FormatInt(int64(v), 10)
	case int64:
		return float64(v), strconv.FormatInt(v, 10)
	case float64:
		return v, javaDouble(v)
	}
	panic(fmt.Sprintf("config: unexpected number type %T", v))
}

// atLeast is ConfigDef.Range.atLeast.
func atLeast(min int64) validator {
	return func(name string, v any, _ *options) error {
		return rangeCheck(name, v, float64(min), strconv.FormatInt(min, 10), math.Inf(1), "")
	}
}

// between is ConfigDef.Range.between.
func between(min, max int64) validator {
	return func(name string, v any, _ *options) error {
		return rangeCheck(name, v, float64(min), strconv.FormatInt(min, 10), float64(max), strconv.FormatInt(max, 10))
	}
}

// rangeCheck is Range.ensureValid, which compares doubleValue()s.
func rangeCheck(name string, v any, min float64, minText string, max float64, maxText string) error {
	f, text := number(v)
	if f < min {
		return invalid(name, text, "Value must be at least "+minText)
	}
	if f > max {
		return invalid(name, text, "Value must be no more than "+maxText)
	}
	return nil
}

// segmentBytesMin is atLeast(1048576), or atLeast(14) with
// AllowSmallSegments.
func segmentBytesMin(name string, v any, o *options) error {
	return atLeast(o.minSegmentBytes)(name, v, o)
}

// gzipLevel is CompressionType.GZIP.levelValidator.
func gzipLevel(name string, v any, _ *options) error {
	l := v.(int32)
	if l > maxGzipLevel || (l < minGzipLevel && l != defaultGzipLevel) {
		return invalid(name, strconv.FormatInt(int64(l), 10), fmt.Sprintf("Value must be between %d and %d or equal to %d", minGzipLevel, maxGzipLevel, defaultGzipLevel))
	}
	return nil
}

// oneOf is ConfigDef.ValidString.in (case-sensitive).
func oneOf(valid ...string) validator {
	return func(name string, v any, _ *options) error {
		if s := v.(string); !slices.Contains(valid, s) {
			return invalid(name, s, "String must be one of: "+strings.Join(valid, ", "))
		}
		return nil
	}
}

// validList is Kafka 4.x's ConfigDef.ValidList.in: the empty list is
// allowed, duplicates and empty elements are not, and each element must
// be one of valid.
func validList(valid ...string) validator {
	one := oneOf(valid...)
	return func(name string, v any, o *options) error {
		l := v.([]string)
		whole := func(msg string) error {
			return &Error{Name: name, Err: ErrInvalidValue, msg: "Configuration '" + name + "' " + msg}
		}
		for i, s := range l {
			if slices.Contains(l[:i], s) {
				return whole("values must not be duplicated.")
			}
		}
		for _, s := range l {
			if s == "" {
				return whole("values must not be empty.")
			}
			if err := one(name, s, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// crossCheck runs LogConfig.validateValues and the topic-level checks of
// validateTopicLogConfigValues, in Kafka's order.
func (c *Config) crossCheck() error {
	if c.MinCompactionLagMs > c.MaxCompactionLagMs {
		return &Error{Name: MinCompactionLagMs, Err: ErrInvalidValue, msg: fmt.Sprintf(
			"conflict topic config setting %s (%d) > %s (%d)", MinCompactionLagMs, c.MinCompactionLagMs, MaxCompactionLagMs, c.MaxCompactionLagMs)}
	}
	if !c.RemoteStorageEnable {
		return nil
	}
	if len(c.CleanupPolicy) != 0 && (len(c.CleanupPolicy) != 1 || c.CleanupPolicy[0] != CleanupPolicyDelete) {
		return &Error{Name: CleanupPolicy, Err: ErrInvalidValue,
			msg: "Remote log storage only supports topics with cleanup.policy=delete or cleanup.policy being an empty list."}
	}
	if c.RetentionBytes > -1 && c.LocalRetentionBytes != UseRetention {
		if err := localRetention(LocalRetentionBytes, c.LocalRetentionBytes, RetentionBytes, c.RetentionBytes); err != nil {
			return err
		}
	}
	if c.RetentionMs != -1 && c.LocalRetentionMs != UseRetention {
		if err := localRetention(LocalRetentionMs, c.LocalRetentionMs, RetentionMs, c.RetentionMs); err != nil {
			return err
		}
	}
	if c.RemoteLogCopyDisable {
		const msg = "When `remote.log.copy.disable` is set to true, the `%s` and `%s` must be set to the identical value because there will be no more logs copied to the remote storage."
		if c.LocalRetentionBytes != UseRetention && c.LocalRetentionBytes != c.RetentionBytes {
			return &Error{Name: LocalRetentionBytes, Err: ErrInvalidValue, msg: fmt.Sprintf(msg, LocalRetentionBytes, RetentionBytes)}
		}
		if c.LocalRetentionMs != UseRetention && c.LocalRetentionMs != c.RetentionMs {
			return &Error{Name: LocalRetentionMs, Err: ErrInvalidValue, msg: fmt.Sprintf(msg, LocalRetentionMs, RetentionMs)}
		}
	}
	return nil
}

// localRetention is validateRemoteStorageRetentionSize/Time for one pair.
func localRetention(name string, local int64, retName string, retention int64) error {
	value := strconv.FormatInt(local, 10)
	if local == -1 {
		return invalid(name, value, fmt.Sprintf("Value must not be -1 as %s value is set as %d.", retName, retention))
	}
	if local > retention {
		return invalid(name, value, fmt.Sprintf("Value must not be more than %s property value: %d", retName, retention))
	}
	return nil
}
