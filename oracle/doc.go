// Package oracle runs Kafka 4.3.1's own code beside segkit, so that Kafka is
// the judge of segkit's claims: Kafka's DumpLogSegments, a single-node KRaft
// broker, Kafka's recovery (UnifiedLog/LogLoader) and retention
// (deleteOldSegments) on copies of partition directories.
//
// The Java side is a small Maven project in this directory (pom.xml,
// src/main/java), pinned to Kafka 4.3.1; the entry point is the script
// oracle/kafka, which builds the project on first use and is offline
// afterwards. This Go package finds and runs it; the tests of this module
// compare segkit with it.
//
// Tests that need the oracle call Require: without java or mvn on PATH they
// skip with a message, and under CI=true they fail.
package oracle
