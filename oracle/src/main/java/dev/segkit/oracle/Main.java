package dev.segkit.oracle;

import java.util.Arrays;

/**
 * The oracle's entry point: Kafka 4.3.1's own storage code and broker, run
 * beside segkit so that Kafka is the judge. Every command that reports prints
 * JSON on stdout (one object per line); logs and diagnostics go to stderr.
 * Exit status: 0 done, 2 bad command line, 3 the command failed.
 */
public final class Main {
    static final String USAGE = String.join("\n",
        "Usage: oracle/kafka CMD ARGS...  (Kafka 4.3.1)",
        "",
        "  dump-log ARGS...",
        "      Kafka's DumpLogSegments (org.apache.kafka.tools.DumpLogSegments) with ARGS.",
        "  broker --log-dir D --port P [--controller-port C] [--config k=v]... [--server-log DIR]",
        "         [--tiered-storage DIR]",
        "      A single-node KRaft broker (combined mode) on 127.0.0.1:P, formatted on first",
        "      start. Prints {\"bootstrap\":\"127.0.0.1:P\",...} when ready; stops cleanly on",
        "      SIGTERM or when stdin closes. --server-log (broker and adopt): Kafka's",
        "      server.log and log-cleaner.log in DIR, as its config/log4j2.yaml writes them.",
        "      --tiered-storage DIR (broker and adopt): KIP-405 tiered storage with Kafka's",
        "      LocalTieredStorage writing under DIR/kafka-tiered-storage (topic-based remote log",
        "      metadata, copy and retention checks every 500 ms); the ready line has \"remoteDir\".",
        "      Topics opt in with remote.storage.enable=true (and local.retention.ms/bytes).",
        "  adopt --log-dir D --topic T [--port P] [--config k=v]... [--topic-config k=v]... SRC...",
        "      Makes a broker serve partition directories written offline: SRC i becomes",
        "      partition i of topic T. Creates the topic (for its topic ID), stops, puts the",
        "      segments in place with that ID in partition.metadata, removes the clean-shutdown",
        "      marker and sets the recovery point to 0, starts again and keeps serving like",
        "      `broker`. Prints one JSON report (topic ID, offsets, bytes Kafka's recovery",
        "      truncated, stray directories) when ready.",
        "  recover [--log-start-offset N] [--config k=v]... SRC OUT [SRC OUT]...",
        "      Kafka's recovery (UnifiedLog/LogLoader, unclean shutdown, recovery point 0) on",
        "      a copy OUT of SRC (OUT must not exist; its name must be topic-partition). One",
        "      JSON line per pair: log start and end offsets, bytes truncated, segments kept",
        "      and deleted. OUT keeps the rebuilt .index/.timeindex/.txnindex.",
        "  recover --in-place [--log-start-offset N] [--config k=v]... DIR...",
        "      The same recovery of each DIR itself, as a broker's restart does: no copy.",
        "  retention SRC --now T [--config k=v]... [--high-watermark N] [--log-start-offset N]",
        "  retention --batch   (JSON lines on stdin: {src, now, config, highWatermark, logStartOffset})",
        "      Kafka's deleteOldSegments with a fixed clock, on a copy. Reports the deleted",
        "      base offsets with Kafka's reason and the new log start offset.",
        "  clean [--now MS] [--config k=v]... [--dedupe-buffer BYTES] [--io-buffer BYTES]",
        "        [--max-io-buffer BYTES] [--high-watermark N] [--no-producer-expiration] [--timing] SRC OUT [SRC OUT]...",
        "  clean --batch   (JSON lines on stdin: {src, out, now, config, dedupeBuffer, ioBuffer, ...})",
        "      Kafka's log cleaner (LogCleanerManager + Cleaner.clean, once) with a fixed clock, on",
        "      a copy OUT of SRC under its own log directory (OUT's parent, with SRC's checkpoint",
        "      entries). The high watermark is the log end (or N); the producers expired at --now",
        "      are removed first, as a running broker's periodic check would have. One JSON line",
        "      per pair: cleanable range and ratio, delete horizons, stats, active producers,",
        "      segments before and after, the cleaner-offset-checkpoint before and after; with",
        "      --timing (batch: \"timing\": true), the wall time of Cleaner.clean alone, the dedupe",
        "      buffer and the JVM's heap peak.",
        "  generate SCENARIO OUT",
        "      Partitions written by the real broker, produced through it, into the log",
        "      directory OUT. `generate list` names the scenarios.",
        "");

    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || args[0].equals("help") || args[0].equals("--help") || args[0].equals("-h")) {
            System.out.print(USAGE);
            System.exit(args.length == 0 ? 2 : 0);
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        int code;
        try {
            switch (args[0]) {
                case "recover": code = Storage.recover(rest); break;
                case "retention": code = Storage.retention(rest); break;
                case "clean": code = Clean.run(rest); break;
                case "broker": code = Broker.serve(rest); break;
                case "adopt": code = Broker.adopt(rest); break;
                case "generate": code = Generate.run(rest); break;
                default:
                    System.err.println("oracle/kafka: unknown command " + args[0] + "\n");
                    System.err.print(USAGE);
                    code = 2;
            }
        } catch (UsageException e) {
            System.err.println("oracle/kafka " + args[0] + ": " + e.getMessage());
            code = 2;
        } catch (Exception e) {
            System.err.println("oracle/kafka " + args[0] + ": " + e);
            e.printStackTrace(System.err);
            code = 3;
        }
        System.out.flush();
        System.exit(code);
    }

    /** A bad command line: exit 2. */
    static final class UsageException extends Exception {
        UsageException(String msg) { super(msg); }
    }
}
