package config

// Broker-level property names the retention scheduler needs
// (ServerLogConfigs.java).
const (
	// LogRetentionCheckIntervalMs is how often the "kafka-log-retention"
	// task runs.
	LogRetentionCheckIntervalMs = "log.retention.check.interval.ms"
	// LogInitialTaskDelayMs is the delay before the log manager's first
	// scheduled tasks (an internal, test-oriented setting in Kafka).
	LogInitialTaskDelayMs = "log.initial.task.delay.ms"
	// RemoteLogManagerTaskIntervalMs is how often the remote log manager's
	// tasks run for a tiered partition: the copy task (RLMCopyTask) and
	// the expiration task (RLMExpirationTask) (RemoteLogManagerConfig).
	RemoteLogManagerTaskIntervalMs = "remote.log.manager.task.interval.ms"
)

// Broker holds the broker-level settings that schedule retention; they
// are not topic configs, so they live apart from Config.
type Broker struct {
	// RetentionCheckIntervalMs is log.retention.check.interval.ms.
	// Default 300000 (5 minutes); at least 1.
	RetentionCheckIntervalMs int64
	// InitialTaskDelayMs is log.initial.task.delay.ms. Default 30000;
	// at least 0.
	InitialTaskDelayMs int64
	// RemoteLogManagerTaskIntervalMs is remote.log.manager.task.interval.ms:
	// the period of the tiered-storage copy and expiration tasks. Default
	// 30000 (30 s); at least 1.
	RemoteLogManagerTaskIntervalMs int64
}

var brokerKeys = []keyOf[Broker]{
	{name: LogRetentionCheckIntervalMs, kind: kindLong, field: func(b *Broker) any { return &b.RetentionCheckIntervalMs }, valid: atLeast(1)},
	{name: LogInitialTaskDelayMs, kind: kindLong, field: func(b *Broker) any { return &b.InitialTaskDelayMs }, valid: atLeast(0)},
	{name: RemoteLogManagerTaskIntervalMs, kind: kindLong, field: func(b *Broker) any { return &b.RemoteLogManagerTaskIntervalMs }, valid: atLeast(1)},
}

// DefaultBroker returns Kafka's defaults for the broker-level settings.
func DefaultBroker() Broker {
	return Broker{RetentionCheckIntervalMs: 5 * 60 * 1000, InitialTaskDelayMs: 30 * 1000, RemoteLogManagerTaskIntervalMs: 30 * 1000}
}

// ParseBroker returns the broker settings props describe, starting from
// DefaultBroker. Unknown names are errors ("Unknown broker config name:
// x"); values are parsed and checked as Parse does.
func ParseBroker(props map[string]string) (Broker, error) {
	o := ParseOptions{}.options()
	o.scope = "broker"
	b := DefaultBroker()
	if err := parseInto(&b, brokerKeys, props, o); err != nil {
		return Broker{}, err
	}
	return b, nil
}

// Validate checks b's values as ParseBroker does.
func (b Broker) Validate() error {
	o := ParseOptions{}.options()
	for i := range brokerKeys {
		k := &brokerKeys[i]
		if err := check(k, deref(k.field(&b)), o); err != nil {
			return err
		}
	}
	return nil
}

// Props returns b as broker properties that ParseBroker reads back.
func (b Broker) Props() map[string]string { return props(&b, brokerKeys) }
