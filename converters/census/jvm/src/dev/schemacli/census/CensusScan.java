package dev.schemacli.census;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * The census's header-only read of a topic with Kafka's own consumer (converters/census/jvm.py
 * runs it): the partitions and ranges come from a plan file Python wrote, the consumer's
 * settings from a properties file; the tallies go to stdout as one JSON line, progress and
 * errors to stderr as lines {@code progress N} and {@code error WORDS}.
 *
 * <p>Plan file: {@code topic NAME}, {@code deadline_ms MS}, {@code threads N}, then one line
 * {@code partition P START END} per partition to read (tab-separated). Each thread reads its
 * share of the partitions with a consumer of its own (assign + seek), the end offset excluded
 * (the high watermark Python took when the census started).
 *
 * <p>Exit status: 0 the tallies were written; 2 a bad plan; 3 Kafka refused or failed.
 */
public final class CensusScan {
  static final long NULL = -1L;
  static final long UNFRAMED = -2L;

  private CensusScan() {}

  /** A key or value as the census sees it: its writer schema id, or UNFRAMED; null stays null. */
  public static final class HeaderDeserializer implements Deserializer<Long> {
    @Override
    public Long deserialize(String topic, byte[] data) {
      if (data == null) return null;
      return kind(ByteBuffer.wrap(data));
    }

    @Override
    public Long deserialize(String topic, Headers headers, ByteBuffer data) {
      return data == null ? null : kind(data);
    }

    static Long kind(ByteBuffer b) {
      int at = b.position();
      if (b.limit() - at < 5 || b.get(at) != 0) return UNFRAMED;
      return Integer.toUnsignedLong(b.getInt(at + 1));
    }
  }

  /** Records of one kind in one partition: how many, the first and the last. */
  static final class Span {
    long count;
    long firstOffset = -1;
    long lastOffset = -1;
    long firstTs = -1;
    long lastTs = -1;

    void add(long offset, long ts) {
      if (count == 0) {
        firstOffset = offset;
        firstTs = ts;
      }
      lastOffset = offset;
      lastTs = ts;
      count++;
    }
  }

  /** One side (keys or values) of one partition: a span per kind, the last one kept at hand. */
  static final class Side {
    final Map<Long, Span> spans = new LinkedHashMap<>();
    long lastKind = Long.MIN_VALUE;
    Span last;

    void add(Long kind, long offset, long ts) {
      long k = kind == null ? NULL : kind;
      if (k != lastKind) {
        last = spans.computeIfAbsent(k, x -> new Span());
        lastKind = k;
      }
      last.add(offset, ts);
    }
  }

  static final class Tally {
    final int partition;
    final long start;
    final long end;
    long scanned;
    boolean complete;
    final Side keys = new Side();
    final Side values = new Side();

    Tally(int partition, long start, long end) {
      this.partition = partition;
      this.start = start;
      this.end = end;
    }
  }

  static final class Plan {
    String topic;
    long deadlineMs;
    int threads = 1;
    final List<Tally> tallies = new ArrayList<>();
  }

  static final class BadPlan extends Exception {
    private static final long serialVersionUID = 1L;

    BadPlan(String message) {
      super(message);
    }

    BadPlan(String message, Throwable cause) {
      super(message, cause);
    }
  }

