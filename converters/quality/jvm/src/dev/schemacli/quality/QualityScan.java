package dev.schemacli.quality;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.schemacli.census.Workers;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * {@code topics check}'s read of a topic with Kafka's own consumer (converters/quality/jvmscan.py
 * runs it): every value with a Confluent header is decoded with its writer schema into a
 * GenericRecord and the rule set runs over it as Confluent's Java serializer runs it
 * ({@link Engine}, every rule on every record). Partitions, ranges, writers and rules come from
 * a plan file (JSON), the consumer's settings from a properties file; the tallies go to stdout as
 * one JSON document, progress and errors to stderr as lines {@code progress N} and
 * {@code error WORDS}. The threads, their consumers, the progress and the exit status are the
 * census's ({@link Workers}, in schemacli-census.jar on this jar's classpath).
 *
 * <p>Plan: {@code {"topic", "deadline_ms", "threads", "examples", "mode", "partitions": [[p,
 * start, end]...], "writers": {"id": schema text}, "ruleSet": {"domainRules": [...]},
 * "metadata": {"tags": {...}}, "closures": true}} ({@code closures}, true when absent: each rule's
 * CEL compiled into {@link Closures} where it can be; false, CEL-Java's interpreter alone, which
 * bench/bench_check.py times beside it).
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

  /** One thread's tallies, per writer id, and the records no rule could see; its decoders. */
  static final class Tally {
    final Map<Integer, WriterTally> writers = new HashMap<>();
    long nulls;
    long unframed;
    final Map<Integer, Long> unknown = new TreeMap<>();
    private final Plan plan;
    private final Engine engine;
    private final int nRules;
    private final Map<Integer, GenericDatumReader<IndexedRecord>> readers = new HashMap<>();
    // each writer's last record, decoded into again (its fields, strings and arrays reused):
    // nothing keeps a record once the rules have run over it
    private final Map<Integer, IndexedRecord> last = new HashMap<>();
    private BinaryDecoder decoder;
    // the writer of the record before (most records have the one before's): no map looked in
    private int seenId;
    private GenericDatumReader<IndexedRecord> seenReader; // null until a record is decoded
    private WriterTally seenTally;
    private IndexedRecord seenLast; // that writer's last record (no boxed id looked up)

    Tally(Plan plan, Engine engine) {
      this.plan = plan;
      this.engine = engine;
      this.nRules = engine.rules().size();
      // Avro's fast reader (off unless asked for): a reader built once per writer schema
      // rather than the resolving decoder's interpretation of it for every record
      GenericData data = new GenericData();
      data.setFastReaderEnabled(true);
      for (Map.Entry<Integer, Schema> w : plan.writers.entrySet()) {
        readers.put(w.getKey(), new GenericDatumReader<>(w.getValue(), w.getValue(), data));
      }
    }

    /** One record of a partition's range: its value decoded and the rules run over it. */
    void take(Workers.Range range, ConsumerRecord<byte[], byte[]> r) {
      byte[] v = r.value();
      if (v == null) {
        nulls++;
        return;
      }
      if (v.length < 5 || v[0] != 0) {
        unframed++;
        return;
      }
      int id = ((v[1] & 0xff) << 24) | ((v[2] & 0xff) << 16) | ((v[3] & 0xff) << 8) | (v[4] & 0xff);
      GenericDatumReader<IndexedRecord> reader;
      WriterTally w;
      if (seenReader != null && id == seenId) {
        reader = seenReader;
        w = seenTally;
      } else {
        reader = readers.get(id);
        if (reader == null) {
          unknown.merge(id, 1L, Long::sum);
          return;
        }
        w = writers.get(id);
        if (w == null) {
          w = new WriterTally();
          w.rules = new RuleTally[nRules];
          for (int i = 0; i < nRules; i++) w.rules[i] = new RuleTally();
          writers.put(id, w);
        }
        seenId = id;
        seenReader = reader;
        seenTally = w;
        seenLast = last.get(id);
      }
      w.records++;
      long offset = r.offset();
      IndexedRecord record;
      try {
        decoder = DecoderFactory.get().binaryDecoder(v, 5, v.length - 5, decoder);
        record = reader.read(seenLast, decoder);
      } catch (IOException | RuntimeException ex) {
        if (w.undecodable++ == 0) {
          w.undecodableAt = new long[] {range.partition, offset};
          w.decodeError = Engine.words(ex);
        }
        return;
      }
      if (record != seenLast) {
        last.put(id, record);
        seenLast = record;
      }
      Engine.Result result = engine.run(record);
      Engine.Outcome[] outcomes = result.outcomes();
      for (int i = 0; i < nRules; i++) {
        Engine.Outcome o = outcomes[i];
        RuleTally rt = w.rules[i];
        rt.counts[o.verdict().ordinal()]++;
        if (o.verdict() == Engine.Verdict.FAIL && rt.failed.size() < plan.examples) {
          rt.failed.add(new long[] {range.partition, offset});
        } else if (o.verdict() == Engine.Verdict.ERROR) {
          if (rt.errored.size() < plan.examples) rt.errored.add(new long[] {range.partition, offset});
          if (rt.firstError == null) rt.firstError = o.error();
        }
      }
    }
  }

  static final class Plan {
    String topic;
    long deadlineMs;
    int threads;
    int examples;
    String mode;
    boolean closures;
    final List<Workers.Range> partitions = new ArrayList<>();
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
    plan.closures = doc.path("closures").asBoolean(true);
    for (JsonNode p : doc.get("partitions")) {
      plan.partitions.add(new Workers.Range(p.get(0).asInt(), p.get(1).asLong(), p.get(2).asLong()));
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
    for (Workers.Range p : plan.partitions) {
      ObjectNode part = parts.addObject();
      part.put("partition", p.partition);
      part.put("scanned", p.scanned);
      part.put("complete", p.complete);
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

  public static void main(String[] args) throws Exception {
    if (args.length != 2) Workers.refuse("usage: QualityScan PLAN PROPERTIES");
    Plan plan;
    Properties props;
    try {
      plan = readPlan(Path.of(args[0]));
      props = Workers.consumerProperties(Path.of(args[1]), ByteArrayDeserializer.class);
    } catch (IOException | RuntimeException e) {
      Workers.refuse(Engine.words(e));
      return;
    }
    Engine engine = new Engine(plan.rules, plan.tags, plan.mode, false, plan.closures);
    // the rules' programs compiled while the consumers connect and fetch, not after: a program
    // a thread asks for before it is ready waits for it (compiled once), one missed is compiled
    // on first use; a failure here is left to the record whose rule meets it
    Thread prepare = new Thread(() -> {
      for (Schema writer : plan.writers.values()) {
        try {
          engine.prepare(writer);
        } catch (RuntimeException e) { // NOPMD: the scan's own evaluation reports it
        }
      }
    }, "quality-prepare");
    prepare.setDaemon(true);
    prepare.start();
    List<Tally> tallies = new ArrayList<>();
    // the scan's error line says the cause chain (Engine's words), as its rule errors do
    Workers.run(plan.partitions, plan.threads, "quality", Engine::words, (share, progress) -> {
      Tally t = new Tally(plan, engine);
      Workers.<byte[], byte[], Workers.Range>read(
          plan.topic, plan.deadlineMs, props, share, progress, t::take);
      synchronized (tallies) {
        tallies.add(t);
      }
    });
    Workers.answer(Json.MAPPER.writeValueAsBytes(answer(plan, tallies, engine.rules().size())));
  }
}
