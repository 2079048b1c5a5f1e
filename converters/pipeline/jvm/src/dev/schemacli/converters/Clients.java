package dev.schemacli.converters;

import java.time.Duration;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;

/**
 * The Kafka clients of one executor JVM, kept between tasks: a producer's {@code
 * initTransactions} costs a round of requests to the coordinator, so a task borrows the producer
 * of its transactional id that an earlier task left idle.
 *
 * <p>Reusing one is safe: every transaction reads the committed offset after the producer's last
 * init, and a producer fenced since then fails its first request to the coordinator (the probe in
 * {@link PartitionWriter}), before any record is written, and is replaced by a fresh one. A
 * borrowed client belongs to one task (one thread) until it is given back; two tasks of one
 * partition at once (a speculative copy) each get their own producer, the newer fencing the older.
 */
final class Clients {
  private static final Map<String, KafkaProducer<byte[], byte[]>> IDLE_PRODUCERS =
      new ConcurrentHashMap<>();
  private static final Map<String, Queue<KafkaConsumer<byte[], byte[]>>> IDLE_READERS =
      new ConcurrentHashMap<>();

  private Clients() {}

  private static String key(SinkConfig cfg, String transactionalId) {
    return transactionalId + "|" + cfg.identity();
  }

  /** An idle producer of this id, or a fresh one (initialized: every older one is fenced). */
  static KafkaProducer<byte[], byte[]> borrowProducer(SinkConfig cfg, String transactionalId) {
    KafkaProducer<byte[], byte[]> idle = IDLE_PRODUCERS.remove(key(cfg, transactionalId));
    return idle != null ? idle : freshProducer(cfg, transactionalId);
  }

  static KafkaProducer<byte[], byte[]> freshProducer(SinkConfig cfg, String transactionalId) {
    KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(cfg.producer(transactionalId));
    try {
      // fences whoever wrote this partition before and aborts what they left open
      producer.initTransactions();
    } catch (RuntimeException e) {
      discard(producer);
      throw e;
    }
    return producer;
  }

  /** A producer whose transaction ended (committed or aborted): idle for the next task. */
  static void giveBack(SinkConfig cfg, String transactionalId, KafkaProducer<byte[], byte[]> p) {
    KafkaProducer<byte[], byte[]> older = IDLE_PRODUCERS.put(key(cfg, transactionalId), p);
    if (older != null && older != p) {
      discard(older);
    }
  }

  /** A producer that is fenced, failed fatally, or cannot end its transaction. */
  static void discard(KafkaProducer<byte[], byte[]> producer) {
    try {
      producer.close(Duration.ZERO);
    } catch (RuntimeException e) {
      // closing a broken producer may fail too: it is dropped either way
    }
  }

  static KafkaConsumer<byte[], byte[]> borrowReader(SinkConfig cfg) {
    Queue<KafkaConsumer<byte[], byte[]>> idle = IDLE_READERS.get(cfg.identity());
    KafkaConsumer<byte[], byte[]> reader = idle == null ? null : idle.poll();
    return reader != null ? reader : new KafkaConsumer<>(cfg.reader());
  }

  static void giveBack(SinkConfig cfg, KafkaConsumer<byte[], byte[]> reader) {
    IDLE_READERS.computeIfAbsent(cfg.identity(), k -> new ConcurrentLinkedQueue<>()).add(reader);
  }

  /** Close every idle client of this JVM (a test's teardown; executors' go with the JVM). */
  static void closeIdle() {
    IDLE_PRODUCERS.values().removeIf(p -> { discard(p); return true; });
    for (Queue<KafkaConsumer<byte[], byte[]>> queue : IDLE_READERS.values()) {
      for (KafkaConsumer<byte[], byte[]> reader; (reader = queue.poll()) != null; ) {
        reader.close(Duration.ZERO);
      }
    }
  }
}
