package dev.schemacli.converters;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Writes one v2 partition's rows of one batch in one Kafka transaction (the protocol: {@link
 * TxSink}).
 *
 * <p>Opening it borrows the partition's producer (initialized: older ones fenced), reads the
 * offset and counts the converter's progress group has committed for the partition, begins a
 * transaction and probes the coordinator with that position: a cached producer fenced since its
 * init fails here, before writing anything, and is replaced once by a fresh one. Rows below the
 * committed offset were written by a committed transaction and are passed over ({@code
 * already}); the rest are sent, and {@link #commit} commits them with the next offset and the new
 * cumulative counts.
 */
public final class PartitionWriter {
  // the columns of a row (converters.txsink.ROW_COLUMNS), by position
  static final int TOPIC = 0;
  static final int KEY = 1;
  static final int VALUE = 2;
  static final int HEADERS = 3;
  static final int KIND = 4;
  static final int PARTITION = 5;
  static final int OFFSET = 6;

  final int partition;
  private final SinkConfig cfg;
  private final String transactionalId;
  private final TopicPartition source;
  private final ConsumerGroupMetadata group;
  private final KafkaConsumer<byte[], byte[]> reader;
  private KafkaProducer<byte[], byte[]> producer;
  private long start;
  private Counts before;
  private final Counts batch = new Counts();
  private long already;
  private long first = -1;
  private long next;
  private UTF8String lastTopic;
  private String lastTopicName;

  PartitionWriter(SinkConfig cfg, int partition) {
    this.cfg = cfg;
    this.partition = partition;
    this.transactionalId = transactionalId(cfg.group, partition);
    this.source = new TopicPartition(cfg.sourceTopic, partition);
    this.group = new ConsumerGroupMetadata(cfg.group);
    this.reader = Clients.borrowReader(cfg);
    try {
      begin();
    } catch (RuntimeException e) {
      if (producer != null) { // e.g. the offsets read timed out: its state is not known
        Clients.discard(producer);
        producer = null;
      }
      Clients.giveBack(cfg, reader);
      throw e;
    }
  }

  /** Stable per converter and v2 partition (never per batch or attempt): a new task fences every
   * earlier one. The same as {@code converters.txsink.transactional_id}. */
  static String transactionalId(String group, int partition) {
    return group + "." + partition;
  }

  private void begin() {
    producer = Clients.borrowProducer(cfg, transactionalId);
    for (int attempt = 1; ; attempt++) {
      readCommitted();
      try {
        producer.beginTransaction();
        producer.sendOffsetsToTransaction(position(start, before), group);
        return;
      } catch (KafkaException | IllegalStateException e) { // fenced, fatal, or a bad state
        Clients.discard(producer);
        producer = null;
        if (attempt == 2) {
          throw e;
        }
        producer = Clients.freshProducer(cfg, transactionalId); // its init fences; read again
      }
    }
  }

  private void readCommitted() {
    OffsetAndMetadata found =
        reader.committed(Collections.singleton(source), cfg.timeout).get(source);
    start = found == null ? 0 : found.offset();
    before = found == null ? new Counts() : Counts.fromMetadata(found.metadata());
    next = start;
  }

  private Map<TopicPartition, OffsetAndMetadata> position(long offset, Counts counts) {
    return Collections.singletonMap(source, new OffsetAndMetadata(offset, counts.metadata()));
  }

  /** One row of {@code ROW_COLUMNS} (this partition, in offset order). */
  void add(InternalRow row) {
    long offset = row.getLong(OFFSET);
    if (offset < start) {
      already++;
      return;
    }
    int kind = Counts.kind(row.getUTF8String(KIND));
    if (!count(offset, kind)) {
      return;
    }
    send(
        topic(row.getUTF8String(TOPIC)),
        row.isNullAt(KEY) ? null : row.getBinary(KEY),
        row.isNullAt(VALUE) ? null : row.getBinary(VALUE),
        headers(row, HEADERS));
  }

  /** The headers column of a row (Kafka's array of key/value structs; null is none). */
  static RecordHeaders headers(InternalRow row, int column) {
    RecordHeaders headers = new RecordHeaders();
    if (!row.isNullAt(column)) {
      ArrayData list = row.getArray(column);
      for (int i = 0, n = list.numElements(); i < n; i++) {
        InternalRow header = list.getStruct(i, 2);
        headers.add(header.getUTF8String(0).toString(), header.isNullAt(1) ? null : header.getBinary(1));
      }
    }
    return headers;
  }

  /** A record the fast road ({@link FastTask}) made, its kind and headers decided there. */
  void add(String topic, byte[] key, byte[] value, RecordHeaders headers, int kind, long offset) {
    if (offset < start) {
      already++;
      return;
    }
    if (!count(offset, kind)) {
      return;
    }
    send(topic, key, value, headers);
  }

  /**
   * One record given field by field, e.g. from the driver through Py4J (tests, tools): headers as
   * two lists of the same length.
   */
  public void add(
      String topic,
      byte[] key,
      byte[] value,
      List<String> headerKeys,
      List<byte[]> headerValues,
      String kind,
      long offset) {
    if (offset < start) {
      already++;
      return;
    }
    if (!count(offset, Counts.kind(kind))) {
      return;
    }
    RecordHeaders headers = new RecordHeaders();
    for (int i = 0; i < headerKeys.size(); i++) {
      headers.add(headerKeys.get(i), headerValues.get(i));
    }
    send(topic, key, value, headers);
  }

  /** Count a row not yet written; whether it is a record to send (skipped rows are not). */
  private boolean count(long offset, int kind) {
    if (first < 0) {
      first = offset;
    }
    next = Math.max(next, offset + 1);
    batch.add(kind);
    return kind != Counts.SKIPPED;
  }

  private String topic(UTF8String name) {
    if (!name.equals(lastTopic)) { // two topics (v1 and dead letters): one String each
      lastTopic = name.clone();
      lastTopicName = name.toString();
    }
    return lastTopicName;
  }

  private void send(String topic, byte[] key, byte[] value, RecordHeaders headers) {
    // a failed send fails the transaction: commitTransaction throws it
    producer.send(new ProducerRecord<>(topic, null, null, key, value, headers));
  }

  /** Flush what was sent without committing (a test's zombie leaves its records in the log). */
  public void flush() {
    producer.flush();
  }

  /**
   * Commit what was added with the next offset and the new cumulative counts; the stats of this
   * partition's batch as JSON ({@code partition, first_offset, next_offset, already, counts}).
   */
  public String commit() {
    Counts after = before.plus(batch);
    producer.sendOffsetsToTransaction(position(next, after), group);
    producer.commitTransaction();
    Clients.giveBack(cfg, transactionalId, producer);
    producer = null;
    Clients.giveBack(cfg, reader);
    return "{\"partition\":" + partition
        + ",\"first_offset\":" + (first >= 0 ? first : next)
        + ",\"next_offset\":" + next
        + ",\"already\":" + already
        + ",\"counts\":" + after.json()
        + "}";
  }

  /** Abort the open transaction; a producer that cannot (fenced, fatal) is dropped. */
  public void abort() {
    if (producer != null) {
      try {
        producer.abortTransaction();
        Clients.giveBack(cfg, transactionalId, producer);
      } catch (RuntimeException e) {
        Clients.discard(producer); // the next owner of the id aborts it at its init
      }
      producer = null;
      Clients.giveBack(cfg, reader);
    }
  }
}
