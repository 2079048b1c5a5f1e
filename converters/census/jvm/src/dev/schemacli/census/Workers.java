package dev.schemacli.census;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * What the JVM scans share: the census's {@link CensusScan} and topics check's QualityScan (in
 * schemacli-quality.jar, which is compiled and run with this jar on its classpath). The
 * partitions' ranges are dealt to worker threads, each reading its share with a consumer of its
 * own (assign + seek, no group, nothing committed) up to the range's end or the deadline; the
 * main thread tells the progress and the first failure.
 *
 * <p>The protocol the Python side reads (converters/census/jvmscan.py, run_jvm and
 * scan_failure): stdout, the scan's one JSON answer; stderr, lines {@code progress N} (records
 * read since the last such line) and one {@code error WORDS} line; exit status 0 answered, 2 the
 * scan refused its plan or its Kafka settings, 3 Kafka failed.
 */
public final class Workers {
  private static final PrintStream ERR = System.err;

  private Workers() {}

  /** A partition's range to read, [start, end) (the end: the high watermark Python took), and
   * what was read of it: how many records, whether the read reached the end. */
  public static class Range {
    public final int partition;
    public final long start;
    public final long end;
    public long scanned;
    public boolean complete;

    public Range(int partition, long start, long end) {
      this.partition = partition;
      this.start = start;
      this.end = end;
    }
  }

  /** What a worker does with each record of its share that lies below its range's end. */
  @FunctionalInterface
  public interface Take<K, V, R extends Range> {
    void record(R range, ConsumerRecord<K, V> record);
  }

  /** One worker thread's job: read {@code share}, adding the records read to {@code progress}. */
  @FunctionalInterface
  public interface Work<R extends Range> {
    void read(List<R> share, AtomicLong progress) throws Exception;
  }

  /** An exception in words for an {@code error} line: its class and its message, on one line. */
  public static String words(Throwable e) {
    String m = e.getMessage();
    return e.getClass().getSimpleName() + (m == null ? "" : ": " + m.replace('\n', ' '));
  }

  /** Refuses the scan: one {@code error WORDS} line and exit status 2. */
  public static void refuse(String words) {
    ERR.println("error " + words);
    ERR.flush();
    System.exit(2);
  }

  /** The consumer's settings: the properties file Python wrote (UTF-8), with auto-commit off,
   * no group (assign only: nothing committed) and {@code deserializer} for keys and values. */
  public static Properties consumerProperties(Path file, Class<? extends Deserializer<?>> deserializer)
      throws IOException {
    Properties props = new Properties();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      props.load(in);
    }
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.remove(ConsumerConfig.GROUP_ID_CONFIG);
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, deserializer.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, deserializer.getName());
    return props;
  }

  /** The ranges dealt to n threads, the biggest first to the least loaded. */
  public static <R extends Range> List<List<R>> share(List<R> ranges, int n) {
    List<List<R>> shares = new ArrayList<>();
    long[] loads = new long[n];
    for (int i = 0; i < n; i++) shares.add(new ArrayList<>());
    List<R> sorted = new ArrayList<>(ranges);
    sorted.sort((a, b) -> Long.compare(b.end - b.start, a.end - a.start));
    for (R r : sorted) {
      int least = 0;
      for (int i = 1; i < n; i++) if (loads[i] < loads[least]) least = i;
      loads[least] += r.end - r.start;
      shares.get(least).add(r);
    }
    shares.removeIf(List::isEmpty);
    return shares;
  }

  /**
   * Reads a share of {@code topic}'s partitions with a consumer of its own, each from its start
   * to its end offset (or until {@code deadlineMs}), handing every record below the end to
   * {@code take}; counts each range's records, marks a range complete when the consumer's
   * position reaches its end, adds the records read to {@code progress} after each poll.
   */
  public static <K, V, R extends Range> void read(
      String topic, long deadlineMs, Properties props, List<R> share, AtomicLong progress,
      Take<K, V, R> take) {
    Map<TopicPartition, R> open = new HashMap<>();
    for (R r : share) open.put(new TopicPartition(topic, r.partition), r);
    try (KafkaConsumer<K, V> consumer = new KafkaConsumer<>(props)) {
      consumer.assign(open.keySet());
      for (Map.Entry<TopicPartition, R> e : open.entrySet()) {
        consumer.seek(e.getKey(), e.getValue().start);
      }
      while (!open.isEmpty() && System.currentTimeMillis() <= deadlineMs) {
        ConsumerRecords<K, V> records = consumer.poll(Duration.ofMillis(200));
        long n = 0;
        for (TopicPartition tp : records.partitions()) {
          R range = open.get(tp);
          if (range == null) continue;
          for (ConsumerRecord<K, V> record : records.records(tp)) {
            if (record.offset() >= range.end) break;
            range.scanned++;
            n++;
            take.record(range, record);
          }
        }
        List<TopicPartition> finished = new ArrayList<>();
        for (Map.Entry<TopicPartition, R> e : open.entrySet()) {
          // the position passes the end over control records and compacted gaps too
          if (consumer.position(e.getKey()) >= e.getValue().end) finished.add(e.getKey());
        }
        if (!finished.isEmpty()) {
          for (TopicPartition tp : finished) open.remove(tp).complete = true;
          consumer.assign(open.keySet());
        }
        progress.addAndGet(n);
      }
    }
  }

  /**
   * Runs {@code work} over the ranges: an empty range is complete unread, the others are dealt
   * to at most {@code threads} threads (named {@code name-i}). Tells the progress on stderr as
   * the threads read; on the first failure, writes it as an {@code error} line ({@code words})
   * and exits with status 2 (the Kafka settings refused: ConfigException) or 3; returns when
   * every thread is done, the last progress told.
   */
  public static <R extends Range> void run(
      List<R> ranges, int threads, String name, Function<Throwable, String> words, Work<R> work)
      throws InterruptedException {
    List<R> toRead = new ArrayList<>();
    for (R r : ranges) {
      if (r.end > r.start) toRead.add(r);
      else r.complete = true;
    }
    AtomicLong progress = new AtomicLong();
    List<Throwable> failures = new ArrayList<>();
    List<Thread> started = new ArrayList<>();
    for (List<R> part : share(toRead, Math.min(threads, Math.max(1, toRead.size())))) {
      Thread th = new Thread(() -> {
        try {
          work.read(part, progress);
        } catch (Throwable e) { // NOPMD: every failure is the scan's failure
          synchronized (failures) {
            failures.add(e);
          }
        }
      }, name + "-" + started.size());
      th.setDaemon(true);
      started.add(th);
      th.start();
    }
    long told = 0;
    for (Thread th : started) {
      while (th.isAlive()) {
        th.join(250);
        long now = progress.get();
        if (now > told) {
          ERR.println("progress " + (now - told));
          ERR.flush();
          told = now;
        }
        if (failed(failures)) break;
      }
      if (failed(failures)) break;
    }
    synchronized (failures) {
      if (!failures.isEmpty()) {
        Throwable first = failures.get(0);
        ERR.println("error " + words.apply(first));
        ERR.flush();
        System.exit(first instanceof ConfigException ? 2 : 3);
      }
    }
    long now = progress.get();
    if (now > told) ERR.println("progress " + (now - told));
  }

  private static boolean failed(List<Throwable> failures) {
    synchronized (failures) {
      return !failures.isEmpty();
    }
  }

  /** The scan's answer on stdout, then exit status 0. */
  public static void answer(byte[] json) {
    System.out.write(json, 0, json.length);
    System.out.flush();
    System.exit(0);
  }
}
