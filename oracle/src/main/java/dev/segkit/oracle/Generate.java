package dev.segkit.oracle;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * generate SCENARIO OUT: partitions written by the real broker. Each scenario
 * creates its topics on a fresh single-node broker, produces through Kafka's
 * Java producer, stops the broker cleanly, and copies the topics' partition
 * directories and the log directory's checkpoints into the log directory OUT.
 */
final class Generate {
    private Generate() {}

    /** Scenario name → what it writes. "all" runs every one on one broker. */
    static final Map<String, String> SCENARIOS = new LinkedHashMap<>();
    static {
        SCENARIOS.put("codecs", "one topic per codec (none, gzip, snappy, lz4, zstd): keyed and unkeyed records, headers, null values and null header values, idempotent producer, rolls by segment size");
        SCENARIOS.put("txn", "two transactional producers interleaved with an idempotent one, commits and aborts (ABORT markers, a non-empty .txnindex), rolls by segment size");
        SCENARIOS.put("logappendtime", "message.timestamp.type=LogAppendTime, zstd");
        SCENARIOS.put("segment-ms", "rolls by segment.ms (three bursts 1.5 s apart, segment.ms=1000)");
        SCENARIOS.put("compacted", "cleanup.policy=compact with repeated keys and tombstones, cleaned by the broker's log cleaner (cleaner-offset-checkpoint, delete horizons)");
    }

    static int run(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("list")) {
            for (Map.Entry<String, String> e : SCENARIOS.entrySet()) System.out.println(e.getKey() + "\t" + e.getValue());
            System.out.println("all\tevery scenario above, on one broker");
            return 0;
        }
        if (args.length != 2) throw new Main.UsageException("want SCENARIO OUT (generate list names the scenarios)");
        List<String> which = new ArrayList<>();
        if (args[0].equals("all")) which.addAll(SCENARIOS.keySet());
        else if (SCENARIOS.containsKey(args[0])) which.add(args[0]);
        else throw new Main.UsageException("unknown scenario " + args[0] + " (generate list names them)");
        File out = new File(args[1]);
        if (out.exists() && out.list().length > 0) throw new Main.UsageException(out + " exists and is not empty");

