// Package config holds the topic-level settings of segkit's log engine,
// with Apache Kafka's property names, defaults and validation messages
// (LogConfig.java, TopicConfig.java, ServerLogConfigs.java, ConfigDef.java).
// The engine imports it as kafkalog.Config (a type alias) and kafkalog.ParseConfig.
//
// # Use
//
//	cfg, err := config.Parse(map[string]string{
//		config.SegmentBytes: "1048576",
//		config.RetentionMs:  "-1",
//	})
//	if err != nil {
//		return err // e.g. "Invalid value 10 for configuration segment.bytes: Value must be at least 1048576"
//	}
//	props := cfg.Props() // every setting, parseable again with Parse
//
// # Settings
//
// Every property that changes what an on-disk engine does is a field of
// Config; the field comment names the property and its Kafka default.
// Values have Kafka's types: INT is int32, LONG int64, DOUBLE float64,
// BOOLEAN bool, LIST []string. Durations are milliseconds (int64), as in
// Kafka, because -1 (unlimited), -2 (use the retention.* value) and
// Long.MAX_VALUE (never) are meaningful values.
//
// The two broker-level settings that schedule retention
// (log.retention.check.interval.ms, log.initial.task.delay.ms) are in a
// separate Broker struct, parsed by ParseBroker.
//
// # Validation
//
// Parse starts from Default, accepts only Kafka property names (an unknown
// name gives "Unknown topic config name: x", like Kafka's
// InvalidConfigurationException), parses each value as ConfigDef does
// (surrounding whitespace trimmed; booleans case-insensitive; lists split
// on commas), and validates it with Kafka 4.x's rules, in Kafka's
// definition order, so that the first error reported is the one Kafka
// would report. Messages have ConfigException's wording:
//
//	Invalid value 10 for configuration segment.bytes: Value must be at least 1048576
//	Invalid value x for configuration retention.ms: Not a number of type LONG
//	Invalid value zip for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer
//
// Kafka 4.0 (KIP-1030) raised the minimum segment.bytes from 14 to
// 1048576 bytes (1 MiB) and the default message.timestamp.after.max.ms
// from Long.MAX_VALUE to one hour. KIP-1030's other constraint changes
// (segment.ms ≥ 1 minute, segment.index.bytes, max.compaction.lag.ms) are
// scheduled for Kafka 5.0 and are not applied. The option
// AllowSmallSegments accepts segment.bytes down to the format's floor of
// 14 bytes (the smallest legacy v0 message), as Kafka 3.x did; Kafka 4.x
// itself offers internal.segment.bytes for the same purpose (tests), which
// Parse also accepts.
//
// The cross-field checks of LogConfig.validateValues and
// validateTopicLogConfigValues are made after the single values:
// min.compaction.lag.ms must not exceed max.compaction.lag.ms, and with
// remote.storage.enable=true the cleanup policy must be delete (or empty),
// local.retention.* must fit within retention.*, and with
// remote.log.copy.disable=true they must be equal. The broker-wide check
// that tiered storage is enabled on the cluster has no counterpart here.
//
// Every error is a *Error that wraps ErrUnknownName or ErrInvalidValue.
//
// # Differences from Kafka
//
//   - A DOUBLE value of NaN is rejected ("Not a number of type DOUBLE");
//     Kafka's range check lets it through because NaN compares false.
//   - Java's number parsers accept non-ASCII digits and, for doubles, hex
//     floats and a trailing d/f; Parse accepts ASCII decimal forms only.
//   - internal.segment.bytes has no validator in Kafka; Parse requires at
//     least 14, the format's floor.
//   - Properties Kafka knows but that do not concern the on-disk log
//     (leader.replication.throttled.replicas, remote.log.copy lag
//     settings, ...) are reported as unknown.
//
// # Concurrency
//
// Config and Broker are plain values; every function of the package is
// safe for concurrent use.
package config
