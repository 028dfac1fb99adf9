// Package interop holds segkit's differential tests and comparative
// benchmarks against independent Go Kafka codecs (franz-go, sarama,
// kafka-go), and adapters to third-party filesystem libraries. It is a
// separate module so that the core module keeps its short dependency list.
package interop
