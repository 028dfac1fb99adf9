package dev.segkit.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Kafka's recovery and retention, run on copies of partition directories with
 * no broker: UnifiedLog.create (which runs the LogLoader) and
 * UnifiedLog.deleteOldSegments, as LogManager calls them.
 */
final class Storage {
    static final ObjectMapper JSON = new ObjectMapper();
    // Broker defaults the log needs: transaction.max.timeout.ms,
    // producer.id.expiration.ms, producer.id.expiration.check.interval.ms.
    static final int MAX_TXN_TIMEOUT_MS = 900_000;
    static final int PRODUCER_ID_EXPIRATION_MS = 86_400_000;
    static final int PRODUCER_ID_EXPIRATION_CHECK_MS = 600_000;

    private Storage() {}

    /** recover [--log-start-offset N] [--config k=v]... SRC OUT [SRC OUT]... */
    static int recover(String[] args) throws Exception {
        Map<String, String> props = new HashMap<>();
        long logStart = 0;
        boolean inPlace = false;
        List<String> pos = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--log-start-offset": logStart = Long.parseLong(need(args, ++i)); break;
                case "--config": putKV(props, need(args, ++i)); break;
                case "--in-place": inPlace = true; break;
                default: pos.add(args[i]);
            }
        }
        if (inPlace ? pos.isEmpty() : pos.isEmpty() || pos.size() % 2 != 0) {
            throw new Main.UsageException(inPlace ? "want DIR..." : "want SRC OUT pairs");
        }
        // Files a truncation or a leftover deletes go at once, not after a minute.
        props.putIfAbsent("file.delete.delay.ms", "0");
        int code = 0;
        int step = inPlace ? 1 : 2;
        for (int i = 0; i < pos.size(); i += step) {
            File src = new File(pos.get(i));
            ObjectNode r = recoverOne(src, inPlace ? null : new File(pos.get(i + 1)), logStart, props);
            if (r.has("error")) code = 3;
            System.out.println(JSON.writeValueAsString(r));
            System.out.flush();
        }
        return code;
    }

    /** Recovers a copy out of src, or src itself when out is null. */
    static ObjectNode recoverOne(File src, File out, long logStart, Map<String, String> props) {
        ObjectNode r = JSON.createObjectNode();
        r.put("src", src.getPath());
        if (out == null) out = src;
        r.put("out", out.getPath());
        try {
            long t0 = System.nanoTime();
            if (out != src) copyDir(src.toPath(), out.toPath());
            long t1 = System.nanoTime();
            TreeMap<Long, Long> before = logSizes(out);
            ArrayNode b = r.putArray("segmentsBefore");
            before.keySet().forEach(b::add);
            KafkaScheduler scheduler = new KafkaScheduler(1, true, "oracle-");
            scheduler.startup();
            UnifiedLog log = null;
            try {
                log = UnifiedLog.create(out, new LogConfig(props), logStart, 0L, scheduler,
                    new BrokerTopicStats(), Time.SYSTEM, MAX_TXN_TIMEOUT_MS,
                    new ProducerStateManagerConfig(PRODUCER_ID_EXPIRATION_MS, false),
                    PRODUCER_ID_EXPIRATION_CHECK_MS, new LogDirFailureChannel(1), false, Optional.empty());
                r.put("logStartOffset", log.logStartOffset());
                r.put("logEndOffset", log.logEndOffset());
                describeSegments(r, log, before);
            } finally {
                if (log != null) log.close();
                scheduler.shutdown();
            }
            // Timings inside the JVM (for side-by-side comparisons without JVM start).
            r.put("copyMs", (t1 - t0) / 1e6);
            r.put("elapsedMs", (System.nanoTime() - t1) / 1e6);
        } catch (Throwable e) {
            r.put("error", e.toString());
        }
        return r;
    }

    static void describeSegments(ObjectNode r, UnifiedLog log, TreeMap<Long, Long> before) {
        ArrayNode segs = r.putArray("segments");
        long truncated = 0;
        Map<Long, Boolean> kept = new HashMap<>();
        for (LogSegment s : log.logSegments()) {
            ObjectNode o = segs.addObject();
            o.put("baseOffset", s.baseOffset());
            o.put("size", s.size());
            Long was = before.get(s.baseOffset());
            if (was != null) {
                o.put("sizeBefore", was);
                truncated += Math.max(0, was - s.size());
            }
            kept.put(s.baseOffset(), true);
        }
        ArrayNode del = r.putArray("segmentsDeleted");
        for (Map.Entry<Long, Long> e : before.entrySet()) {
            if (!kept.containsKey(e.getKey())) {
                del.add(e.getKey());
                truncated += e.getValue();
            }
        }
        r.put("bytesTruncated", truncated);
    }

    /** retention SRC --now T ... | retention --batch */
    static int retention(String[] args) throws Exception {
        Capture capture = Capture.install("org.apache.kafka.storage.internals.log");
        if (args.length == 1 && args[0].equals("--batch")) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            int code = 0;
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank()) continue;
                JsonNode c = JSON.readTree(line);
                Map<String, String> props = new HashMap<>();
                JsonNode cfg = c.path("config");
                for (Iterator<Map.Entry<String, JsonNode>> it = cfg.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    props.put(e.getKey(), e.getValue().asText());
                }
                ObjectNode r = retentionOne(new File(c.path("src").asText()), c.path("now").asLong(), props,
                    c.has("highWatermark") ? c.get("highWatermark").asLong() : -1,
                    c.has("logStartOffset") ? c.get("logStartOffset").asLong() : 0, capture);
                if (c.has("id")) r.set("id", c.get("id"));
                if (r.has("error")) code = 3;
                System.out.println(JSON.writeValueAsString(r));
                System.out.flush();
            }
            return code;
        }
        Map<String, String> props = new HashMap<>();
        long now = -1, hw = -1, logStart = 0;
        String src = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--now": now = Long.parseLong(need(args, ++i)); break;
                case "--config": putKV(props, need(args, ++i)); break;
                case "--high-watermark": hw = Long.parseLong(need(args, ++i)); break;
                case "--log-start-offset": logStart = Long.parseLong(need(args, ++i)); break;
                default:
                    if (src != null) throw new Main.UsageException("one SRC only (use --batch for many)");
                    src = args[i];
            }
        }
        if (src == null || now < 0) throw new Main.UsageException("want SRC --now T");
        ObjectNode r = retentionOne(new File(src), now, props, hw, logStart, capture);
        System.out.println(JSON.writeValueAsString(r));
        return r.has("error") ? 3 : 0;
    }

    private static final Pattern DELETING = Pattern.compile(
        "Deleting segment (?:LogSegment\\(baseOffset=(\\d+)[^)]*\\)) due to (.*)");
    private static final Pattern BASE = Pattern.compile("baseOffset=(\\d+)");

    static ObjectNode retentionOne(File src, long now, Map<String, String> props, long hw, long logStart, Capture capture) {
        ObjectNode r = JSON.createObjectNode();
        r.put("src", src.getPath());
        r.put("now", now);
        Path tmp = null;
        try {
            tmp = Files.createTempDirectory("oracle-retention");
            File dir = new File(tmp.toFile(), src.getName());
            copyDir(src.toPath(), dir.toPath());
            TreeMap<Long, Long> before = logSizes(dir);
            KafkaScheduler scheduler = new KafkaScheduler(1, true, "oracle-");
            scheduler.startup();
            UnifiedLog log = null;
            capture.drain();
            try {
                Map<String, String> p = new HashMap<>(props);
                p.putIfAbsent("file.delete.delay.ms", "0");
                // A running broker's log: the last shutdown was clean, so the loader
                // does not recover (retention acts on the files as they are).
                log = UnifiedLog.create(dir, new LogConfig(p), logStart, Long.MAX_VALUE, scheduler,
                    new BrokerTopicStats(), new FixedTime(now), MAX_TXN_TIMEOUT_MS,
                    new ProducerStateManagerConfig(PRODUCER_ID_EXPIRATION_MS, false),
                    PRODUCER_ID_EXPIRATION_CHECK_MS, new LogDirFailureChannel(1), true, Optional.empty());
                log.updateHighWatermark(hw < 0 ? log.logEndOffset() : hw);
                r.put("logStartOffsetBefore", log.logStartOffset());
                int n = log.deleteOldSegments();
                r.put("deletedCount", n);
                r.put("logStartOffset", log.logStartOffset());
                r.put("logEndOffset", log.logEndOffset());
                ArrayNode deleted = r.putArray("deleted");
                Map<Long, String> reasons = new TreeMap<>();
                for (String m : capture.drain()) {
                    Matcher mm = DELETING.matcher(m);
                    if (mm.find()) {
                        reasons.put(Long.parseLong(mm.group(1)), mm.group(2));
                    } else if (m.contains("Deleting segments due to log start offset")) {
                        Matcher bm = BASE.matcher(m);
                        while (bm.find()) reasons.put(Long.parseLong(bm.group(1)), m.substring(m.indexOf("due to ") + 7, m.indexOf(" breach") + 7));
                    }
                }
                TreeMap<Long, Boolean> kept = new TreeMap<>();
                ArrayNode segs = r.putArray("segments");
                for (LogSegment s : log.logSegments()) {
                    kept.put(s.baseOffset(), true);
                    ObjectNode o = segs.addObject();
                    o.put("baseOffset", s.baseOffset());
                    o.put("size", s.size());
                    o.put("largestTimestamp", s.largestTimestamp());
                }
                for (Long base : before.keySet()) {
                    if (kept.containsKey(base)) continue;
                    ObjectNode o = deleted.addObject();
                    o.put("baseOffset", base);
                    String reason = reasons.getOrDefault(base, "");
                    o.put("reason", reason);
                    o.put("rule", reason.contains("retention time") ? "retention.ms"
                        : reason.contains("retention size") ? "retention.bytes"
                        : reason.contains("start offset") ? "log-start-offset" : "");
                }
            } finally {
                if (log != null) log.close();
                scheduler.shutdown();
            }
        } catch (Throwable e) {
            r.put("error", e.toString());
        } finally {
            if (tmp != null) deleteTree(tmp.toFile());
        }
        return r;
    }

    /** The .log files of a partition directory: base offset → size. */
    static TreeMap<Long, Long> logSizes(File dir) {
        TreeMap<Long, Long> m = new TreeMap<>();
        File[] files = dir.listFiles();
        if (files == null) return m;
        for (File f : files) {
            String n = f.getName();
            if (f.isFile() && n.endsWith(".log") && n.length() == 24) {
                try {
                    m.put(Long.parseLong(n.substring(0, 20)), f.length());
                } catch (NumberFormatException ignored) {
                    // not a segment
                }
            }
        }
        return m;
    }

    /** Copies the regular files of src (not subdirectories) into a new dst, keeping mtimes. */
    static void copyDir(Path src, Path dst) throws IOException {
        if (Files.exists(dst)) throw new IOException(dst + " exists");
        Files.createDirectories(dst);
        try (var s = Files.list(src)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (Files.isRegularFile(p)) {
                    Path d = dst.resolve(p.getFileName());
                    Files.copy(p, d, StandardCopyOption.COPY_ATTRIBUTES);
                    d.toFile().setWritable(true, true); // sources may be read-only (shared/)
                }
            }
        }
    }

    static void deleteTree(File f) {
        File[] kids = f.listFiles();
        if (kids != null) for (File k : kids) deleteTree(k);
        f.delete();
    }

    static String need(String[] args, int i) throws Main.UsageException {
        if (i >= args.length) throw new Main.UsageException(args[i - 1] + " needs a value");
        return args[i];
    }

    static void putKV(Map<String, String> m, String kv) throws Main.UsageException {
        int eq = kv.indexOf('=');
        if (eq <= 0) throw new Main.UsageException("want k=v, got " + kv);
        m.put(kv.substring(0, eq), kv.substring(eq + 1));
    }
}
