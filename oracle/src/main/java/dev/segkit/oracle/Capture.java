package dev.segkit.oracle;

import java.util.ArrayList;
import java.util.List;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/**
 * Collects the INFO messages of Kafka's storage classes in memory: Kafka says
 * why it deleted a segment only in its log ("Deleting segment ... due to log
 * retention time 60000ms breach ..."), so the oracle reads the reason there.
 */
final class Capture extends AbstractAppender {
    private final List<String> messages = new ArrayList<>();

    private Capture() {
        super("segkit-capture", null, null, true, Property.EMPTY_ARRAY);
    }

    static Capture install(String loggerName) {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration cfg = ctx.getConfiguration();
        Capture c = new Capture();
        c.start();
        cfg.addAppender(c);
        LoggerConfig lc = new LoggerConfig(loggerName, Level.INFO, false);
        lc.addAppender(c, Level.INFO, null);
        ServerLog.addTo(lc); // --server-log: these lines go to server.log too
        cfg.addLogger(loggerName, lc);
        ctx.updateLoggers();
        return c;
    }

    @Override
    public synchronized void append(LogEvent event) {
        messages.add(event.getMessage().getFormattedMessage());
    }

    synchronized List<String> drain() {
        List<String> out = new ArrayList<>(messages);
        messages.clear();
        return out;
    }
}
