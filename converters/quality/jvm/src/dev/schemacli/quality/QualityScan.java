package dev.schemacli.quality;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * {@code topics check}'s read of a topic with Kafka's own consumer (converters/quality/jvmscan.py
 * runs it): every value with a Confluent header is decoded with its writer schema into a
 * GenericRecord and the rule set runs over it as Confluent's Java serializer runs it
 * ({@link Engine}, every rule on every record). Partitions, ranges, writers and rules come from
 * a plan file (JSON), the consumer's settings from a properties file; the tallies go to stdout as
 * one JSON document, progress and errors to stderr as lines {@code progress N} and
 * {@code error WORDS}.
 *
 * <p>Plan: {@code {"topic", "deadline_ms", "threads", "examples", "mode", "partitions": [[p,
 * start, end]...], "writers": {"id": schema text}, "ruleSet": {"domainRules": [...]},
 * "metadata": {"tags": {...}}}}.
 *
 * <p>Exit status: 0 the tallies were written; 2 a bad plan or refused settings; 3 Kafka failed.
 */
public final class QualityScan {
  private QualityScan() {}

  /** What the rules said of one writer's records, per rule. */
  static final class RuleTally {
    final long[] counts = new long[Engine.Verdict.values().length];
    final List<long[]> failed = new ArrayList<>();
    final List<long[]> errored = new ArrayList<>();
    String firstError;
  }

  /** One writer id's records in one thread's share. */
  static final class WriterTally {
    long records;
    long undecodable;
    long[] undecodableAt;
    String decodeError;
    RuleTally[] rules;
  }

  /** One thread's tallies: per writer id, and the records no rule could see. */
  static final class Tally {
    final Map<Integer, WriterTally> writers = new HashMap<>();
    long nulls;
    long unframed;
    final Map<Integer, Long> unknown = new TreeMap<>();
    final Map<Integer, long[]> partitions = new TreeMap<>(); // partition -> scanned, complete
  }

  static final class Plan {
    String topic;
    long deadlineMs;
    int threads;
    int examples;
    String mode;
    final List<long[]> partitions = new ArrayList<>();
    final Map<Integer, Schema> writers = new HashMap<>();
    List<Engine.Rule> rules;
    Map<String, java.util.Set<String>> tags;
  }