        File work = Files.createTempDirectory("oracle-generate").toFile();
        Map<String, String> brokerCfg = new LinkedHashMap<>();
        brokerCfg.put("log.cleaner.backoff.ms", "200");
        brokerCfg.put("log.flush.offset.checkpoint.interval.ms", "200");
        brokerCfg.put("log.retention.check.interval.ms", "600000");
        int port = freePort();
        Broker b = new Broker(new File(work, "logs"), port, port + 1, brokerCfg);
        List<String> topics = new ArrayList<>();
        ObjectNode report = Storage.JSON.createObjectNode();
        ArrayNode scen = report.putArray("scenarios");
        try {
            b.start();
            for (String s : which) {
                scen.add(s);
                switch (s) {
                    case "codecs": topics.addAll(codecs(b)); break;
                    case "txn": topics.addAll(txn(b)); break;
                    case "logappendtime": topics.addAll(logAppendTime(b)); break;
                    case "segment-ms": topics.addAll(segmentMs(b)); break;
                    case "compacted": topics.addAll(compacted(b)); break;
                    default: throw new IllegalStateException(s);
                }
            }
        } finally {
            b.stop();
        }
        // Copy the partitions and the checkpoints (restricted to them) out.
        Files.createDirectories(out.toPath());
        ArrayNode parts = report.putArray("partitions");
        File[] dirs = b.logDir.listFiles();
        java.util.Arrays.sort(dirs);
        List<String> keys = new ArrayList<>();
        for (File d : dirs) {
            if (!d.isDirectory()) continue;
            String name = d.getName();
            boolean wanted = name.startsWith("__transaction_state-");
            for (String t : topics) wanted |= name.startsWith(t + "-");
            if (!wanted) continue;
            Storage.copyDir(d.toPath(), new File(out, name).toPath());
            parts.add(name);
            keys.add(Broker.topicPartitionKey(name));
        }
        for (String cp : List.of("recovery-point-offset-checkpoint", "log-start-offset-checkpoint", "replication-offset-checkpoint", "cleaner-offset-checkpoint")) {
            TreeMap<String, Long> m = Broker.readCheckpoint(new File(b.logDir, cp));
            m.keySet().retainAll(keys);
            Broker.writeCheckpoint(new File(out, cp), m);
        }
        File marker = new File(b.logDir, ".kafka_cleanshutdown");
        if (marker.exists()) Files.copy(marker.toPath(), new File(out, ".kafka_cleanshutdown").toPath());
        Storage.deleteTree(work);
        System.out.println(Storage.JSON.writeValueAsString(report));
        return 0;
    }

    static int freePort() throws java.io.IOException {
        for (int i = 0; i < 50; i++) {
            int p;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) { p = s.getLocalPort(); }
            try (java.net.ServerSocket s2 = new java.net.ServerSocket(p + 1, 1, java.net.InetAddress.getByName("127.0.0.1"))) { return p; } catch (java.io.IOException busy) { /* try another */ }
        }
        throw new java.io.IOException("no free port pair");
    }

    static KafkaProducer<byte[], byte[]> producer(Broker b, Map<String, String> extra) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, b.bootstrap());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "2");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "4096");
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    static byte[] bytes(String s) { return s == null ? null : s.getBytes(StandardCharsets.UTF_8); }

    /** A deterministic record i: a key (every 5th null), a value (every 11th null), headers. */
    static ProducerRecord<byte[], byte[]> rec(String topic, int i, boolean nulls) {
        RecordHeaders h = new RecordHeaders();
        if (i % 3 == 0) h.add("trace", bytes("t-" + i));
        if (i % 4 == 0) h.add("empty", new byte[0]);
        if (nulls && i % 7 == 0) h.add("nullvalue", null);
        String key = nulls && i % 5 == 0 ? null : "key-" + (i % 37);
        String value = nulls && i % 11 == 0 ? null : "value " + i + " " + "x".repeat(i % 61);
        return new ProducerRecord<>(topic, 0, null, bytes(key), bytes(value), h);
    }

    static void flushAll(List<Future<RecordMetadata>> fs) throws Exception {
        for (Future<RecordMetadata> f : fs) f.get();
        fs.clear();
    }

    static List<String> codecs(Broker b) throws Exception {
        List<String> topics = new ArrayList<>();
        for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
            String topic = "codec-" + codec;
            b.createTopic(topic, 1, Map.of("internal.segment.bytes", codec.equals("none") ? "65536" : "12288", "compression.type", "producer"));
            try (KafkaProducer<byte[], byte[]> p = producer(b, Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true"))) {
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                for (int i = 0; i < 1500; i++) {
                    fs.add(p.send(rec(topic, i, true)));
                    if (i % 97 == 96) flushAll(fs); // batches of varied sizes
                }
                flushAll(fs);
            }
            topics.add(topic);
        }
        return topics;
    }

    static List<String> txn(Broker b) throws Exception {
        String topic = "txn";
        b.createTopic(topic, 1, Map.of("internal.segment.bytes", "16384"));
        try (KafkaProducer<byte[], byte[]> t1 = producer(b, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "gen-t1", ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd"));
             KafkaProducer<byte[], byte[]> t2 = producer(b, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "gen-t2"));
             KafkaProducer<byte[], byte[]> idem = producer(b, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true"))) {
            t1.initTransactions();
            t2.initTransactions();
            int i = 0;
            for (int round = 0; round < 12; round++) {
                t1.beginTransaction();
                t2.beginTransaction();
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                for (int k = 0; k < 15; k++) {
                    fs.add(t1.send(rec(topic, i++, true)));
                    fs.add(t2.send(rec(topic, i++, false)));
                    if (k % 5 == 0) fs.add(idem.send(rec(topic, i++, false)));
                    t1.flush();
                    t2.flush();
                }
                flushAll(fs);
                // Aborts and commits in both orders, overlapping transactions.
                if (round % 3 == 1) { t1.abortTransaction(); t2.commitTransaction(); }
                else if (round % 3 == 2) { t2.abortTransaction(); t1.commitTransaction(); }
                else { t1.commitTransaction(); t2.commitTransaction(); }
            }
        }
        return List.of(topic);
    }

    static List<String> logAppendTime(Broker b) throws Exception {
        String topic = "logappendtime";
        b.createTopic(topic, 1, Map.of("message.timestamp.type", "LogAppendTime", "internal.segment.bytes", "32768"));
        try (KafkaProducer<byte[], byte[]> p = producer(b, Map.of(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd"))) {
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < 600; i++) {
                fs.add(p.send(rec(topic, i, false)));
                if (i % 50 == 49) flushAll(fs);
            }
            flushAll(fs);
        }
        return List.of(topic);
    }

    static List<String> segmentMs(Broker b) throws Exception {
        String topic = "segment-ms";
        b.createTopic(topic, 1, Map.of("segment.ms", "1000"));
        try (KafkaProducer<byte[], byte[]> p = producer(b, Map.of())) {
            int i = 0;
            for (int burst = 0; burst < 3; burst++) {
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                for (int k = 0; k < 40; k++) fs.add(p.send(rec(topic, i++, false)));
                flushAll(fs);
                Thread.sleep(1500);
            }
        }
        return List.of(topic);
    }

    static List<String> compacted(Broker b) throws Exception {
        String topic = "compacted";
        b.createTopic(topic, 1, Map.of(
            "cleanup.policy", "compact", "internal.segment.bytes", "8192", "min.cleanable.dirty.ratio", "0.01",
            "segment.ms", "100", "file.delete.delay.ms", "100"));
        try (KafkaProducer<byte[], byte[]> p = producer(b, Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true"))) {
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < 1200; i++) {
                String key = "user-" + (i % 40);
                String value = i % 9 == 0 ? null : "{\"n\":" + i + "}"; // tombstones
                fs.add(p.send(new ProducerRecord<>(topic, 0, null, bytes(key), bytes(value))));
                if (i % 60 == 59) { flushAll(fs); Thread.sleep(120); } // rolls by segment.ms too
            }
            flushAll(fs);
            // One more record after a pause so the last data segment is no longer active.
            Thread.sleep(300);
            p.send(new ProducerRecord<>(topic, 0, null, bytes("user-0"), bytes("{\"n\":\"last\"}"))).get();
        }
        // Wait for the cleaner to checkpoint a clean past the middle of the log.
        File cp = new File(b.logDir, "cleaner-offset-checkpoint");
        long deadline = System.currentTimeMillis() + 90_000;
        while (true) {
            Long done = Broker.readCheckpoint(cp).get(topic + " 0");
            if (done != null && done >= 1000) break;
            if (System.currentTimeMillis() > deadline) throw new java.io.IOException("the log cleaner did not clean " + topic + " within 90 s (checkpoint " + done + ")");
            Thread.sleep(200);
        }
        Thread.sleep(1000); // the replaced segments' .deleted files go after file.delete.delay.ms
        return List.of(topic);
    }
}