  static Plan readPlan(Path file) throws IOException, BadPlan {
    Plan plan = new Plan();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        String[] f = line.split("\t");
        try {
          switch (f[0]) {
            case "topic" -> plan.topic = f[1];
            case "deadline_ms" -> plan.deadlineMs = Long.parseLong(f[1]);
            case "threads" -> plan.threads = Math.max(1, Integer.parseInt(f[1]));
            case "partition" -> plan.tallies.add(
                new Tally(Integer.parseInt(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])));
            case "" -> { }
            default -> throw new BadPlan("unknown plan line " + f[0]);
          }
        } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
          throw new BadPlan("bad plan line: " + line, e);
        }
      }
    }
    if (plan.topic == null) throw new BadPlan("the plan names no topic");
    return plan;
  }

  static Properties consumerProperties(Path file) throws IOException {
    Properties props = new Properties();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      props.load(in);
    }
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.remove(ConsumerConfig.GROUP_ID_CONFIG); // assign only: no group, nothing committed
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, HeaderDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, HeaderDeserializer.class.getName());
    return props;
  }

  /** Reads a share of the partitions to their end offsets (or the deadline). */
  static void read(Plan plan, Properties props, List<Tally> share, AtomicLong progress) {
    Map<TopicPartition, Tally> open = new HashMap<>();
    for (Tally t : share) open.put(new TopicPartition(plan.topic, t.partition), t);
    try (KafkaConsumer<Long, Long> consumer = new KafkaConsumer<>(props)) {
      consumer.assign(open.keySet());
      for (Map.Entry<TopicPartition, Tally> e : open.entrySet()) {
        consumer.seek(e.getKey(), e.getValue().start);
      }
      while (!open.isEmpty() && System.currentTimeMillis() <= plan.deadlineMs) {
        ConsumerRecords<Long, Long> records = consumer.poll(Duration.ofMillis(200));
        long n = 0;
        for (TopicPartition tp : records.partitions()) {
          Tally t = open.get(tp);
          if (t == null) continue;
          for (ConsumerRecord<Long, Long> r : records.records(tp)) {
            long offset = r.offset();
            if (offset >= t.end) break;
            long ts = r.timestampType() == TimestampType.NO_TIMESTAMP_TYPE ? -1 : r.timestamp();
            t.keys.add(r.key(), offset, ts);
            t.values.add(r.value(), offset, ts);
            t.scanned++;
            n++;
          }
        }
        List<TopicPartition> finished = new ArrayList<>();
        for (Map.Entry<TopicPartition, Tally> e : open.entrySet()) {
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

  static void span(StringBuilder out, long kind, Span s) {
    out.append('[');
    if (kind == NULL) out.append("\"null\"");
    else if (kind == UNFRAMED) out.append("\"unframed\"");
    else out.append(kind);
    out.append(',').append(s.count).append(',').append(s.firstOffset).append(',');
    out.append(s.firstTs < 0 ? "null" : Long.toString(s.firstTs)).append(',');
    out.append(s.lastOffset).append(',');
    out.append(s.lastTs < 0 ? "null" : Long.toString(s.lastTs)).append(']');
  }

  static void side(StringBuilder out, Side side) {
    out.append('[');
    boolean first = true;
    for (Map.Entry<Long, Span> e : side.spans.entrySet()) {
      if (!first) out.append(',');
      first = false;
      span(out, e.getKey(), e.getValue());
    }
    out.append(']');
  }

  static String json(List<Tally> tallies) {
    StringBuilder out = new StringBuilder("{\"partitions\":[");
    for (int i = 0; i < tallies.size(); i++) {
      Tally t = tallies.get(i);
      if (i > 0) out.append(',');
      out.append("{\"partition\":").append(t.partition);
      out.append(",\"scanned\":").append(t.scanned);
      out.append(",\"complete\":").append(t.complete);
      out.append(",\"keys\":");
      side(out, t.keys);
      out.append(",\"values\":");
      side(out, t.values);
      out.append('}');
    }
    return out.append("]}").toString();
  }

  /** The partitions dealt to n threads, the biggest first to the least loaded. */
  static List<List<Tally>> share(List<Tally> tallies, int n) {
    List<List<Tally>> shares = new ArrayList<>();
    long[] loads = new long[n];
    for (int i = 0; i < n; i++) shares.add(new ArrayList<>());
    List<Tally> sorted = new ArrayList<>(tallies);
    sorted.sort((a, b) -> Long.compare(b.end - b.start, a.end - a.start));
    for (Tally t : sorted) {
      int least = 0;
      for (int i = 1; i < n; i++) if (loads[i] < loads[least]) least = i;
      loads[least] += t.end - t.start;
      shares.get(least).add(t);
    }
    shares.removeIf(List::isEmpty);
    return shares;
  }

  static String words(Throwable e) {
    String m = e.getMessage();
    return e.getClass().getSimpleName() + (m == null ? "" : ": " + m.replace('\n', ' '));
  }

  public static void main(String[] args) throws Exception {
    PrintStream err = System.err;
    if (args.length != 2) {
      err.println("error usage: CensusScan PLAN PROPERTIES");
      System.exit(2);
    }
    Plan plan;
    Properties props;
    try {
      plan = readPlan(Path.of(args[0]));
      props = consumerProperties(Path.of(args[1]));
    } catch (IOException | BadPlan e) {
      err.println("error " + words(e));
      System.exit(2);
      return;
    }
    List<Tally> toRead = new ArrayList<>();
    for (Tally t : plan.tallies) {
      if (t.end > t.start) toRead.add(t);
      else t.complete = true;
    }
    AtomicLong progress = new AtomicLong();
    List<Throwable> failures = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (List<Tally> part : share(toRead, Math.min(plan.threads, Math.max(1, toRead.size())))) {
      Thread th = new Thread(() -> {
        try {
          read(plan, props, part, progress);
        } catch (Throwable e) { // NOPMD: every failure is the census's failure
          synchronized (failures) {
            failures.add(e);
          }
        }
      }, "census-" + threads.size());
      th.setDaemon(true);
      threads.add(th);
      th.start();
    }
    long told = 0;
    for (Thread th : threads) {
      while (th.isAlive()) {
        th.join(250);
        long now = progress.get();
        if (now > told) {
          err.println("progress " + (now - told));
          err.flush();
          told = now;
        }
        synchronized (failures) {
          if (!failures.isEmpty()) break;
        }
      }
      synchronized (failures) {
        if (!failures.isEmpty()) break;
      }
    }
    synchronized (failures) {
      if (!failures.isEmpty()) {
        Throwable first = failures.get(0);
        err.println("error " + words(first));
        err.flush();
        System.exit(first instanceof ConfigException ? 2 : 3);
      }
    }
    long now = progress.get();
    if (now > told) err.println("progress " + (now - told));
    System.out.println(json(plan.tallies));
    System.out.flush();
    System.exit(0);
  }
}
