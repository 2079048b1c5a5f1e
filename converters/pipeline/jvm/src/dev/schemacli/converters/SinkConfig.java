package dev.schemacli.converters;

import java.io.Serializable;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What a task needs to write, serialized to the executors. Built from the options the driver
 * passes ({@code converters.txsink.SinkConfig.jvm_options}):
 *
 * <ul>
 *   <li>{@code source.topic}: the v2 topic; {@code group}: the converter's progress group;
 *   <li>{@code timeout.ms}: for init, offset reads and commits;
 *   <li>{@code kafka.<name>}: a Kafka client property for the producer and the offsets reader
 *       alike (bootstrap servers, SASL, TLS), as Spark's Kafka options name them;
 *   <li>{@code producer.<name>}: a property of the producer alone, applied after those.
 * </ul>
 */
final class SinkConfig implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final String CLIENT = "kafka.";
  private static final String PRODUCER = "producer.";

  final String sourceTopic;
  final String group;
  final Duration timeout;
  private final TreeMap<String, String> options;

  private SinkConfig(TreeMap<String, String> options) {
    this.options = options;
    this.sourceTopic = required("source.topic");
    this.group = required("group");
    this.timeout = Duration.ofMillis(Long.parseLong(options.getOrDefault("timeout.ms", "60000")));
    required(CLIENT + "bootstrap.servers");
  }

  static SinkConfig of(Map<String, String> options) {
    return new SinkConfig(new TreeMap<>(options));
  }

  private String required(String key) {
    String value = options.get(key);
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("txsink option " + key + " is missing");
    }
    return value;
  }

  /** Stable per set of options: clients made from equal configs are interchangeable. */
  String identity() {
    return options.toString();
  }

  private Properties with(String prefix, Properties props) {
    for (Map.Entry<String, String> e : options.entrySet()) {
      if (e.getKey().startsWith(prefix)) {
        props.setProperty(e.getKey().substring(prefix.length()), e.getValue());
      }
    }
    return props;
  }

  Properties producer(String transactionalId) {
    Properties props = with(PRODUCER, with(CLIENT, new Properties()));
    props.setProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    props.setProperty(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    props.setProperty(ProducerConfig.ACKS_CONFIG, "all");
    props.setProperty(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(timeout.toMillis()));
    props.setProperty(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    props.setProperty(
        ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    return props;
  }

  Properties reader() {
    Properties props = with(CLIENT, new Properties());
    props.setProperty(ConsumerConfig.GROUP_ID_CONFIG, group);
    props.setProperty(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    // read_committed makes the consumer ask for stable offsets (KIP-447): an offset commit of a
    // transaction still in flight is waited for, never read half-done
    props.setProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.setProperty(
        ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    props.setProperty(
        ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return props;
  }
}
