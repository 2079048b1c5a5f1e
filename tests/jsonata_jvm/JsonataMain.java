// Runs a Confluent JSONata migration rule the way Confluent's Java Avro deserializer does
// (schema-registry v8.3.1: AbstractKafkaSchemaSerDe.executeMigrations, JsonataExecutor,
// AvroSchema.toJson / AvroSchemaUtils.toObject), with JSONata4Java and Avro 1.12.0:
//   1. the v2 record (Avro binary) is read into a GenericRecord with the v2 schema;
//   2. it is written with Avro's JSON encoding (unions wrapped as {"type": value}) and read
//      into a Jackson tree (ALLOW_NON_NUMERIC_NUMBERS, as Confluent's JacksonMapper);
//   3. Expressions.parse(expr).evaluate(tree, 60000 ms, depth 1000) (the executor's defaults);
//   4. the result is written as JSON and read back with Avro's JSON decoder and the v1 schema
//      (GenericDatumReader(v1, v1)): the record the application gets; it is answered in Avro
//      binary with v1.
// Input on stdin: one JSON document {"v2": schema, "v1": schema, "expr": text, "records": [base64
// of Avro binary]}. Output: one JSON document {"results": [{"ok": base64} | {"error": text}]}.
import com.api.jsonata4java.expressions.Expressions;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.io.JsonEncoder;

public class JsonataMain {
  static final ObjectMapper MAPPER =
      JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

  public static void main(String[] args) throws Exception {
    JsonNode request = MAPPER.readTree(System.in);
    Schema v2 = new Schema.Parser().parse(MAPPER.writeValueAsString(request.get("v2")));
    Schema v1 = new Schema.Parser().parse(MAPPER.writeValueAsString(request.get("v1")));
    Expressions expr = Expressions.parse(request.get("expr").asText());
    GenericData data = GenericData.get();
    GenericDatumReader<Object> readV2 = new GenericDatumReader<>(v2, v2, data);
    GenericDatumWriter<Object> writeV2 = new GenericDatumWriter<>(v2, data);
    GenericDatumReader<Object> readV1 = new GenericDatumReader<>(v1, v1, data);
    GenericDatumWriter<Object> writeV1 = new GenericDatumWriter<>(v1, data);
    ObjectNode answer = MAPPER.createObjectNode();
    ArrayNode results = answer.putArray("results");
    for (JsonNode item : request.get("records")) {
      ObjectNode result = results.addObject();
      try {
        byte[] bytes = Base64.getDecoder().decode(item.asText());
        Object record = readV2.read(null, DecoderFactory.get().binaryDecoder(bytes, null));
        ByteArrayOutputStream json = new ByteArrayOutputStream();
        JsonEncoder encoder = EncoderFactory.get().jsonEncoder(v2, json);
        writeV2.write(record, encoder);
        encoder.flush();
        JsonNode tree = MAPPER.readTree(json.toByteArray());
        JsonNode out = expr.evaluate(tree, 60000, 1000);
        if (out == null) {
          out = tree; // JsonataExecutor: an undefined result leaves the message as it was
        }
        byte[] text = MAPPER.writeValueAsBytes(out);
        Object v1Record = readV1.read(
            null, DecoderFactory.get().jsonDecoder(v1, new ByteArrayInputStream(text)));
        ByteArrayOutputStream binary = new ByteArrayOutputStream();
        BinaryEncoder be = EncoderFactory.get().binaryEncoder(binary, null);
        writeV1.write(v1Record, be);
        be.flush();
        result.put("ok", Base64.getEncoder().encodeToString(binary.toByteArray()));
      } catch (Exception | StackOverflowError e) {
        String message = e.getClass().getSimpleName() + ": " + e.getMessage();
        Throwable cause = e.getCause();
        if (cause != null && cause != e) {
          message += " (" + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")";
        }
        result.put("error", message);
      }
    }
    System.out.write(MAPPER.writeValueAsBytes(answer));
    System.out.write('\n');
    System.out.flush();
  }
}
