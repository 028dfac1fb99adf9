package dev.segkit.oracle;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A single-node KRaft broker (combined broker and controller) run in this
 * JVM, as kafka.Kafka runs it, on 127.0.0.1; and the adoption of partition
 * directories written offline.
 */
final class Broker implements AutoCloseable {
    final File logDir;
    final int port;
    final int controllerPort;
    final Map<String, String> overrides;
    private KafkaRaftServer server;

    Broker(File logDir, int port, int controllerPort, Map<String, String> overrides) {
        this.logDir = logDir;
        this.port = port;
        this.controllerPort = controllerPort;
        this.overrides = overrides;
    }

    String bootstrap() { return "127.0.0.1:" + port; }

    Map<String, String> config() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("process.roles", "broker,controller");
        p.put("node.id", "1");
        p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("controller.listener.names", "CONTROLLER");
        p.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT");
        p.put("log.dirs", logDir.getAbsolutePath());
        p.put("num.partitions", "1");
        p.put("offsets.topic.replication.factor", "1");
        p.put("offsets.topic.num.partitions", "1");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("transaction.state.log.num.partitions", "1");
        p.put("share.coordinator.state.topic.replication.factor", "1");
        p.put("share.coordinator.state.topic.min.isr", "1");
        p.put("group.initial.rebalance.delay.ms", "0");
        p.put("auto.create.topics.enable", "false");
        p.putAll(overrides);
        return p;
    }

    /** Formats the log directory on first use, then starts the broker and waits until it serves. */
    void start() throws Exception {
        Files.createDirectories(logDir.toPath());
        Map<String, String> cfg = config();
        if (!new File(logDir, "meta.properties").exists()) {
            File props = File.createTempFile("oracle-server", ".properties");
            try {
                Properties p = new Properties();
                p.putAll(cfg);
                try (var w = Files.newBufferedWriter(props.toPath())) { p.store(w, "segkit oracle"); }
                int rc = kafka.tools.StorageTool.execute(new String[] {
                    "format", "-t", Uuid.randomUuid().toString(), "-c", props.getPath()}, System.err);
                if (rc != 0) throw new IOException("kafka-storage format failed: " + rc);
            } finally {
                props.delete();
            }
        }
        server = new KafkaRaftServer(new KafkaConfig(cfg, false), Time.SYSTEM);
        server.startup();
        try (Admin admin = admin()) {
            long deadline = System.currentTimeMillis() + 60_000;
            while (true) {
                try {
                    if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) break;
                } catch (Exception e) {
                    if (System.currentTimeMillis() > deadline) throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /** Stops the broker cleanly: it writes its clean-shutdown marker and trims its indexes. */
    void stop() {
        if (server != null) {
            server.shutdown();
            server.awaitShutdown();
            server = null;
        }
    }

    @Override public void close() { stop(); }

    Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return Admin.create(p);
    }

    /** Creates a topic and waits until each partition has a leader and its directory. */
    Uuid createTopic(String topic, int partitions, Map<String, String> configs) throws Exception {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs))).all().get(30, TimeUnit.SECONDS);
            long deadline = System.currentTimeMillis() + 30_000;
            while (true) {
                TopicDescription d = null;
                try {
                    d = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
                } catch (Exception e) {
                    if (System.currentTimeMillis() > deadline) throw e;
                }
                boolean ready = d != null;
                if (ready) {
                    for (TopicPartitionInfo pi : d.partitions()) {
                        ready &= pi.leader() != null && new File(logDir, topic + "-" + pi.partition() + "/partition.metadata").exists();
                    }
                }
                if (ready) return d.topicId();
                if (System.currentTimeMillis() > deadline) throw new IOException("topic " + topic + " not ready after 30 s");
                Thread.sleep(100);
            }
        }
    }

    /** Earliest and latest offsets of a partition, as ListOffsets answers. */
    long[] offsets(Admin admin, TopicPartition tp) throws Exception {
        ListOffsetsResult e = admin.listOffsets(Map.of(tp, OffsetSpec.earliest()));
        ListOffsetsResult l = admin.listOffsets(Map.of(tp, OffsetSpec.latest()));
        return new long[] {e.partitionResult(tp).get(10, TimeUnit.SECONDS).offset(), l.partitionResult(tp).get(10, TimeUnit.SECONDS).offset()};
    }

    /** Directories of the log directory that the broker marked stray. */
    List<String> strayDirs() {
        List<String> out = new ArrayList<>();
        File[] kids = logDir.listFiles();
        if (kids != null) for (File k : kids) if (k.isDirectory() && k.getName().endsWith("-stray")) out.add(k.getName());
        Collections.sort(out);
        return out;
    }

    // ---- commands ----

    static final class Args {
        File logDir;
        int port = 9092;
        int controllerPort = -1;
        String topic;
        File serverLog;
        File tieredStorage;
        Map<String, String> config = new HashMap<>();
        Map<String, String> topicConfig = new HashMap<>();
        List<String> rest = new ArrayList<>();

        static Args parse(String[] a) throws Main.UsageException {
            Args r = new Args();
            for (int i = 0; i < a.length; i++) {
                switch (a[i]) {
                    case "--log-dir": r.logDir = new File(Storage.need(a, ++i)); break;
                    case "--port": r.port = Integer.parseInt(Storage.need(a, ++i)); break;
                    case "--controller-port": r.controllerPort = Integer.parseInt(Storage.need(a, ++i)); break;
                    case "--topic": r.topic = Storage.need(a, ++i); break;
                    case "--server-log": r.serverLog = new File(Storage.need(a, ++i)); break;
                    case "--tiered-storage": r.tieredStorage = new File(Storage.need(a, ++i)).getAbsoluteFile(); break;
                    case "--config": Storage.putKV(r.config, Storage.need(a, ++i)); break;
                    case "--topic-config": Storage.putKV(r.topicConfig, Storage.need(a, ++i)); break;
                    default:
                        if (a[i].startsWith("--")) throw new Main.UsageException("unknown flag " + a[i]);
                        r.rest.add(a[i]);
                }
            }
            if (r.logDir == null) throw new Main.UsageException("--log-dir is required");
            if (r.controllerPort < 0) r.controllerPort = r.port + 1;
            return r;
        }

        Broker broker() {
            if (serverLog != null) ServerLog.install(serverLog);
            Map<String, String> all = new LinkedHashMap<>();
            if (tieredStorage != null) all.putAll(tieredStorageConfig(tieredStorage));
            all.putAll(config); // --config wins
            return new Broker(logDir, port, controllerPort, all);
        }
    }

    /**
     * The broker configs of --tiered-storage DIR: KIP-405 tiered storage with
     * Kafka's own LocalTieredStorage (kafka-storage's test jar) writing under
     * DIR/kafka-tiered-storage, the default topic-based remote log metadata
     * manager sized for one node (its __remote_log_metadata topic with one
     * partition, replication factor and min ISR 1), and the copy and the
     * retention checks every 500 ms instead of every 30 s and 5 minutes.
     */
    static Map<String, String> tieredStorageConfig(File dir) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("remote.log.storage.system.enable", "true");
        p.put("remote.log.storage.manager.class.name", "org.apache.kafka.server.log.remote.storage.LocalTieredStorage");
        p.put("rsm.config.dir", dir.getAbsolutePath());
        p.put("rsm.config.delete.on.close", "false");
        p.put("remote.log.metadata.manager.class.name", "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager");
        p.put("remote.log.metadata.manager.listener.name", "PLAINTEXT");
        p.put("rlmm.config.remote.log.metadata.topic.replication.factor", "1");
        p.put("rlmm.config.remote.log.metadata.topic.min.isr", "1");
        p.put("rlmm.config.remote.log.metadata.topic.num.partitions", "1");
        p.put("remote.log.manager.task.interval.ms", "500");
        p.put("log.retention.check.interval.ms", "500");
        p.put("log.initial.task.delay.ms", "0");
        return p;
    }

    /** broker --log-dir D --port P: serves until SIGTERM or stdin closes. */
    static int serve(String[] a) throws Exception {
        Args args = Args.parse(a);
        Broker b = args.broker();
        Capture loader = Capture.install("org.apache.kafka.storage.internals.log");
        b.start();
        ObjectNode r = Storage.JSON.createObjectNode();
        r.put("bootstrap", b.bootstrap());
        r.put("logDir", b.logDir.getAbsolutePath());
        if (args.tieredStorage != null) r.put("remoteDir", new File(args.tieredStorage, "kafka-tiered-storage").getPath());
        System.out.println(Storage.JSON.writeValueAsString(r));
        System.out.flush();
        serveUntilStopped(b);
        return 0;
    }

    static void serveUntilStopped(Broker b) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> { b.stop(); done.countDown(); }));
        Thread stdin = new Thread(() -> {
            try {
                InputStream in = System.in;
                byte[] buf = new byte[256];
                while (in.read(buf) >= 0) { /* wait for EOF */ }
            } catch (IOException ignored) {
                // closed
            }
            b.stop();
            done.countDown();
        }, "oracle-stdin");
        stdin.setDaemon(true);
        stdin.start();
        done.await();
    }

    /** adopt --log-dir D --topic T SRC...: see Main's usage. */
    static int adopt(String[] a) throws Exception {
        Args args = Args.parse(a);
        if (args.topic == null) throw new Main.UsageException("--topic is required");
        if (args.rest.isEmpty()) throw new Main.UsageException("want SRC partition directories");
        for (String s : args.rest) {
            if (!new File(s).isDirectory()) throw new Main.UsageException(s + " is not a directory");
        }
        Broker b = args.broker();
        b.start();
        Uuid id = b.createTopic(args.topic, args.rest.size(), args.topicConfig);
        b.stop();

        Map<String, Long> logStarts = new HashMap<>();
        List<File> dirs = new ArrayList<>();
        for (int i = 0; i < args.rest.size(); i++) {
            File src = new File(args.rest.get(i));
            File dst = new File(b.logDir, args.topic + "-" + i);
            File[] old = dst.listFiles();
            if (old != null) for (File f : old) Storage.deleteTree(f);
            Files.createDirectories(dst.toPath());
            File[] files = src.listFiles();
            if (files != null) {
                for (File f : files) {
                    if (!f.isFile() || f.getName().equals("partition.metadata")) continue;
                    Files.copy(f.toPath(), new File(dst, f.getName()).toPath(), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
            // PartitionMetadata.encode: "version: 0\ntopic_id: <base64>"
            Files.writeString(new File(dst, "partition.metadata").toPath(), "version: 0\ntopic_id: " + id + "\n", StandardCharsets.UTF_8);
            Long ls = readCheckpoint(new File(src.getAbsoluteFile().getParentFile(), "log-start-offset-checkpoint")).get(topicPartitionKey(src.getName()));
            if (ls != null) logStarts.put(args.topic + " " + i, ls);
            dirs.add(dst);
        }
        // Make Kafka recheck everything: recovery point 0, no clean-shutdown marker,
        // no cleaner checkpoint; log start offsets from the sources' own log directory.
        for (String name : List.of("recovery-point-offset-checkpoint", "log-start-offset-checkpoint", "cleaner-offset-checkpoint", "replication-offset-checkpoint")) {
            File f = new File(b.logDir, name);
            if (!f.exists()) continue;
            TreeMap<String, Long> m = readCheckpoint(f);
            m.keySet().removeIf(k -> k.startsWith(args.topic + " "));
            if (name.equals("recovery-point-offset-checkpoint")) {
                for (int i = 0; i < dirs.size(); i++) m.put(args.topic + " " + i, 0L);
            }
            if (name.equals("log-start-offset-checkpoint")) m.putAll(logStarts);
            writeCheckpoint(f, m);
        }
        new File(b.logDir, ".kafka_cleanshutdown").delete();
        List<TreeMap<Long, Long>> before = new ArrayList<>();
        for (File d : dirs) before.add(Storage.logSizes(d));

        Capture loader = Capture.install("org.apache.kafka.storage.internals.log");
        b.start();
        ObjectNode r = Storage.JSON.createObjectNode();
        r.put("bootstrap", b.bootstrap());
        r.put("logDir", b.logDir.getAbsolutePath());
        r.put("topic", args.topic);
        r.put("topicId", id.toString());
        if (args.tieredStorage != null) r.put("remoteDir", new File(args.tieredStorage, "kafka-tiered-storage").getPath());
        ArrayNode parts = r.putArray("partitions");
        long totalTruncated = 0;
        try (Admin admin = b.admin()) {
            for (int i = 0; i < dirs.size(); i++) {
                ObjectNode p = parts.addObject();
                p.put("partition", i);
                p.put("src", args.rest.get(i));
                p.put("dir", dirs.get(i).getPath());
                long[] off = b.offsets(admin, new TopicPartition(args.topic, i));
                p.put("logStartOffset", off[0]);
                p.put("logEndOffset", off[1]);
                TreeMap<Long, Long> after = Storage.logSizes(dirs.get(i));
                long truncated = 0;
                for (Map.Entry<Long, Long> e : before.get(i).entrySet()) {
                    Long now = after.get(e.getKey());
                    truncated += now == null ? e.getValue() : Math.max(0, e.getValue() - now);
                }
                p.put("bytesTruncated", truncated);
                p.put("exists", dirs.get(i).isDirectory());
                totalTruncated += truncated;
            }
        }
        r.put("bytesTruncated", totalTruncated);
        // The LogLoader says "Recovering unflushed segment N" for each segment it
        // rechecks: proof that adoption made Kafka recover, not trust, the files.
        ArrayNode recovered = r.putArray("recoveredSegments");
        for (String m : loader.drain()) {
            java.util.regex.Matcher mm = RECOVERING.matcher(m);
            if (mm.find() && m.contains(args.topic + "-")) recovered.add(m.substring(m.indexOf('[') + 1, m.indexOf(']')) + " " + mm.group(1));
        }
        ArrayNode stray = r.putArray("strayDirs");
        b.strayDirs().forEach(stray::add);
        System.out.println(Storage.JSON.writeValueAsString(r));
        System.out.flush();
        serveUntilStopped(b);
        return 0;
    }

    private static final java.util.regex.Pattern RECOVERING = java.util.regex.Pattern.compile("Recovering unflushed segment (\\d+)");

    /** "topic-3" → "topic 3", the key a checkpoint file uses. */
    static String topicPartitionKey(String dirName) {
        int dash = dirName.lastIndexOf('-');
        return dash < 0 ? dirName : dirName.substring(0, dash) + " " + dirName.substring(dash + 1);
    }

    /** Reads an offset checkpoint: "0", count, then "topic partition offset" lines. */
    static TreeMap<String, Long> readCheckpoint(File f) throws IOException {
        TreeMap<String, Long> m = new TreeMap<>();
        if (!f.exists()) return m;
        List<String> lines = Files.readAllLines(f.toPath(), StandardCharsets.UTF_8);
        for (int i = 2; i < lines.size(); i++) {
            String[] parts = lines.get(i).trim().split(" ");
            if (parts.length == 3) m.put(parts[0] + " " + parts[1], Long.parseLong(parts[2]));
        }
        return m;
    }

    static void writeCheckpoint(File f, Map<String, Long> m) throws IOException {
        StringBuilder sb = new StringBuilder("0\n").append(m.size()).append('\n');
        for (Map.Entry<String, Long> e : m.entrySet()) sb.append(e.getKey()).append(' ').append(e.getValue()).append('\n');
        Path tmp = new File(f.getPath() + ".tmp").toPath();
        Files.writeString(tmp, sb.toString(), StandardCharsets.UTF_8);
        Files.move(tmp, f.toPath(), java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
