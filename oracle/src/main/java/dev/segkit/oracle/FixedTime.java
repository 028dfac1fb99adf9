package dev.segkit.oracle;

import java.util.function.Supplier;
import org.apache.kafka.common.utils.Time;

/** A clock stopped at a given instant: retention runs "at" a chosen time. */
final class FixedTime implements Time {
    private final long ms;

    FixedTime(long ms) { this.ms = ms; }

    @Override public long milliseconds() { return ms; }
    @Override public long nanoseconds() { return System.nanoTime(); }
    @Override public void sleep(long durMs) {
        try { Thread.sleep(durMs); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
    }
    @Override public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) throws InterruptedException {
        synchronized (obj) {
            while (!condition.get()) obj.wait(10);
        }
    }
}
