package dev.schemacli.converters;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * The converter's exactly-once Kafka writer, on the executors' JVMs: one Kafka transaction per v2
 * partition per batch. {@code converters.txsink} calls {@link #write} from the job's {@code
 * foreachBatch}; the protocol and its argument are in its docstring and docs/migration.md.
 *
 * <p>The rows of a micro-batch come one Spark partition per v2 topic partition, in offset order
 * (the Kafka source's own partitioning). Each task writes its partition's rows through a {@link
 * PartitionWriter} - fence, read the committed offset, pass over what it covers, write the rest
 * and commit it with the next offset and the counts - and returns one stats line per partition.
 * Any error aborts the transaction and fails the task: Spark retries it, and the retry fences this
 * attempt if it lives on.
 */
public final class TxSink {
  /** The columns {@code converters.job.build_records} gives, in the order read here. */
  public static final String[] COLUMNS = {
    "topic", "key", "value", "headers", "kind", "source_partition", "source_offset"
  };

  private TxSink() {}

  /**
   * Write a batch of rows with {@link #COLUMNS}; the stats lines of every partition written
   * (JSON: partition, first_offset, next_offset, already, counts). See {@link SinkConfig} for the
   * options.
   */
  public static List<String> write(Dataset<Row> rows, Map<String, String> options) {
    SinkConfig cfg = SinkConfig.of(options);
    Dataset<Row> shaped = rows.select(COLUMNS[0], Arrays.copyOfRange(COLUMNS, 1, COLUMNS.length));
    // InternalRow, as Spark's own Kafka sink reads them: no conversion to external rows
    return shaped.queryExecution().toRdd().toJavaRDD().mapPartitions(new Task(cfg)).collect();
  }

  /**
   * The fast road: write a batch of the Kafka source's rows ({@link FastTask#COLUMNS}),
   * converting each value Avro to Avro in the task by {@code plan} (JSON, {@link RecordPlan}) -
   * no Spark SQL, no row conversion; the same transactions and stats as {@link #write}.
   */
  public static List<String> writeFast(
      Dataset<Row> raw, Map<String, String> options, String plan) {
    SinkConfig cfg = SinkConfig.of(options);
    RecordPlan parsed = new RecordPlan(plan);
    new RecordPlan.Transform(parsed); // a bad plan fails here, on the driver, not in every task
    // the source's rows as they are, read by position: a projection would copy each row's
    // columns again (measured: a tenth of the fast road's task time on a wide record)
    int[] at = FastTask.positions(raw.columns());
    return raw.queryExecution().toRdd().toJavaRDD().mapPartitions(new FastTask(cfg, parsed, at)).collect();
  }

  /** A fast-road transform of one value on this JVM (tests: the two roads compared): the v1
   * bytes, or null with {@code why} filled with the stage and the reason. */
  public static byte[] convertOne(String plan, byte[] value, List<String> why) {
    RecordPlan.Result r = new RecordPlan.Result();
    new RecordPlan.Transform(new RecordPlan(plan)).apply(value, r);
    if (r.error != null) {
      why.add(r.stage);
      why.add(r.error);
    }
    return r.value;
  }

  /**
   * Values through one fast-road transform in order, as one task's rows (tests: a record's v1
   * bytes may depend on the records before it): each v1 bytes, or null with {@code why} given
   * {@code "skipped"} (a {@code marked} value: the loop guard), {@code "tombstone"} (null) or
   * the stage and the reason joined by a tab; {@code why} gets "" for a converted value.
   */
  public static List<byte[]> convertAll(
      String plan, List<byte[]> values, List<Boolean> marked, List<String> why) {
    RecordPlan.Transform transform = new RecordPlan.Transform(new RecordPlan(plan));
    RecordPlan.Result r = new RecordPlan.Result();
    List<byte[]> out = new ArrayList<>();
    for (int i = 0; i < values.size(); i++) {
      byte[] value = values.get(i);
      if (marked.get(i)) {
        if (value != null) {
          transform.skipped(value);
        }
        out.add(null);
        why.add("skipped");
      } else if (value == null) {
        out.add(null);
        why.add("tombstone");
      } else {
        transform.apply(value, r);
        out.add(r.value);
        why.add(r.error == null ? "" : r.stage + "\t" + r.error);
      }
    }
    return out;
  }

  /** Whether the fast road reads {@code value} in place under {@code plan} (tests: the reading
   * the bytes take; {@link InPlace}). */
  public static boolean readsInPlace(String plan, byte[] value) {
    return new RecordPlan.Transform(new RecordPlan(plan)).readsInPlace(value);
  }

  /** The fast road's marker value of a record (tests: the SQL road's, byte for byte). */
  public static byte[] marker(String origin, String topic, int partition, long offset, long micros) {
    return new FastTask.Marker().of(origin, topic, partition, offset, Math.floorDiv(micros, 1000L));
  }

  /** A writer for one partition, open on this JVM (from the driver: tests and tools). */
  public static PartitionWriter open(Map<String, String> options, int partition) {
    return new PartitionWriter(SinkConfig.of(options), partition);
  }

  /** Close the idle clients of this JVM (a test's teardown). */
  public static void closeIdleClients() {
    Clients.closeIdle();
  }

  /** One Spark task: its rows, one v2 partition after another, each in its own transaction. */
  static final class Task implements FlatMapFunction<Iterator<InternalRow>, String> {
    private static final long serialVersionUID = 1L;
    private final SinkConfig cfg;

    Task(SinkConfig cfg) {
      this.cfg = cfg;
    }

    @Override
    public Iterator<String> call(Iterator<InternalRow> rows) {
      List<String> stats = new ArrayList<>();
      PartitionWriter writer = null;
      try {
        while (rows.hasNext()) {
          InternalRow row = rows.next();
          int partition = row.getInt(PartitionWriter.PARTITION);
          if (writer == null || writer.partition != partition) {
            if (writer != null) {
              stats.add(writer.commit()); // a committed writer's abort does nothing
            }
            writer = new PartitionWriter(cfg, partition);
          }
          writer.add(row);
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
  }
}
