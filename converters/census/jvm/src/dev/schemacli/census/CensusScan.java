package dev.schemacli.census;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * The census's header-only read of a topic with Kafka's own consumer (converters/census/jvmscan.py
 * runs it): the partitions and ranges come from a plan file Python wrote, the consumer's
 * settings from a properties file; the tallies go to stdout as one JSON line, progress and
 * errors to stderr as lines {@code progress N} and {@code error WORDS} ({@link Workers}: the
 * threads, the consumers, the progress and the exit status, shared with topics check's scan).
 *
 * <p>Plan file: {@code topic NAME}, {@code deadline_ms MS}, {@code threads N}, then one line
 * {@code partition P START END} per partition to read (tab-separated). Each thread reads its
 * share of the partitions with a consumer of its own (assign + seek), the end offset excluded
 * (the high watermark Python took when the census started).
 *
 * <p>Exit status: 0 the tallies were written; 2 a bad plan or refused settings; 3 Kafka failed.
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

  /** A partition's range and what the census saw in it: a span per kind, keys and values. */
  static final class Tally extends Workers.Range {
    final Side keys = new Side();
    final Side values = new Side();

    Tally(int partition, long start, long end) {
      super(partition, start, end);
    }

    void take(ConsumerRecord<Long, Long> r) {
      long ts = r.timestampType() == TimestampType.NO_TIMESTAMP_TYPE ? -1 : r.timestamp();
      keys.add(r.key(), r.offset(), ts);
      values.add(r.value(), r.offset(), ts);
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

  public static void main(String[] args) throws Exception {
    if (args.length != 2) Workers.refuse("usage: CensusScan PLAN PROPERTIES");
    Plan plan;
    Properties props;
    try {
      plan = readPlan(Path.of(args[0]));
      props = Workers.consumerProperties(Path.of(args[1]), HeaderDeserializer.class);
    } catch (IOException | BadPlan e) {
      Workers.refuse(Workers.words(e));
      return;
    }
    Workers.run(plan.tallies, plan.threads, "census", Workers::words, (share, progress) ->
        Workers.<Long, Long, Tally>read(plan.topic, plan.deadlineMs, props, share, progress,
            (t, r) -> t.take(r)));
    Workers.answer((json(plan.tallies) + "\n").getBytes(StandardCharsets.UTF_8));
  }
}
