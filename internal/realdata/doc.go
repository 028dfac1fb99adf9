// Package realdata locates the files written by real Kafka brokers that
// segkit's compatibility tests read: ../shared/kafka-real beside the
// repository (see its PROVENANCE.md), never copied into the repository, and
// testdata/kafka-broker, partitions a Kafka 4.3.1 broker wrote through the
// oracle (oracle/kafka generate), which are committed.
//
// Outside the workplace a fresh clone has no ../shared, and the tests that
// need it skip with a clear message; under CI=true a missing directory is a
// test failure, so that CI can never pass without checking real data.
package realdata
