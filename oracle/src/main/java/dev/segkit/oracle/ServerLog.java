package dev.segkit.oracle;

import java.io.File;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.FileAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.layout.PatternLayout;

/**
 * The broker's log files as Kafka's own config/log4j2.yaml (4.x) writes them:
 * every INFO line to DIR/server.log, and those of the log cleaner
 * (org.apache.kafka.storage.internals.log.LogCleaner, its CleanerThread and
 * Cleaner, additivity false) to DIR/log-cleaner.log, both in Kafka's layout
 * "[%d] %p %m (%c)%n" (the date in the JVM's default time zone, as a broker
 * prints it). The oracle's stderr stays as it is (WARN and up). segkit's
 * "segviz history --import" reads these files.
 */
final class ServerLog {
    static final String PATTERN = "[%d] %p %m (%c)%n";
    static final String[] CLEANER_LOGGERS = {
        "org.apache.kafka.storage.internals.log.LogCleaner",
        "org.apache.kafka.storage.internals.log.LogCleaner$CleanerThread",
        "org.apache.kafka.storage.internals.log.Cleaner",
    };

    private static Appender server;

    private ServerLog() {}

    /** Installs the two files under dir (created if need be); call once, before the broker starts. */
    static synchronized void install(File dir) {
        dir.mkdirs();
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration cfg = ctx.getConfiguration();
        server = file(cfg, "segkit-server-log", new File(dir, "server.log"));
        Appender cleaner = file(cfg, "segkit-cleaner-log", new File(dir, "log-cleaner.log"));
        LoggerConfig root = cfg.getRootLogger();
        // The root's own appenders (stderr) keep the level they had.
        Level was = root.getLevel();
        for (String name : root.getAppenders().keySet().toArray(new String[0])) {
            Appender a = root.getAppenders().get(name);
            root.removeAppender(name);
            root.addAppender(a, was, null);
        }
        root.setLevel(Level.INFO);
        root.addAppender(server, Level.INFO, null);
        for (String name : CLEANER_LOGGERS) {
            LoggerConfig lc = new LoggerConfig(name, Level.INFO, false);
            lc.addAppender(cleaner, Level.INFO, null);
            cfg.addLogger(name, lc);
        }
        // Loggers installed before (Capture's, additivity false) write server.log too.
        for (LoggerConfig lc : cfg.getLoggers().values()) {
            if (lc != root && !isCleaner(lc.getName()) && !lc.getAppenders().containsKey(server.getName())) {
                lc.addAppender(server, Level.INFO, null);
            }
        }
        ctx.updateLoggers();
    }

    /** Adds server.log to a logger configured after install (Capture's), if installed. */
    static synchronized void addTo(LoggerConfig lc) {
        if (server != null && !isCleaner(lc.getName())) lc.addAppender(server, Level.INFO, null);
    }

    private static boolean isCleaner(String name) {
        for (String c : CLEANER_LOGGERS) if (c.equals(name)) return true;
        return false;
    }

    private static Appender file(Configuration cfg, String name, File f) {
        PatternLayout layout = PatternLayout.newBuilder().withPattern(PATTERN).withConfiguration(cfg).build();
        FileAppender a = FileAppender.newBuilder().setName(name).withFileName(f.getPath()).withAppend(true)
            .withImmediateFlush(true).setLayout(layout).setConfiguration(cfg).build();
        a.start();
        cfg.addAppender(a);
        return a;
    }
}
