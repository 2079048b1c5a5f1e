package dev.schemacli.quality;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.util.Base64;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;

/**
 * A rule set over given records, as a Confluent Java serializer (mode WRITE) or deserializer
 * (READ) runs it: the proof's JVM road (tests/integration/test_cel_rules_equality.py).
 *
 * <p>Input on stdin, one JSON document: {@code {"schema": S, "ruleSet": {"domainRules": [...]},
 * "metadata": {"tags": {...}}, "mode": "WRITE", "closures": true, "records": [base64 of Avro
 * binary]}} ({@code closures}: false runs CEL-Java's interpreter alone). Output on stdout:
 * {@code {"results": [{"outcomes": [[verdict, action, error]...], "refused": bool, "record":
 * base64 of the record after the transforms, in Avro binary with S}], "evaluations":
 * {"closures": N, "fallback": N, "celjava": N}}}, the outcomes in the rule set's order (not the
 * order READ runs them), and how many evaluations the closures made, gave back to CEL-Java, or
 * CEL-Java made alone. Exit status 2 on unreadable input.
 */
public final class RuleRun {
  private RuleRun() {}

  public static void main(String[] args) throws Exception {
    JsonNode request;
    Schema schema;
    try {
      request = Json.MAPPER.readTree(System.in);
      schema = new Schema.Parser().parse(Json.MAPPER.writeValueAsString(request.get("schema")));
    } catch (Exception e) {
      System.err.println("error " + Engine.words(e));
      System.exit(2);
      return;
    }
    String mode = request.path("mode").asText("WRITE");
    Engine engine = new Engine(
        Json.rules(request.path("ruleSet").get("domainRules")),
        Json.tags(request.path("metadata").get("tags")),
        mode,
        true,
        request.path("closures").asBoolean(true));
    engine.count();
    engine.prepare(schema); // as the scan does: the programs compiled ahead of the records
    int n = engine.rules().size();
    GenericDatumReader<IndexedRecord> reader = new GenericDatumReader<>(schema);
    GenericDatumWriter<Object> writer = new GenericDatumWriter<>(schema);
    ObjectNode answer = Json.MAPPER.createObjectNode();
    ArrayNode results = answer.putArray("results");
    BinaryDecoder decoder = null;
    for (JsonNode item : request.get("records")) {
      ObjectNode result = results.addObject();
      byte[] bytes = Base64.getDecoder().decode(item.asText());
      decoder = DecoderFactory.get().binaryDecoder(bytes, decoder);
      IndexedRecord record = reader.read(null, decoder);
      Engine.Result r = engine.run(record);
      ArrayNode outcomes = result.putArray("outcomes");
      for (int i = 0; i < n; i++) {
        // READ runs the rules backwards: answer in the rule set's order
        Engine.Outcome o = r.outcomes()["READ".equals(mode) ? n - 1 - i : i];
        ArrayNode row = outcomes.addArray();
        row.add(o.verdict().name());
        row.add(o.action());
        row.add(o.error());
      }
      result.put("refused", r.refused());
      try {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
        writer.write(r.record(), enc);
        enc.flush();
        result.put("record", Base64.getEncoder().encodeToString(out.toByteArray()));
      } catch (RuntimeException e) {
        result.putNull("record");
        result.put("write_error", Engine.words(e));
      }
    }
    long[] counts = engine.counts();
    ObjectNode evaluations = answer.putObject("evaluations");
    evaluations.put("closures", counts[0]);
    evaluations.put("fallback", counts[1]);
    evaluations.put("celjava", counts[2]);
    answer.put("compiled_at_run", engine.compiledAtRun());
    System.out.write(Json.MAPPER.writeValueAsBytes(answer));
    System.out.flush();
  }
}
