// Command sidebyside measures segkit against Apache Kafka 4.3.1's own code
// (the oracle, oracle/kafka) and against the CRC-32C floor, and prints one
// table.
//
//	cd oracle && go run ./cmd/sidebyside            # 1 GiB, 1000 partitions, 10 GiB dir, WASM, 5 runs
//	cd oracle && go run ./cmd/sidebyside -quick     # 64 MiB, 100 partitions, 256 MiB dir, 3 runs
//	cd oracle && go run ./cmd/sidebyside -size 256MiB -runs 3 -only dump,recover
//
// It builds segviz from this tree, writes the fixtures with segkit's engine
// into a temporary directory (-dir, -keep): one segment of -size bytes in
// one partition (batches of 1 to 100 records of mixed sizes, about half of
// them compressed with -codec, the rest not), the same partition as an
// unclean one (no clean-shutdown marker, no checkpoints, its .index and
// .timeindex deleted so that recovery rebuilds them), a tiny segment and
// partition of the same kind (-tiny), a log directory of -partitions
// small partitions (-partition-size each), and a large log directory of
// -verify-size bytes (10 GiB; 0 leaves it out): as many partitions as that
// takes, each a directory of hard links to the big partition's files, so
// that it costs no generation time and no disk (the page cache holds one
// copy of the bytes, for verify and the CRC floor alike).
//
// # Rows
//
// Every figure is a ratio of runs interleaved in one harness run: each
// round runs every command of a group once, in the same order (A, B, A,
// B, …), after -warmup unmeasured rounds. A row shows each side's best and
// median run, the ratio of the medians (and of the minima), each side's
// spread (max/min), the target and a verdict; a verdict whose spread is
// wider than -spread (1.3) is marked untrusted. Each row's command lines
// are listed under the table.
//
//   - dump: `segviz dump --files LOG` against Kafka's DumpLogSegments
//     (`oracle/kafka dump-log --files LOG`), plain and with
//     --deep-iteration --print-data-log, standard output to a file (and the
//     two outputs compared byte for byte, once). The "wall" row is
//     whole-process time, JVM start-up included; the "steady" row takes off
//     each tool's median time on the tiny segment and shows bytes/s.
//     Target: 10× Kafka. Two more rows bound the plain dump: its steady
//     rate against the mapped CRC floor (in-process, the segment mapped
//     64 MiB at a time and checksummed on all cores, one part per core:
//     no entries followed, no lines, no output), and that floor against
//     Kafka's steady rate, the most any dump could be ahead of Kafka's.
//   - recover: `segviz recover --out` against `oracle/kafka recover` (both
//     copy the partition and then recover the copy: every batch checked,
//     the indexes rebuilt), wall and steady as for dump; target 2× Kafka.
//     Then the copy floor (in-process: repair.CopyPartitionFiles, the
//     durable copy recover --out makes before it recovers, alone) against
//     segviz and against
//     Kafka: on a slow disk the copy is most of both tools' time, and the
//     second row is the most a recovery that copies can be ahead of Kafka.
//     Then the same recoveries in place, as a broker's restart recovers:
//     `segviz recover --in-place` against `oracle/kafka recover
//     --in-place`, each on a copy of its own made and synced before the
//     clock starts.
//     Then segkit's recovery against the CRC floor (1 MiB reads of the
//     .log, warm, and format.UpdateCRC32C over every byte, in-process):
//     `segviz recover --out` whole (its copy, with an fsync, included),
//     and repair.Recover in-process on a copy made before the clock
//     starts. Target: 0.5× the floor. The sizes
//     of the .log, .index and .timeindex each recovery left are compared
//     once.
//   - verify: `segviz verify` of the log directory of small partitions,
//     of the one big partition and of the large log directory against the CRC floor over the same .log files (no
//     target; verify also decompresses every batch, which the floor does
//     not), GOMAXPROCS=2 against GOMAXPROCS=1 (target 1.7× on 2 cores),
//     and the verify process's peak RSS (its VmHWM in /proc/PID/status,
//     polled every millisecond in one more run of each, untimed, since a
//     poller beside a timed run takes CPU from a child that keeps both
//     cores busy and not from one that leaves a core idle; ru_maxrss
//     would count the harness's own RSS, which a vfork'd child inherits
//     at exec; target -rss-budget, 256 MiB). With the one big partition, the rounds also time the
//     mapped CRC floor (as for dump) on two goroutines and on one: what
//     the machine's second core gives that hour, for work that shares
//     nothing (no target).
//   - wasm: segkit compiled to WebAssembly (GOOS=js GOARCH=wasm) and run
//     by node with Go's wasm_exec_node.js, against the same code native,
//     in the same rounds (target: within 3× native, a ratio of at least
//     0.33×; needs node). record's BenchmarkDecode (ReadBatch with its
//     CRC check, then every record; each shape and codec) and
//     BenchmarkCRC32C built three ways: native; native with -tags
//     purego,noasm and GODEBUG=cpu.all=off, the Go code WASM runs (no
//     AVX-512 CRC folding, no SSE4.2, no codec assembly), which splits
//     the gap into what the native assembly gives and what Go's WASM
//     code costs; and js/wasm, run -benchtime three times as long,
//     since V8 runs WASM code from its baseline compiler until the
//     optimised code is ready. Native runs with GOMAXPROCS=1 (the WASM
//     engine has one thread). The WASM CRC-32C alone against native's
//     whole decode is the floor: where it misses, no decoder can meet
//     the bar. Then `segviz verify` of the big partition, built for
//     js/wasm and run by node, against native on one core and on two.
//
// Kafka runs with the oracle's JVM flags (SerialGC, C1 only:
// -XX:TieredStopAtLevel=1, chosen for start-up); -kafka-jvm adds options
// (ORACLE_JAVA_OPTS), such as -XX:TieredStopAtLevel=4 for a broker's C2.
// Kafka's time of recovery inside the JVM is not reported by the oracle, so
// the steady row estimates it from the tiny partition.
//
// -cpuprofile FILE then profiles segkit's deep dump, repair.Recover and
// inspect.Verify in-process on the big segment into FILE.dump.pprof,
// FILE.recover.pprof and FILE.verify.pprof (go tool pprof -top FILE...).
//
// The test (TestQuick) runs -quick end to end and checks the table; it
// takes minutes, so it runs only with SEGKIT_SIDEBYSIDE=1.
package main
