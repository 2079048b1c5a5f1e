// The reference oracle: Apache Avro Java (the jar Confluent Schema Registry uses) behind a
// JSON-lines protocol, so one warm JVM answers thousands of questions.
//
// Request lines (one JSON object each):
//   {"op": "parse",  "schema": <schema JSON>}
//   {"op": "parse_files", "paths": [...]}   (one Parser reads the files in order, as
//        avro-maven-plugin's imports; parse(File) lets Jackson detect the encoding; the reply
//        is the last file's, as for parse)
//   {"op": "compat", "reader": <schema JSON>, "writer": <schema JSON>}
//   {"op": "bench",  "reader": ..., "writer": ..., "n": 100}   (parse + check n times, returns ns)
//   {"op": "bench_corpus", "pairs": [[reader, writer], ...], "repeat": 3}     (the same, a corpus)
// A schema is sent as its JSON value, or as {"text": "<raw schema text>"}.
// Each schema is parsed by its own Schema.Parser, as the registry does.
// Response lines:
//   parse:  {"ok": true, "canonical": "..."} | {"ok": false, "error": "Class: message"}
//   compat: {"compatible": bool, "incompatibilities": [{"type","location","message"}]}
//           | {"parse_error": "..."} | {"error": "Class: message"} (the check itself threw)
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;

public final class OracleMain {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) continue;
      ObjectNode reply;
      try {
        reply = answer(MAPPER.readTree(line));
      } catch (Throwable t) {
        reply = MAPPER.createObjectNode();
        reply.put("harness_error", describe(t));
      }
      out.println(MAPPER.writeValueAsString(reply));
      out.flush();
    }
  }

  // Schemas travel as JSON values; {"text": "..."} sends raw schema text instead.
  private static String text(JsonNode node) throws Exception {
    if (node.isObject() && node.size() == 1 && node.has("text") && node.get("text").isTextual()) {
      return node.get("text").textValue();
    }
    return MAPPER.writeValueAsString(node);
  }

  private static String describe(Throwable t) {
    return t.getClass().getSimpleName() + ": " + t.getMessage();
  }

  private interface SchemaSource {
    Schema get() throws Exception;
  }

  // {"ok": true, "canonical": ...} for the schema, or {"ok": false, "error": ...}.
  private static ObjectNode parsed(SchemaSource source) {
    ObjectNode reply = MAPPER.createObjectNode();
    try {
      Schema schema = source.get();
      reply.put("ok", true);
      reply.put("canonical", org.apache.avro.SchemaNormalization.toParsingForm(schema));
    } catch (Throwable t) {
      reply.put("ok", false);
      reply.put("error", describe(t));
    }
    return reply;
  }

  private static ObjectNode answer(JsonNode request) throws Exception {
    ObjectNode reply = MAPPER.createObjectNode();
    String op = request.get("op").textValue();
    if (op.equals("parse")) {
      return parsed(() -> new Schema.Parser().parse(text(request.get("schema"))));
    }
    if (op.equals("parse_files")) {
      return parsed(() -> {
        Schema.Parser parser = new Schema.Parser();
        Schema last = null;
        for (JsonNode path : request.get("paths")) {
          last = parser.parse(new java.io.File(path.textValue()));
        }
        return last;
      });
    }
    if (op.equals("bench_corpus")) {
      // Parse + check every pair, `repeat` times; pairs Java cannot parse are counted, not timed.
      java.util.List<String[]> pairs = new java.util.ArrayList<>();
      for (JsonNode pair : request.get("pairs")) {
        pairs.add(new String[] {text(pair.get(0)), text(pair.get(1))});
      }
      int repeat = request.get("repeat").intValue();
      long start = System.nanoTime();
      long checked = 0;
      for (int i = 0; i < repeat; i++) {
        for (String[] pair : pairs) {
          try {
            Schema rs = new Schema.Parser().parse(pair[0]);
            Schema ws = new Schema.Parser().parse(pair[1]);
            SchemaCompatibility.checkReaderWriterCompatibility(rs, ws);
            checked++;
          } catch (RuntimeException e) {
            // refused or thrown: still counted as work done
            checked++;
          }
        }
      }
      reply.put("ns", System.nanoTime() - start);
      reply.put("checked", checked);
      return reply;
    }
    Schema reader;
    Schema writer;
    try {
      reader = new Schema.Parser().parse(text(request.get("reader")));
      writer = new Schema.Parser().parse(text(request.get("writer")));
    } catch (Throwable t) {
      reply.put("parse_error", describe(t));
      return reply;
    }
    if (op.equals("bench")) {
      String r = text(request.get("reader"));
      String w = text(request.get("writer"));
      int n = request.get("n").intValue();
      long start = System.nanoTime();
      for (int i = 0; i < n; i++) {
        Schema rs = new Schema.Parser().parse(r);
        Schema ws = new Schema.Parser().parse(w);
        SchemaCompatibility.checkReaderWriterCompatibility(rs, ws);
      }
      reply.put("ns", System.nanoTime() - start);
      return reply;
    }
    try {
      SchemaCompatibility.SchemaPairCompatibility pair =
          SchemaCompatibility.checkReaderWriterCompatibility(reader, writer);
      SchemaCompatibility.SchemaCompatibilityResult result = pair.getResult();
      reply.put("compatible",
          result.getCompatibility() == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
      ArrayNode list = reply.putArray("incompatibilities");
      for (SchemaCompatibility.Incompatibility inc : result.getIncompatibilities()) {
        ObjectNode item = list.addObject();
        item.put("type", inc.getType().name());
        item.put("location", inc.getLocation());
        item.put("message", inc.getMessage());
      }
    } catch (Throwable t) {
      reply.put("error", describe(t));
    }
    return reply;
  }
}
