package dev.segkit.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.CleanerStats;
import org.apache.kafka.storage.internals.log.LastRecord;
import org.apache.kafka.storage.internals.log.LogCleanerManager;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.LogToClean;
import org.apache.kafka.storage.internals.log.PreCleanStats;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.utils.Throttler;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Kafka's log cleaner, run once on a copy of a partition directory with a
 * fixed clock: what a broker's cleaner thread does for one partition
 * (LogCleaner.CleanerThread.cleanFilthiestLog), with Kafka's own
 * LogCleanerManager choosing the cleanable range and writing the
 * cleaner-offset-checkpoint, and Kafka's own Cleaner rewriting the segments.
 *
 * <p>clean [--now MS] [--config k=v]... [--dedupe-buffer BYTES] [--io-buffer BYTES]
 * [--max-io-buffer BYTES] [--high-watermark N] [--no-producer-expiration] [--timing] SRC OUT [SRC OUT]...
 * <br>clean --batch (JSON lines on stdin: {src, out, now, config, dedupeBuffer, ioBuffer,
 * maxIoBuffer, highWatermark, producerExpiration, timing})
 *
 * <p>Each SRC is copied to OUT (which must not exist; its name must be
 * topic-partition). OUT's parent becomes a log directory holding SRC's entries
 * of the per-log-directory checkpoints (cleaner-offset-checkpoint,
 * log-start-offset-checkpoint, recovery-point-offset-checkpoint) and SRC's
 * clean-shutdown marker, if SRC's log directory has them. The copy is opened
 * with UnifiedLog.create as LogManager opens a log: the checkpointed log start
 * offset and recovery point, recovery unless the shutdown was clean. The high
 * watermark is set to the log end offset (or --high-watermark). Unless
 * --no-producer-expiration, the producers expired at --now are removed first, as
 * the broker's periodic check (producer.id.expiration.check.interval.ms) would
 * have done by then. Then LogCleanerManager.grabFilthiestCompactedLog decides
 * whether the log is cleanable; if it is, Cleaner.clean runs once and
 * LogCleanerManager.doneCleaning writes the checkpoint (as the cleaner thread's
 * finally block does, with the first dirty offset when cleaning failed).
 *
 * <p>One JSON line per pair: the range and ratio (Kafka's
 * LogCleanerManager.cleanableOffsets and LogToClean), whether it was cleaned
 * and why not, the delete horizons, the cleaner's stats, the segments before
 * and after, the checkpoint before and after, the active producers the cleaner
 * saw, and any error. Nothing in it depends on the wall clock, unless --timing
 * (batch: "timing": true) asks for a "timing" object: the wall time of
 * Cleaner.clean alone (cleanNanos: not the JVM's start, the copy, the log's
 * load or LogCleanerManager's choice; the offset map is allocated before it, as
 * a broker allocates it when its cleaner thread starts; the copy is forced
 * to disk before, so that its writeback is not timed), the dedupe buffer the
 * SkimpyOffsetMap holds (dedupeBufferBytes, slots × 24) and the JVM heap's peak
 * during the clean (heapPeakBytes, the heap pools' peak usage, reset after a
 * System.gc() just before it). In batch mode the JVM stays up between jobs, so
 * a caller that feeds one line at a time times a warm JIT.
 */
final class Clean {
    // Kafka's broker defaults (CleanerConfig, ServerConfigs).
    static final long DEFAULT_DEDUPE_BUFFER = 128L * 1024 * 1024; // log.cleaner.dedupe.buffer.size
    static final int DEFAULT_IO_BUFFER = 512 * 1024 / 2;          // log.cleaner.io.buffer.size / threads / 2
    static final int DEFAULT_MAX_IO_BUFFER = 1024 * 1024 + 12;    // message.max.bytes
    static final double LOAD_FACTOR = 0.9;                         // log.cleaner.io.buffer.load.factor

    private Clean() {}

