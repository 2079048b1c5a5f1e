package dev.schemacli.bench;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * The Kafka Streams down-converter a team would hand-write, doing what the schemacli converter
 * does to the bench's taxi rides (examples/mappings/taxi-ride-v2-to-v1.yaml): read the
 * Confluent-framed v2 bytes, decode them with Avro's GenericDatumReader (writer schema by the
 * id in the frame, the mapping's v2 schema as reader), copy four fields, parse total_amount as
 * Spark's {@code try_cast(... AS FLOAT)} does (a failure dead-letters the record), encode v1,
 * frame it with v1's id and write it with exactly_once_v2. The headers are the converter's
 * (converters/pipeline/headers.py): the loop-guard marker on a converted record, the four
 * dead-letter headers on a dead letter; a record carrying the marker is skipped.
 *
 * <p>Driven by bench/bench_converter.py over stdin, one JVM for every round (warm, like Spark's):
 * {@code run <application.id> <v1 topic> <dead-letter topic> <messages>} answers {@code done
 * <seconds> <converted> <dead> <skipped> <tombstones> <seconds from the first record>} once every
 * message is read and its offsets committed (the clock runs from KafkaStreams.start to that
 * commit; the last figure leaves out the start and the consumer group's join).
 */
public final class KStreamsConverter {
  static final String MARKER = "schemacli.converted-from";
  static final String ERROR = "schemacli.error";
  static final String STAGE = "schemacli.error-stage";
  static final String SOURCE = "schemacli.source";
  static final String TIMESTAMP = "schemacli.source-timestamp";

  /** args: bootstrap, v2 topic, settings file (java.util.Properties, see load). */
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String input = args[1];
    Properties settings = new Properties();
    try (var in = Files.newBufferedReader(Path.of(args[2]))) {
      settings.load(in);
    }
    Plan plan = Plan.load(settings);
    int threads = Integer.parseInt(settings.getProperty("threads", "2"));
    BufferedReader stdin =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = stdin.readLine()) != null) {
      String[] cmd = line.trim().split(" ");
      if (cmd.length != 5 || !cmd[0].equals("run")) {
        System.out.println("error bad command: " + line);
        continue;
      }
      String result =
          run(bootstrap, input, plan, threads, cmd[1], cmd[2], cmd[3], Long.parseLong(cmd[4]));
      System.out.println(result);
      System.out.flush();
    }
  }

  /** The registry's answers the converter reads at start: v1's id and schema, v2's writers. */
  static final class Plan {
    final Schema reader; // the mapping's v2 schema
    final Schema target; // v1
    final byte[] targetFrame;
    final Map<Integer, Schema> writers = new HashMap<>();
    final Map<Integer, String> versions = new HashMap<>(); // id -> "subject/version"

    Plan(Properties p) {
      reader = new Schema.Parser().parse(p.getProperty("reader.schema"));
      target = new Schema.Parser().parse(p.getProperty("target.schema"));
      int id = Integer.parseInt(p.getProperty("target.id"));
      targetFrame = new byte[] {0, (byte) (id >>> 24), (byte) (id >>> 16), (byte) (id >>> 8), (byte) id};
      for (String key : p.stringPropertyNames()) {
        if (key.startsWith("writer.") && key.endsWith(".schema")) {
          int wid = Integer.parseInt(key.substring(7, key.length() - 7));
          writers.put(wid, new Schema.Parser().parse(p.getProperty(key)));
          versions.put(wid, p.getProperty("writer." + wid + ".version"));
        }
      }
    }

    static Plan load(Properties p) {
      return new Plan(p);
    }
  }

  static final class Counts {
    final AtomicLong in = new AtomicLong();
    final AtomicLong converted = new AtomicLong();
    final AtomicLong dead = new AtomicLong();
    final AtomicLong skipped = new AtomicLong();
    final AtomicLong tombstones = new AtomicLong();
    volatile long firstRecordNanos; // when the first record reached a processor (after the join)
  }

  /** Thrown by the transform: why a record goes to the dead-letter topic, and at which stage. */
  static final class Dead extends Exception {
    private static final long serialVersionUID = 1L;
    final String stage;

    Dead(String stage, String message) {
      super(message, null, false, false);
      this.stage = stage;
    }
  }

  /** One per stream task: its own decoders, encoder and buffers. */
  static final class Convert implements Processor<byte[], byte[], byte[], byte[]> {
    private final Plan plan;
    private final Counts counts;
    private final Map<Integer, GenericDatumReader<GenericRecord>> readers = new HashMap<>();
    private final GenericDatumWriter<GenericRecord> writer;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    private BinaryDecoder decoder;
    private BinaryEncoder encoder;
    private GenericRecord decoded;
    private final GenericData.Record v1;
    private ProcessorContext<byte[], byte[]> context;

    Convert(Plan plan, Counts counts) {
      this.plan = plan;
      this.counts = counts;
      this.writer = new GenericDatumWriter<>(plan.target);
      this.v1 = new GenericData.Record(plan.target);
      for (Map.Entry<Integer, Schema> w : plan.writers.entrySet()) {
        readers.put(w.getKey(), new GenericDatumReader<>(w.getValue(), plan.reader));
      }
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
      this.context = context;
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
      if (counts.in.incrementAndGet() == 1) {
        counts.firstRecordNanos = System.nanoTime();
      }
      if (record.headers().lastHeader(MARKER) != null) {
        counts.skipped.incrementAndGet(); // already converted: the loop guard
        return;
      }
      RecordMetadata meta = context.recordMetadata().orElseThrow();
      String position = meta.topic() + "/" + meta.partition() + "/" + meta.offset();
      Headers headers = new RecordHeaders(record.headers().toArray());
      byte[] value = record.value();
      if (value == null) { // a delete: forwarded as a delete
        headers.add(MARKER, marker("tombstone", position, record.timestamp()));
        context.forward(record.withHeaders(headers), "v1");
        counts.tombstones.incrementAndGet();
        return;
      }
      try {
        int id = schemaId(value);
        byte[] converted = convert(id, value);
        headers.add(MARKER, marker(plan.versions.get(id), position, record.timestamp()));
        context.forward(record.withValue(converted).withHeaders(headers), "v1");
        counts.converted.incrementAndGet();
      } catch (Dead dead) {
        headers.add(ERROR, dead.getMessage().getBytes(StandardCharsets.UTF_8));
        headers.add(STAGE, dead.stage.getBytes(StandardCharsets.UTF_8));
        headers.add(SOURCE, position.getBytes(StandardCharsets.UTF_8));
        headers.add(TIMESTAMP, Long.toString(record.timestamp()).getBytes(StandardCharsets.UTF_8));
        context.forward(record.withHeaders(headers), "dead-letter"); // the raw v2 bytes
        counts.dead.incrementAndGet();
      }
    }

    private static byte[] marker(String origin, String position, long timestamp) {
      return (origin + " " + position + " " + timestamp).getBytes(StandardCharsets.UTF_8);
    }

    private int schemaId(byte[] value) throws Dead {
      if (value.length < 5 || value[0] != 0) {
        throw new Dead("decode", "not a Confluent-framed Avro value");
      }
      int id =
          ((value[1] & 0xff) << 24) | ((value[2] & 0xff) << 16) | ((value[3] & 0xff) << 8) | (value[4] & 0xff);
      if (!readers.containsKey(id)) {
        throw new Dead("decode", "unknown writer schema id " + id);
      }
      return id;
    }

    private byte[] convert(int id, byte[] value) throws Dead {
      try {
        decoder = DecoderFactory.get().binaryDecoder(value, 5, value.length - 5, decoder);
        decoded = readers.get(id).read(decoded, decoder);
      } catch (IOException | RuntimeException e) {
        throw new Dead("decode", "Avro decode failed: " + e);
      }
      // the mapping: four copies and total_amount: parse_number, on_error: fail
      v1.put(0, decoded.get(0));
      v1.put(1, decoded.get(1));
      v1.put(2, decoded.get(2));
      v1.put(3, decoded.get(3));
      String amount = decoded.get(4).toString();
      Float parsed = tryCastFloat(amount);
      if (parsed == null) {
        throw new Dead("convert", "total_amount: cannot convert " + amount + " to float");
      }
      v1.put(4, parsed);
      out.reset();
      out.write(plan.targetFrame, 0, plan.targetFrame.length);
      encoder = EncoderFactory.get().binaryEncoder(out, encoder);
      try {
        writer.write(v1, encoder);
        encoder.flush();
      } catch (IOException e) {
        throw new Dead("convert", "Avro encode failed: " + e);
      }
      return out.toByteArray();
    }
  }

  /** Spark's {@code try_cast(s AS FLOAT)}: Java's parse, then Spark's special literals. */
  static Float tryCastFloat(String s) {
    try {
      return Float.parseFloat(s);
    } catch (NumberFormatException e) {
      switch (s.trim().toLowerCase(Locale.ROOT)) {
        case "inf", "+inf", "infinity", "+infinity":
          return Float.POSITIVE_INFINITY;
        case "-inf", "-infinity":
          return Float.NEGATIVE_INFINITY;
        case "nan":
          return Float.NaN;
        default:
          return null;
      }
    }
  }

  static String run(
      String bootstrap,
      String input,
      Plan plan,
      int threads,
      String appId,
      String v1Topic,
      String deadTopic,
      long messages)
      throws Exception {
    Counts counts = new Counts();
    Topology topology = new Topology();
    topology.addSource("v2", new ByteArrayDeserializer(), new ByteArrayDeserializer(), input);
    topology.addProcessor("convert", () -> new Convert(plan, counts), "v2");
    topology.addSink("v1", v1Topic, new ByteArraySerializer(), new ByteArraySerializer(), "convert");
    topology.addSink(
        "dead-letter", deadTopic, new ByteArraySerializer(), new ByteArraySerializer(), "convert");
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, threads);
    props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("kstreams-").toString());
    props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    // the converter's client settings (converters/pipeline/stream.py SOURCE_/SINK_DEFAULTS)
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 10000);
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG), 10485760);
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.FETCH_MAX_BYTES_CONFIG), 52428800);
    props.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), 100);
    props.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), 1048576);
    Properties adminProps = new Properties();
    adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(adminProps)) {
      List<TopicPartition> parts =
          admin.describeTopics(List.of(input)).allTopicNames().get().get(input).partitions().stream()
              .map(p -> new TopicPartition(input, p.partition()))
              .collect(Collectors.toList());
      Map<TopicPartition, Long> ends = new HashMap<>();
      var listed =
          admin.listOffsets(parts.stream().collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest())))
              .all().get();
      listed.forEach((tp, info) -> ends.put(tp, info.offset()));
      KafkaStreams streams = new KafkaStreams(topology, props);
      long t0 = System.nanoTime();
      streams.start();
      try {
        while (true) { // every message read, and its offsets committed with its transaction
          if (counts.in.get() >= messages && committed(admin, appId, ends)) {
            break;
          }
          TimeUnit.MILLISECONDS.sleep(counts.in.get() >= messages ? 5 : 50);
          if (streams.state() == KafkaStreams.State.ERROR) {
            return "error streams in ERROR state";
          }
        }
        long end = System.nanoTime();
        double secs = (end - t0) / 1e9;
        return String.format(
            Locale.ROOT,
            "done %.3f %d %d %d %d %.3f",
            secs,
            counts.converted.get(),
            counts.dead.get(),
            counts.skipped.get(),
            counts.tombstones.get(),
            (end - counts.firstRecordNanos) / 1e9);
      } finally {
        streams.close();
        streams.cleanUp();
      }
    }
  }

  private static boolean committed(Admin admin, String group, Map<TopicPartition, Long> ends)
      throws Exception {
    Map<TopicPartition, OffsetAndMetadata> got =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
      OffsetAndMetadata at = got.get(e.getKey());
      // the end offset may be one past a commit marker the group's position stops short of
      if (at == null || at.offset() < e.getValue()) {
        return false;
      }
    }
    return true;
  }
}
