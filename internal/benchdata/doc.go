// Package benchdata builds the deterministic record sets that segkit's
// benchmarks use, so that the core module's benchmarks and the interop
// module's comparisons against other Go Kafka libraries encode and decode
// exactly the same records.
package benchdata
