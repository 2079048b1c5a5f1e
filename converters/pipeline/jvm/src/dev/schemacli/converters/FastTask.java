package dev.schemacli.converters;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * One Spark task of the fast road: the Kafka source's rows ({@link #COLUMNS}) of its v2
 * partitions, each converted Avro to Avro by a {@link RecordPlan.Transform} and written like the
 * SQL road's rows (a {@link PartitionWriter} per v2 partition, one transaction each). What the
 * SQL road decides in {@code converters.pipeline.records.build_records} is decided here, the
 * same way: the loop guard, tombstones, the marker header and a dead letter's headers
 * ({@code converters.pipeline.headers}).
 */
final class FastTask implements FlatMapFunction<Iterator<InternalRow>, String> {
  private static final long serialVersionUID = 1L;
  /** The Kafka source's columns, in the order read here. */
  static final String[] COLUMNS = {"key", "value", "topic", "partition", "offset", "timestamp", "headers"};
  static final String MARKER = "schemacli.converted-from";
  static final String ERROR = "schemacli.error";
  static final String STAGE = "schemacli.error-stage";
  static final String SOURCE = "schemacli.source";
  static final String TIMESTAMP = "schemacli.source-timestamp";
  static final String TOMBSTONE = "tombstone"; // a forwarded delete's origin

  private final SinkConfig cfg;
  private final RecordPlan plan;
  // where each of COLUMNS is in the rows (the source's own order: no projection copies them)
  private final int key;
  private final int value;
  private final int topicAt;
  private final int partitionAt;
  private final int offsetAt;
  private final int timestamp;
  private final int headersAt;

  FastTask(SinkConfig cfg, RecordPlan plan, int[] at) {
    this.cfg = cfg;
    this.plan = plan;
    this.key = at[0];
    this.value = at[1];
    this.topicAt = at[2];
    this.partitionAt = at[3];
    this.offsetAt = at[4];
    this.timestamp = at[5];
    this.headersAt = at[6];
  }

  /** Where each of {@link #COLUMNS} is among {@code names}; throws when one is missing. */
  static int[] positions(String[] names) {
    int[] at = new int[COLUMNS.length];
    for (int i = 0; i < COLUMNS.length; i++) {
      at[i] = java.util.Arrays.asList(names).indexOf(COLUMNS[i]);
      if (at[i] < 0) {
        throw new IllegalArgumentException("the fast road needs the Kafka source's column "
            + COLUMNS[i] + ", not in " + java.util.Arrays.toString(names));
      }
    }
    return at;
  }

  @Override
  public Iterator<String> call(Iterator<InternalRow> rows) {
    RecordPlan.Transform transform = new RecordPlan.Transform(plan);
    RecordPlan.Result result = new RecordPlan.Result();
    Marker marker = new Marker();
    List<String> stats = new ArrayList<>();
    PartitionWriter writer = null;
    String topic = null;
    try {
      while (rows.hasNext()) {
        InternalRow row = rows.next();
        int partition = row.getInt(partitionAt);
        if (writer == null || writer.partition != partition) {
          if (writer != null) {
            stats.add(writer.commit());
          }
          writer = new PartitionWriter(cfg, partition);
          topic = row.getUTF8String(topicAt).toString();
        }
        long offset = row.getLong(offsetAt);
        byte[] k = row.isNullAt(key) ? null : row.getBinary(key);
        RecordHeaders headers = PartitionWriter.headers(row, headersAt);
        if (headers.lastHeader(MARKER) != null) {
          if (!row.isNullAt(value)) {
            transform.skipped(row.getBinary(value)); // the SQL road decodes it too
          }
          writer.add(null, null, null, null, Counts.SKIPPED, offset);
          continue;
        }
        long millis = Math.floorDiv(row.getLong(timestamp), 1000L); // Spark's are micros
        if (row.isNullAt(value)) {
          headers.add(MARKER, marker.of(TOMBSTONE, topic, partition, offset, millis));
          writer.add(plan.targetTopic, k, null, headers, Counts.TOMBSTONE, offset);
          continue;
        }
        byte[] v2 = row.getBinary(value);
        transform.apply(v2, result);
        if (result.error == null) {
          headers.add(MARKER, marker.of(result.origin, topic, partition, offset, millis));
          writer.add(plan.targetTopic, k, result.value, headers, Counts.CONVERTED, offset);
        } else {
          headers.add(ERROR, RecordPlan.utf8(result.error));
          headers.add(STAGE, RecordPlan.utf8(result.stage));
          headers.add(SOURCE, RecordPlan.utf8(topic + "/" + partition + "/" + offset));
          headers.add(TIMESTAMP, RecordPlan.utf8(Long.toString(millis)));
          writer.add(plan.deadLetterTopic, k, v2, headers, Counts.DEAD_LETTER, offset);
        }
      }
      if (writer != null) {
        stats.add(writer.commit());
      }
    } catch (RuntimeException | Error e) {
      if (writer != null) {
        writer.abort();
      }
      throw e;
    }
    return stats.iterator();
  }

  /**
   * The marker's value, {@code <origin> <topic>/<partition>/<offset> <millis>} (the SQL road's
   * {@code concat_ws}), in UTF-8: the part before the offset made once per origin and partition,
   * the two numbers written as digits (no string per record).
   */
  static final class Marker {
    private String origin;
    private String topic;
    private int partition;
    private byte[] head;
    private byte[] buf = new byte[64];

    byte[] of(String origin, String topic, int partition, long offset, long millis) {
      if (head == null || partition != this.partition || !origin.equals(this.origin)
          || !topic.equals(this.topic)) {
        this.origin = origin;
        this.topic = topic;
        this.partition = partition;
        head = RecordPlan.utf8(origin + " " + topic + "/" + partition + "/");
        if (buf.length < head.length + 41) {
          buf = new byte[head.length + 41];
        }
      }
      System.arraycopy(head, 0, buf, 0, head.length);
      int n = digits(offset, buf, head.length);
      buf[n++] = ' ';
      n = digits(millis, buf, n);
      return java.util.Arrays.copyOf(buf, n);
    }

    /** {@code Long.toString(v)}'s bytes at {@code at} (20 at most); where they end. */
    static int digits(long v, byte[] b, int at) {
      if (v == Long.MIN_VALUE) {
        byte[] s = RecordPlan.utf8(Long.toString(v));
        System.arraycopy(s, 0, b, at, s.length);
        return at + s.length;
      }
      if (v < 0) {
        b[at++] = '-';
        v = -v;
      }
      int end = at + 1;
      for (long rest = v / 10; rest != 0; rest /= 10) {
        end++;
      }
      for (int i = end - 1; i >= at; i--) {
        b[i] = (byte) ('0' + v % 10);
        v /= 10;
      }
      return end;
    }
  }
}