    /** One pair and its settings. */
    static final class Job {
        File src;
        File out;
        long now = -1;
        Map<String, String> props = new HashMap<>();
        long dedupeBuffer = DEFAULT_DEDUPE_BUFFER;
        int ioBuffer = DEFAULT_IO_BUFFER;
        int maxIoBuffer = DEFAULT_MAX_IO_BUFFER;
        long highWatermark = -1;
        boolean expireProducers = true;
        boolean timing;
        JsonNode id;
    }

    static int run(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("--batch")) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            int code = 0;
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank()) continue;
                JsonNode c = Storage.JSON.readTree(line);
                Job j = new Job();
                j.src = new File(c.path("src").asText());
                j.out = new File(c.path("out").asText());
                j.now = c.has("now") ? c.get("now").asLong() : System.currentTimeMillis();
                for (Iterator<Map.Entry<String, JsonNode>> it = c.path("config").fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    j.props.put(e.getKey(), e.getValue().asText());
                }
                if (c.has("dedupeBuffer")) j.dedupeBuffer = c.get("dedupeBuffer").asLong();
                if (c.has("ioBuffer")) j.ioBuffer = c.get("ioBuffer").asInt();
                if (c.has("maxIoBuffer")) j.maxIoBuffer = c.get("maxIoBuffer").asInt();
                if (c.has("highWatermark")) j.highWatermark = c.get("highWatermark").asLong();
                if (c.has("producerExpiration")) j.expireProducers = c.get("producerExpiration").asBoolean();
                if (c.has("timing")) j.timing = c.get("timing").asBoolean();
                if (c.has("id")) j.id = c.get("id");
                ObjectNode r = cleanOne(j);
                if (r.has("error")) code = 3;
                System.out.println(Storage.JSON.writeValueAsString(r));
                System.out.flush();
            }
            return code;
        }
        Job proto = new Job();
        List<String> pos = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--now": proto.now = Long.parseLong(Storage.need(args, ++i)); break;
                case "--config": Storage.putKV(proto.props, Storage.need(args, ++i)); break;
                case "--dedupe-buffer": proto.dedupeBuffer = Long.parseLong(Storage.need(args, ++i)); break;
                case "--io-buffer": proto.ioBuffer = Integer.parseInt(Storage.need(args, ++i)); break;
                case "--max-io-buffer": proto.maxIoBuffer = Integer.parseInt(Storage.need(args, ++i)); break;
                case "--high-watermark": proto.highWatermark = Long.parseLong(Storage.need(args, ++i)); break;
                case "--no-producer-expiration": proto.expireProducers = false; break;
                case "--timing": proto.timing = true; break;
                default:
                    if (args[i].startsWith("--")) throw new Main.UsageException("unknown flag " + args[i]);
                    pos.add(args[i]);
            }
        }
        if (pos.isEmpty() || pos.size() % 2 != 0) throw new Main.UsageException("want SRC OUT pairs");
        if (proto.now < 0) proto.now = System.currentTimeMillis();
        int code = 0;
        for (int i = 0; i < pos.size(); i += 2) {
            Job j = new Job();
            j.src = new File(pos.get(i));
            j.out = new File(pos.get(i + 1));
            j.now = proto.now;
            j.props = new HashMap<>(proto.props);
            j.dedupeBuffer = proto.dedupeBuffer;
            j.ioBuffer = proto.ioBuffer;
            j.maxIoBuffer = proto.maxIoBuffer;
            j.highWatermark = proto.highWatermark;
            j.expireProducers = proto.expireProducers;
            j.timing = proto.timing;
            ObjectNode r = cleanOne(j);
            if (r.has("error")) code = 3;
            System.out.println(Storage.JSON.writeValueAsString(r));
            System.out.flush();
        }
        return code;
    }

    /** The topic-partition a directory name stands for (LocalLog.parseTopicPartitionName). */
    static TopicPartition topicPartition(File dir) throws Main.UsageException {
        String n = dir.getName();
        int i = n.lastIndexOf('-');
        if (i <= 0 || i == n.length() - 1) throw new Main.UsageException(dir + ": the name must be topic-partition");
        try {
            return new TopicPartition(n.substring(0, i), Integer.parseInt(n.substring(i + 1)));
        } catch (NumberFormatException e) {
            throw new Main.UsageException(dir + ": the name must be topic-partition");
        }
    }

    /** SRC's entry of a per-log-directory checkpoint, merged into OUT's log directory's file. */
    static Optional<Long> carryCheckpoint(String name, File srcLogDir, File outLogDir, TopicPartition tp, LogDirFailureChannel ch) throws Exception {
        File sf = new File(srcLogDir, name);
        if (!sf.isFile()) return Optional.empty();
        Long v = new OffsetCheckpointFile(sf, ch).read().get(tp);
        if (v == null) return Optional.empty();
        OffsetCheckpointFile of = new OffsetCheckpointFile(new File(outLogDir, name), ch);
        Map<TopicPartition, Long> m = new HashMap<>(of.read());
        m.put(tp, v);
        of.write(m);
        return Optional.of(v);
    }

    static final Map<Long, SkimpyOffsetMap> MAPS = new HashMap<>();

    static ObjectNode cleanOne(Job j) {
        ObjectNode r = Storage.JSON.createObjectNode();
        if (j.id != null) r.set("id", j.id);
        r.put("src", j.src.getPath());
        r.put("out", j.out.getPath());
        r.put("now", j.now);
        KafkaScheduler scheduler = null;
        UnifiedLog log = null;
        LogCleanerManager mgr = null;
        try {
            TopicPartition tp = topicPartition(j.out);
            File outLogDir = j.out.getAbsoluteFile().getParentFile();
            File srcLogDir = j.src.getAbsoluteFile().getParentFile();
            Storage.copyDir(j.src.toPath(), j.out.toPath());
            if (j.timing) syncFiles(j.out); // the copy's writeback is not the clean's
            LogDirFailureChannel ch = new LogDirFailureChannel(1);
            Optional<Long> cleanerCkpt = carryCheckpoint(LogCleanerManager.OFFSET_CHECKPOINT_FILE, srcLogDir, outLogDir, tp, ch);
            long logStart = carryCheckpoint("log-start-offset-checkpoint", srcLogDir, outLogDir, tp, ch).orElse(0L);
            long recoveryPoint = carryCheckpoint("recovery-point-offset-checkpoint", srcLogDir, outLogDir, tp, ch).orElse(0L);
            File marker = new File(srcLogDir, ".kafka_cleanshutdown");
            boolean clean = marker.isFile();
            if (clean) {
                Files.copy(marker.toPath(), new File(outLogDir, marker.getName()).toPath(), StandardCopyOption.REPLACE_EXISTING);
            }
            cleanerCkpt.ifPresent(v -> r.put("checkpointBefore", v));
            r.put("cleanShutdown", clean);

            ArrayNode before = r.putArray("segmentsBefore");
            for (Map.Entry<Long, Long> e : Storage.logSizes(j.out).entrySet()) {
                ObjectNode o = before.addObject();
                o.put("baseOffset", e.getKey());
                o.put("size", e.getValue());
            }

            Map<String, String> p = new HashMap<>(j.props);
            p.putIfAbsent("cleanup.policy", "compact");
            p.putIfAbsent("file.delete.delay.ms", "0");
            LogConfig cfg = new LogConfig(p);
            FixedTime time = new FixedTime(j.now);
            scheduler = new KafkaScheduler(1, true, "oracle-");
            scheduler.startup();
            log = UnifiedLog.create(j.out, cfg, logStart, recoveryPoint, scheduler,
                new BrokerTopicStats(), time, Storage.MAX_TXN_TIMEOUT_MS,
                new ProducerStateManagerConfig(Storage.PRODUCER_ID_EXPIRATION_MS, false),
                Storage.PRODUCER_ID_EXPIRATION_CHECK_MS, ch, clean, Optional.empty());
            log.updateHighWatermark(j.highWatermark < 0 ? log.logEndOffset() : j.highWatermark);
            if (j.expireProducers) log.removeExpiredProducers(j.now);
            r.put("logStartOffset", log.logStartOffset());
            r.put("logEndOffset", log.logEndOffset());
            r.put("highWatermark", log.highWatermark());
            r.put("lastStableOffset", log.lastStableOffset());
            log.firstUnstableOffset().ifPresent(v -> r.put("firstUnstableOffset", v));
            r.put("deleteRetentionMs", cfg.deleteRetentionMs);
            r.put("deleteHorizonMs", j.now + cfg.deleteRetentionMs);
            ArrayNode prods = r.putArray("activeProducers");
            for (Map.Entry<Long, LastRecord> e : new TreeMap<>(log.lastRecordsOfActiveProducers()).entrySet()) {
                ObjectNode o = prods.addObject();
                o.put("producerId", e.getKey());
                o.put("producerEpoch", e.getValue().producerEpoch());
                o.put("lastDataOffset", e.getValue().lastDataOffset().isPresent() ? e.getValue().lastDataOffset().getAsLong() : -1);
            }

            // Kafka's view of the range, whether or not it is cleanable.
            Method co = LogCleanerManager.class.getDeclaredMethod("cleanableOffsets", UnifiedLog.class, Optional.class, long.class);
            co.setAccessible(true);
            Object offsets = co.invoke(null, log, cleanerCkpt, j.now);
            long firstDirty = (Long) component(offsets, "firstDirtyOffset");
            long uncleanable = (Long) component(offsets, "firstUncleanableDirtyOffset");
            r.put("forceUpdateCheckpoint", (Boolean) component(offsets, "forceUpdateCheckpoint"));
            Method md = LogCleanerManager.class.getDeclaredMethod("maxCompactionDelay", UnifiedLog.class, long.class, long.class);
            md.setAccessible(true);
            long delay = (Long) md.invoke(null, log, firstDirty, j.now);
            LogToClean view = new LogToClean(log, firstDirty, uncleanable, delay > 0);
            r.put("firstDirtyOffset", firstDirty);
            r.put("firstUncleanableDirtyOffset", uncleanable);
            r.put("firstUncleanableOffset", view.firstUncleanableOffset());
            r.put("cleanBytes", view.cleanBytes());
            r.put("cleanableBytes", view.cleanableBytes());
            r.put("totalBytes", view.totalBytes());
            r.put("cleanableRatio", view.cleanableRatio());
            r.put("maxCompactionDelayMs", delay);
            r.put("needCompactionNow", delay > 0);
            List<LogSegment> below = log.logSegments(0, firstDirty);
            r.put("legacyDeleteHorizonMs", below.isEmpty() ? 0L : below.get(below.size() - 1).lastModified() - cfg.deleteRetentionMs);

            ConcurrentHashMap<TopicPartition, UnifiedLog> logs = new ConcurrentHashMap<>();
            logs.put(tp, log);
            mgr = new LogCleanerManager(List.of(outLogDir), logs, ch);
            Optional<LogToClean> grabbed = mgr.grabFilthiestCompactedLog(time, new PreCleanStats());
            r.put("cleaned", grabbed.isPresent());
            if (grabbed.isEmpty()) {
                r.put("reason", view.totalBytes() == 0 ? "empty" : "below min.cleanable.dirty.ratio and not forced by max.compaction.lag.ms");
            } else {
                LogToClean ltc = grabbed.get();
                long endOffset = ltc.firstDirtyOffset();
                SkimpyOffsetMap map = MAPS.get(j.dedupeBuffer);
                if (map == null) {
                    map = new SkimpyOffsetMap((int) Math.min(j.dedupeBuffer, Integer.MAX_VALUE));
                    MAPS.put(j.dedupeBuffer, map);
                }
                r.put("mapSlots", map.slots());
                Cleaner cleaner = new Cleaner(0, map, j.ioBuffer, j.maxIoBuffer, LOAD_FACTOR,
                    new Throttler(Double.MAX_VALUE, 300, "cleaner-io", "bytes", time), time, t -> { });
                try {
                    if (j.timing) {
                        System.gc();
                        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                            if (pool.getType() == MemoryType.HEAP) pool.resetPeakUsage();
                        }
                    }
                    long t0 = System.nanoTime();
                    Map.Entry<Long, CleanerStats> res = cleaner.clean(ltc);
                    long t1 = System.nanoTime();
                    if (j.timing) {
                        long peak = 0;
                        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                            if (pool.getType() == MemoryType.HEAP) peak += pool.getPeakUsage().getUsed();
                        }
                        ObjectNode tm = r.putObject("timing");
                        tm.put("cleanNanos", t1 - t0);
                        tm.put("dedupeBufferBytes", (long) map.slots() * 24);
                        tm.put("heapPeakBytes", peak);
                        tm.put("heapMaxBytes", Runtime.getRuntime().maxMemory());
                    }
                    endOffset = res.getKey();
                    CleanerStats s = res.getValue();
                    ObjectNode st = r.putObject("stats");
                    st.put("bytesRead", s.bytesRead());
                    st.put("bytesWritten", s.bytesWritten());
                    st.put("mapBytesRead", (Long) field(s, "mapBytesRead"));
                    st.put("mapMessagesRead", s.mapMessagesRead());
                    st.put("messagesRead", s.messagesRead());
                    st.put("invalidMessagesRead", s.invalidMessagesRead());
                    st.put("messagesWritten", s.messagesWritten());
                    st.put("bufferUtilization", s.bufferUtilization());
                    st.put("mapEntries", map.size());
                    r.put("endOffset", endOffset);
                } catch (Throwable e) {
                    r.put("error", e.toString());
                } finally {
                    mgr.doneCleaning(tp, outLogDir, endOffset);
                }
            }
        } catch (Throwable e) {
            Throwable c = e instanceof java.lang.reflect.InvocationTargetException && e.getCause() != null ? e.getCause() : e;
            r.put("error", c.toString());
        } finally {
            try {
                if (mgr != null) mgr.removeMetrics();
                if (log != null) log.close();
                if (scheduler != null) scheduler.shutdown();
            } catch (Throwable e) {
                if (!r.has("error")) r.put("error", "closing: " + e);
            }
        }
        try {
            ArrayNode after = r.putArray("segments");
            for (Map.Entry<Long, Long> e : Storage.logSizes(j.out).entrySet()) {
                ObjectNode o = after.addObject();
                o.put("baseOffset", e.getKey());
                o.put("size", e.getValue());
            }
            File ck = new File(j.out.getAbsoluteFile().getParentFile(), LogCleanerManager.OFFSET_CHECKPOINT_FILE);
            if (ck.isFile()) {
                Long v = new OffsetCheckpointFile(ck, new LogDirFailureChannel(1)).read().get(topicPartition(j.out));
                if (v != null) r.put("checkpoint", v);
            }
        } catch (Throwable e) {
            if (!r.has("error")) r.put("error", "describing: " + e);
        }
        return r;
    }

    /** Forces every regular file of dir, and dir, to disk. */
    static void syncFiles(File dir) throws java.io.IOException {
        File[] files = dir.listFiles();
        if (files != null) {
            for (File f : files) {
                if (!f.isFile()) continue;
                try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
            }
        }
        try (FileChannel ch = FileChannel.open(dir.toPath(), StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /** A component of a (package-private) record, read by reflection. */
    static Object component(Object rec, String name) throws Exception {
        for (RecordComponent c : rec.getClass().getRecordComponents()) {
            if (c.getName().equals(name)) {
                Method m = c.getAccessor();
                m.setAccessible(true);
                return m.invoke(rec);
            }
        }
        throw new NoSuchFieldException(name);
    }

    /** A package-private field, read by reflection. */
    static Object field(Object o, String name) throws Exception {
        Field f = o.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(o);
    }
}