  static Plan readPlan(Path file) throws IOException {
    JsonNode doc;
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      doc = Json.MAPPER.readTree(in);
    }
    Plan plan = new Plan();
    plan.topic = doc.get("topic").asText();
    plan.deadlineMs = doc.get("deadline_ms").asLong();
    plan.threads = Math.max(1, doc.path("threads").asInt(1));
    plan.examples = doc.path("examples").asInt(3);
    plan.mode = doc.path("mode").asText("WRITE");
    for (JsonNode p : doc.get("partitions")) {
      plan.partitions.add(new long[] {p.get(0).asLong(), p.get(1).asLong(), p.get(2).asLong()});
    }
    var fields = doc.get("writers").fields();
    while (fields.hasNext()) {
      var e = fields.next();
      plan.writers.put(Integer.parseUnsignedInt(e.getKey()), new Schema.Parser().parse(e.getValue().asText()));
    }
    plan.rules = Json.rules(doc.path("ruleSet").get("domainRules"));
    plan.tags = Json.tags(doc.path("metadata").get("tags"));
    return plan;
  }

  static Properties consumerProperties(Path file) throws IOException {
    Properties props = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      props.load(in);
    }
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.remove(ConsumerConfig.GROUP_ID_CONFIG); // assign only: no group, nothing committed
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    return props;
  }

  /** One thread: reads its share of the partitions to their end offsets (or the deadline). */
  static Tally read(Plan plan, Engine engine, Properties props, List<long[]> share, AtomicLong progress) {
    Tally tally = new Tally();
    Map<TopicPartition, long[]> open = new HashMap<>();
    for (long[] p : share) {
      open.put(new TopicPartition(plan.topic, (int) p[0]), p);
      tally.partitions.put((int) p[0], new long[] {0, 0});
    }
    Map<Integer, GenericDatumReader<IndexedRecord>> readers = new HashMap<>();
    for (Map.Entry<Integer, Schema> w : plan.writers.entrySet()) {
      readers.put(w.getKey(), new GenericDatumReader<>(w.getValue()));
    }
    int nRules = engine.rules().size();
    BinaryDecoder decoder = null;
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
      consumer.assign(open.keySet());
      for (Map.Entry<TopicPartition, long[]> e : open.entrySet()) {
        consumer.seek(e.getKey(), e.getValue()[1]);
      }
      while (!open.isEmpty() && System.currentTimeMillis() <= plan.deadlineMs) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
        long n = 0;
        for (TopicPartition tp : records.partitions()) {
          long[] range = open.get(tp);
          if (range == null) continue;
          long[] scanned = tally.partitions.get(tp.partition());
          for (ConsumerRecord<byte[], byte[]> r : records.records(tp)) {
            long offset = r.offset();
            if (offset >= range[2]) break;
            scanned[0]++;
            n++;
            byte[] v = r.value();
            if (v == null) {
              tally.nulls++;
              continue;
            }
            if (v.length < 5 || v[0] != 0) {
              tally.unframed++;
              continue;
            }
            int id = ((v[1] & 0xff) << 24) | ((v[2] & 0xff) << 16) | ((v[3] & 0xff) << 8) | (v[4] & 0xff);
            GenericDatumReader<IndexedRecord> reader = readers.get(id);
            if (reader == null) {
              tally.unknown.merge(id, 1L, Long::sum);
              continue;
            }
            WriterTally w = tally.writers.get(id);
            if (w == null) {
              w = new WriterTally();
              w.rules = new RuleTally[nRules];
              for (int i = 0; i < nRules; i++) w.rules[i] = new RuleTally();
              tally.writers.put(id, w);
            }
            w.records++;
            IndexedRecord record;
            try {
              decoder = DecoderFactory.get().binaryDecoder(v, 5, v.length - 5, decoder);
              record = reader.read(null, decoder);
            } catch (IOException | RuntimeException ex) {
              if (w.undecodable++ == 0) {
                w.undecodableAt = new long[] {tp.partition(), offset};
                w.decodeError = Engine.words(ex);
              }
              continue;
            }
            Engine.Result result = engine.run(record);
            Engine.Outcome[] outcomes = result.outcomes();
            for (int i = 0; i < nRules; i++) {
              Engine.Outcome o = outcomes[i];
              RuleTally rt = w.rules[i];
              rt.counts[o.verdict().ordinal()]++;
              if (o.verdict() == Engine.Verdict.FAIL && rt.failed.size() < plan.examples) {
                rt.failed.add(new long[] {tp.partition(), offset});
              } else if (o.verdict() == Engine.Verdict.ERROR) {
                if (rt.errored.size() < plan.examples) rt.errored.add(new long[] {tp.partition(), offset});
                if (rt.firstError == null) rt.firstError = o.error();
              }
            }
          }
        }
        List<TopicPartition> finished = new ArrayList<>();
        for (Map.Entry<TopicPartition, long[]> e : open.entrySet()) {
          // the position passes the end over control records and compacted gaps too
          if (consumer.position(e.getKey()) >= e.getValue()[2]) finished.add(e.getKey());
        }
        if (!finished.isEmpty()) {
          for (TopicPartition tp : finished) {
            open.remove(tp);
            tally.partitions.get(tp.partition())[1] = 1;
          }
          consumer.assign(open.keySet());
        }
        progress.addAndGet(n);
      }
    }
    return tally;
  }

  static ArrayNode offsets(List<long[]> at) {
    ArrayNode out = Json.MAPPER.createArrayNode();
    for (long[] a : at) out.addArray().add(a[0]).add(a[1]);
    return out;
  }

  /** Every thread's tallies into one document. */
  static ObjectNode answer(Plan plan, List<Tally> tallies, int nRules) {
    ObjectNode doc = Json.MAPPER.createObjectNode();
    ArrayNode parts = doc.putArray("partitions");
    long nulls = 0;
    long unframed = 0;
    Map<Integer, Long> unknown = new TreeMap<>();
    Map<Integer, List<WriterTally>> writers = new TreeMap<>();
    for (long[] p : plan.partitions) {
      long[] seen = null;
      for (Tally t : tallies) if (t.partitions.containsKey((int) p[0])) seen = t.partitions.get((int) p[0]);
      ObjectNode part = parts.addObject();
      part.put("partition", p[0]);
      part.put("scanned", seen == null ? 0 : seen[0]);
      part.put("complete", seen == null ? p[2] <= p[1] : seen[1] == 1);
    }
    for (Tally t : tallies) {
      nulls += t.nulls;
      unframed += t.unframed;
      t.unknown.forEach((id, n) -> unknown.merge(id, n, Long::sum));
      t.writers.forEach((id, w) -> writers.computeIfAbsent(id, k -> new ArrayList<>()).add(w));
    }
    doc.put("null", nulls);
    doc.put("unframed", unframed);
    ObjectNode unknownOut = doc.putObject("unknown");
    unknown.forEach((id, n) -> unknownOut.put(Integer.toUnsignedString(id), n));
    ObjectNode out = doc.putObject("writers");
    for (Map.Entry<Integer, List<WriterTally>> e : writers.entrySet()) {
      ObjectNode w = out.putObject(Integer.toUnsignedString(e.getKey()));
      long records = 0;
      long undecodable = 0;
      long[] undecodableAt = null;
      String decodeError = null;
      for (WriterTally wt : e.getValue()) {
        records += wt.records;
        undecodable += wt.undecodable;
        if (undecodableAt == null && wt.undecodableAt != null) {
          undecodableAt = wt.undecodableAt;
          decodeError = wt.decodeError;
        }
      }
      w.put("records", records);
      w.put("undecodable", undecodable);
      if (undecodableAt != null) {
        w.putArray("undecodable_at").add(undecodableAt[0]).add(undecodableAt[1]);
        w.put("decode_error", decodeError);
      }
      ArrayNode rules = w.putArray("rules");
      boolean backwards = "READ".equals(plan.mode); // READ runs them backwards
      for (int j = 0; j < nRules; j++) {
        int i = backwards ? nRules - 1 - j : j;
        ObjectNode r = rules.addObject();
        long[] counts = new long[Engine.Verdict.values().length];
        List<long[]> failed = new ArrayList<>();
        List<long[]> errored = new ArrayList<>();
        String firstError = null;
        for (WriterTally wt : e.getValue()) {
          RuleTally rt = wt.rules[i];
          for (int k = 0; k < counts.length; k++) counts[k] += rt.counts[k];
          failed.addAll(rt.failed);
          errored.addAll(rt.errored);
          if (firstError == null) firstError = rt.firstError;
        }
        failed.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        errored.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        r.put("pass", counts[Engine.Verdict.PASS.ordinal()]);
        r.put("fail", counts[Engine.Verdict.FAIL.ordinal()]);
        r.put("error", counts[Engine.Verdict.ERROR.ordinal()]);
        r.put("skipped", counts[Engine.Verdict.SKIPPED.ordinal()]);
        r.set("failed_at", offsets(failed.subList(0, Math.min(plan.examples, failed.size()))));
        r.set("errored_at", offsets(errored.subList(0, Math.min(plan.examples, errored.size()))));
        if (firstError != null) r.put("first_error", firstError);
      }
    }
    return doc;
  }

  /** The partitions dealt to n threads, the biggest first to the least loaded. */
  static List<List<long[]>> share(List<long[]> ranges, int n) {
    List<List<long[]>> shares = new ArrayList<>();
    long[] loads = new long[n];
    for (int i = 0; i < n; i++) shares.add(new ArrayList<>());
    List<long[]> sorted = new ArrayList<>(ranges);
    sorted.sort((a, b) -> Long.compare(b[2] - b[1], a[2] - a[1]));
    for (long[] r : sorted) {
      int least = 0;
      for (int i = 1; i < n; i++) if (loads[i] < loads[least]) least = i;
      loads[least] += r[2] - r[1];
      shares.get(least).add(r);
    }
    shares.removeIf(List::isEmpty);
    return shares;
  }

  public static void main(String[] args) throws Exception {
    PrintStream err = System.err;
    if (args.length != 2) {
      err.println("error usage: QualityScan PLAN PROPERTIES");
      System.exit(2);
    }
    Plan plan;
    Properties props;
    try {
      plan = readPlan(Path.of(args[0]));
      props = consumerProperties(Path.of(args[1]));
    } catch (IOException | RuntimeException e) {
      err.println("error " + Engine.words(e));
      System.exit(2);
      return;
    }
    Engine engine = new Engine(plan.rules, plan.tags, plan.mode, false);
    List<long[]> toRead = new ArrayList<>();
    for (long[] p : plan.partitions) if (p[2] > p[1]) toRead.add(p);
    AtomicLong progress = new AtomicLong();
    List<Throwable> failures = new ArrayList<>();
    List<Tally> tallies = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (List<long[]> part : share(toRead, Math.min(plan.threads, Math.max(1, toRead.size())))) {
      Thread th = new Thread(() -> {
        try {
          Tally t = read(plan, engine, props, part, progress);
          synchronized (tallies) {
            tallies.add(t);
          }
        } catch (Throwable e) { // every failure is the scan's failure
          synchronized (failures) {
            failures.add(e);
          }
        }
      }, "quality-" + threads.size());
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
        err.println("error " + Engine.words(first));
        err.flush();
        System.exit(first instanceof ConfigException ? 2 : 3);
      }
    }
    long now = progress.get();
    if (now > told) err.println("progress " + (now - told));
    System.out.write(Json.MAPPER.writeValueAsBytes(answer(plan, tallies, engine.rules().size())));
    System.out.flush();
    System.exit(0);
  }
}
