// Package realdata locates the files written by real Kafka brokers that
// segkit's compatibility tests read: ../shared/kafka-real beside the
// repository (see its PROVENANCE.md). The files are never copied into the
// repository.
//
// Outside the workplace a fresh clone has no ../shared, and the tests that
// need it skip with a clear message; under CI=true a missing directory is a
// test failure, so that CI can never pass without checking real data.
package realdata
