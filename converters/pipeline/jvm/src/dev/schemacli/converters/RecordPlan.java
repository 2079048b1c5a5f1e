package dev.schemacli.converters;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;

/**
 * The fast road's record transform: a mapping compiled by {@code converters.mapping.recordplan}
 * into a small plan (JSON), interpreted here on Avro's generic records - decode the v2 bytes with
 * the writer schema of the id in the Confluent header into the mapping's v2 schema, compute each
 * v1 field, encode v1 and frame it with v1's id. The same semantics as the mapping's Spark SQL
 * (the Python side only plans mappings whose every rule it has here; a CI test proves the two
 * roads give the same bytes and the same dead-letter decisions).
 *
 * <p>Operations, one per v1 field in v1's order: {@code copy} (the same type), {@code promote}
 * (int/long/float to a wider number, Spark's CAST), {@code parse} (string to float or double,
 * Spark's {@code try_cast}, a finite number only: NaN, ±Infinity and overflow fail, -0 is 0;
 * a failure dead-letters the record with the SQL road's reason), {@code parse_int} (string to
 * int or long), {@code literal} (a constant), {@code enum} and {@code fixed} (re-typed as v1's),
 * {@code decimal} (Spark's DECIMAL(p, s) round trip). A nullable v2 field's null is handled
 * before the operation, by the field's {@code if_null}: null, a dead letter with the SQL road's
 * reason, or a default.
 */
final class RecordPlan implements Serializable {
  private static final long serialVersionUID = 1L;

  final String json;
  final String targetTopic;
  final String deadLetterTopic;

  RecordPlan(String json) {
    this.json = json;
    JsonNode root = read(json);
    this.targetTopic = root.get("target_topic").asText();
    this.deadLetterTopic = root.get("dead_letter_topic").asText();
  }

  private static JsonNode read(String json) {
    try {
      return new ObjectMapper().readTree(json);
    } catch (IOException e) {
      throw new IllegalArgumentException("bad record plan: " + e.getMessage(), e);
    }
  }

  /** The result of one value: v1 bytes, or why it is a dead letter and at which stage. */
  static final class Result {
    byte[] value;
    String origin; // the writer's "subject/version" (the marker)
    String error;
    String stage;
  }

  /** The interpreter, one per task (decoders and buffers are reused, not shared). */
  static final class Transform {
    private static final int COPY = 0;
    private static final int PROMOTE = 1;
    private static final int PARSE = 2;
    private static final int LITERAL = 3;
    private static final int ENUM = 4; // an enum symbol, as v1's enum
    private static final int FIXED = 5; // a fixed's bytes, as v1's fixed (the same size)
    private static final int DECIMAL = 6; // a decimal, Spark's DECIMAL(p, s) round trip
    private static final int PARSE_INT = 7; // string to int/long, Spark's try_cast

    private final Map<Integer, GenericDatumReader<GenericRecord>> readers = new HashMap<>();
    private final Map<Integer, String> versions = new HashMap<>();
    private final String known;
    private final GenericDatumWriter<GenericRecord> writer;
    private final GenericData.Record v1;
    private final byte[] frame;
    private final int[] op;
    private final int[] source; // position in the v2 record
    private final String[] to; // the v1 kind for promote/parse
    private final Object[] literal;
    private final String[] reasonHead;
    private final String[] reasonTail;
    // a null v2 value (a nullable v2 field): 0 never null, else null / dead letter / default
    private final int[] ifNull;
    private final String[] nullReason;
    private final Object[] nullValue;
    private final Schema[] v1Type; // the v1 field's type without its null branch
    private final int[] precision; // a decimal's
    private final boolean[] failDefault; // parse_int with on_error: default
    private final Object[] failValue;
    private final String corruptWhy;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    private BinaryDecoder decoder;
    private BinaryEncoder encoder;
    private GenericRecord decoded;

    Transform(RecordPlan plan) {
      JsonNode root = read(plan.json);
      Schema reader = new Schema.Parser().parse(root.get("reader_schema").asText());
      Schema target = new Schema.Parser().parse(root.get("target_schema").asText());
      List<Integer> ids = new ArrayList<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = root.get("writers").fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> w = it.next();
        int id = Integer.parseInt(w.getKey());
        ids.add(id);
        Schema ws = new Schema.Parser().parse(w.getValue().get("schema").asText());
        readers.put(id, new GenericDatumReader<>(ws, reader));
        versions.put(id, w.getValue().get("version").asText());
      }
      ids.sort(null);
      StringBuilder k = new StringBuilder();
      for (int id : ids) {
        k.append(k.length() == 0 ? "" : ", ").append(id);
      }
      known = k.toString();
      corruptWhy = root.get("corrupt_why").asText();
      writer = new GenericDatumWriter<>(target);
      v1 = new GenericData.Record(target);
      int id = root.get("target_id").asInt();
      frame = new byte[] {0, (byte) (id >>> 24), (byte) (id >>> 16), (byte) (id >>> 8), (byte) id};
      JsonNode fields = root.get("fields");
      int n = fields.size();
      op = new int[n];
      source = new int[n];
      to = new String[n];
      literal = new Object[n];
      reasonHead = new String[n];
      reasonTail = new String[n];
      ifNull = new int[n];
      nullReason = new String[n];
      nullValue = new Object[n];
      v1Type = new Schema[n];
      precision = new int[n];
      failDefault = new boolean[n];
      failValue = new Object[n];
      for (int i = 0; i < n; i++) {
        JsonNode f = fields.get(i);
        String name = f.get("op").asText();
        switch (name) {
          case "copy" -> op[i] = COPY;
          case "promote" -> op[i] = PROMOTE;
          case "parse" -> op[i] = PARSE;
          case "literal" -> op[i] = LITERAL;
          case "enum" -> op[i] = ENUM;
          case "fixed" -> op[i] = FIXED;
          case "decimal" -> op[i] = DECIMAL;
          case "parse_int" -> op[i] = PARSE_INT;
          default -> throw new IllegalArgumentException("record plan: unknown op " + name);
        }
        if (f.has("source")) {
          Schema.Field sf = reader.getField(f.get("source").asText());
          if (sf == null) {
            throw new IllegalArgumentException("record plan: no v2 field " + f.get("source"));
          }
          source[i] = sf.pos();
        }
        to[i] = f.has("to") ? f.get("to").asText() : null;
        if (op[i] == LITERAL) {
          literal[i] = literal(f.get("value"), target.getFields().get(i).schema());
        }
        reasonHead[i] = f.has("reason_head") ? f.get("reason_head").asText() : null;
        reasonTail[i] = f.has("reason_tail") ? f.get("reason_tail").asText() : null;
        ifNull[i] = ifNull(f, target.getFields().get(i).schema(), i);
        v1Type[i] = nonNull(target.getFields().get(i).schema());
        precision[i] = f.has("precision") ? f.get("precision").asInt() : 0;
        if (f.has("on_fail")) {
          failDefault[i] = true;
          failValue[i] = literal(f.get("fail_value"), target.getFields().get(i).schema());
        }
      }
      if (n != target.getFields().size()) {
        throw new IllegalArgumentException("record plan: " + n + " fields for a v1 of "
            + target.getFields().size());
      }
    }

    private static Schema nonNull(Schema s) {
      if (s.getType() == Schema.Type.UNION) {
        for (Schema b : s.getTypes()) {
          if (b.getType() != Schema.Type.NULL) {
            return b;
          }
        }
      }
      return s;
    }

    private static final int NULL_NEVER = 0;
    private static final int NULL_WRITE = 1;
    private static final int NULL_FAIL = 2;
    private static final int NULL_DEFAULT = 3;

    /** What a null v2 value of field {@code i} becomes (the plan's {@code if_null}). */
    private int ifNull(JsonNode f, Schema v1Type, int i) {
      if (!f.has("if_null")) {
        return NULL_NEVER;
      }
      String how = f.get("if_null").asText();
      switch (how) {
        case "null":
          return NULL_WRITE;
        case "fail":
          nullReason[i] = f.get("null_reason").asText();
          return NULL_FAIL;
        case "default":
          nullValue[i] = literal(f.get("null_value"), v1Type);
          return NULL_DEFAULT;
        default:
          throw new IllegalArgumentException("record plan: unknown if_null " + how);
      }
    }

    private static Object literal(JsonNode v, Schema s) {
      if (s.getType() == Schema.Type.UNION) { // ["null", T] or [T, "null"]
        if (v.isNull()) {
          return null;
        }
        for (Schema b : s.getTypes()) {
          if (b.getType() != Schema.Type.NULL) {
            return literal(v, b);
          }
        }
      }
      switch (s.getType()) {
        case INT: return v.asInt();
        case LONG: return v.asLong();
        case FLOAT: return (float) v.asDouble();
        case DOUBLE: return v.asDouble();
        case BOOLEAN: return v.asBoolean();
        case STRING: return v.asText();
        case NULL: return null;
        default: throw new IllegalArgumentException("record plan: no literal of " + s);
      }
    }

    /** Convert one non-null v2 value into {@code r}. */
    void apply(byte[] value, Result r) {
      r.value = null;
      r.error = null;
      r.stage = null;
      r.origin = null;
      if (value.length < 5) {
        dead(r, "decode", "too short for the Confluent header: " + value.length
            + " bytes; need a magic byte 0x00 and a 4-byte schema id");
        return;
      }
      if (value[0] != 0) {
        dead(r, "decode", "wrong magic byte 0x" + String.format(Locale.ROOT, "%02X", value[0] & 0xff)
            + " (expected 0x00): not Confluent-framed Avro");
        return;
      }
      int id = ((value[1] & 0xff) << 24) | ((value[2] & 0xff) << 16) | ((value[3] & 0xff) << 8)
          | (value[4] & 0xff);
      GenericDatumReader<GenericRecord> reader = readers.get(id);
      if (reader == null) {
        dead(r, "decode", "unknown schema id " + id + " (known ids: " + known + ")");
        return;
      }
      try {
        decoder = DecoderFactory.get().binaryDecoder(value, 5, value.length - 5, decoder);
        decoded = reader.read(decoded, decoder);
      } catch (IOException | RuntimeException e) {
        dead(r, "decode", "undecodable Avro body for schema id " + id + corruptWhy);
        return;
      }
      StringBuilder reasons = null;
      for (int i = 0; i < op.length; i++) {
        if (ifNull[i] != NULL_NEVER && decoded.get(source[i]) == null) {
          if (ifNull[i] == NULL_FAIL) {
            reasons = reasons == null ? new StringBuilder() : reasons.append("; ");
            reasons.append(nullReason[i]);
          } else {
            v1.put(i, ifNull[i] == NULL_WRITE ? null : nullValue[i]);
          }
          continue;
        }
        switch (op[i]) {
          case COPY -> v1.put(i, decoded.get(source[i]));
          case PROMOTE -> v1.put(i, promote(decoded.get(source[i]), to[i]));
          case LITERAL -> v1.put(i, literal[i]);
          case ENUM -> v1.put(i, new GenericData.EnumSymbol(v1Type[i], decoded.get(source[i])));
          case FIXED -> v1.put(i, new GenericData.Fixed(v1Type[i],
              ((org.apache.avro.generic.GenericFixed) decoded.get(source[i])).bytes()));
          case PARSE_INT -> {
            String text = decoded.get(source[i]).toString();
            Object parsed = tryCastIntegral(text, "long".equals(to[i]));
            if (parsed != null) {
              v1.put(i, parsed);
            } else if (failDefault[i]) {
              v1.put(i, failValue[i]);
            } else {
              reasons = reasons == null ? new StringBuilder() : reasons.append("; ");
              reasons.append(reasonHead[i]).append(text).append(reasonTail[i]);
            }
          }
          case DECIMAL -> {
            Object d = decimal(decoded.get(source[i]), v1Type[i], precision[i]);
            if (d == null) { // what Spark's from_avro cannot read: the record is undecodable
              dead(r, "decode", "undecodable Avro body for schema id " + id + corruptWhy);
              return;
            }
            v1.put(i, d);
          }
          default -> { // PARSE
            String text = decoded.get(source[i]).toString();
            Object parsed; // no ?: here: it would unbox both to double
            if ("float".equals(to[i])) {
              parsed = tryCastFloat(text);
            } else {
              parsed = tryCastDouble(text);
            }
            if (parsed == null || !Double.isFinite(((Number) parsed).doubleValue())) {
              // the SQL road's nanvl(x * 0, NULL): NaN, ±Infinity and overflow fail
              reasons = reasons == null ? new StringBuilder() : reasons.append("; ");
              reasons.append(reasonHead[i]).append(text).append(reasonTail[i]);
            } else if ("float".equals(to[i])) {
              v1.put(i, (Float) parsed + 0.0f); // -0 is 0, as the SQL road's x + 0
            } else {
              v1.put(i, (Double) parsed + 0.0);
            }
          }
        }
      }
      if (reasons != null) {
        dead(r, "convert", reasons.toString());
        return;
      }
      out.reset();
      out.write(frame, 0, frame.length);
      encoder = EncoderFactory.get().binaryEncoder(out, encoder);
      try {
        writer.write(v1, encoder);
        encoder.flush();
      } catch (IOException e) {
        throw new IllegalStateException("v1 encode failed", e);
      }
      r.value = out.toByteArray();
      r.origin = versions.get(id);
    }

    /**
     * A decimal through Spark's DECIMAL(p, s) and back (from_avro, then to_avro): null when it has
     * more digits than {@code precision} or no bytes (Spark cannot read it); a bytes decimal
     * comes back as its unscaled value's shortest two's complement, a fixed one as it is.
     */
    private static Object decimal(Object v, Schema v1Type, int precision) {
      byte[] b;
      if (v instanceof org.apache.avro.generic.GenericFixed fixed) {
        b = fixed.bytes();
      } else {
        java.nio.ByteBuffer buf = ((java.nio.ByteBuffer) v).duplicate();
        b = new byte[buf.remaining()];
        buf.get(b);
      }
      if (b.length == 0) {
        return null;
      }
      java.math.BigInteger unscaled = new java.math.BigInteger(b);
      if (new java.math.BigDecimal(unscaled).precision() > precision) {
        return null;
      }
      if (v1Type.getType() == Schema.Type.FIXED) {
        return new GenericData.Fixed(v1Type, b);
      }
      return java.nio.ByteBuffer.wrap(unscaled.toByteArray());
    }

    private static void dead(Result r, String stage, String why) {
      r.stage = stage;
      r.error = why;
    }

    private static Object promote(Object v, String to) {
      Number n = (Number) v;
      return switch (to) {
        case "long" -> n.longValue();
        case "float" -> n.floatValue();
        default -> n.doubleValue();
      };
    }
  }

  /** Spark's {@code try_cast(s AS FLOAT)}: Java's parse, then Spark's special literals. */
  static Float tryCastFloat(String s) {
    try {
      return Float.parseFloat(s);
    } catch (NumberFormatException e) {
      Double special = special(s);
      return special == null ? null : special.floatValue();
    }
  }

  /** Spark's {@code try_cast(s AS DOUBLE)}. */
  static Double tryCastDouble(String s) {
    try {
      return Double.parseDouble(s);
    } catch (NumberFormatException e) {
      return special(s);
    }
  }

  /**
   * Spark's {@code try_cast(s AS INT|BIGINT)} (ANSI): ASCII whitespace and control characters
   * trimmed at both ends, an optional sign, ASCII digits only, in range; else null.
   */
  static Object tryCastIntegral(String s, boolean toLong) {
    int a = 0;
    int b = s.length();
    while (a < b && trimmed(s.charAt(a))) {
      a++;
    }
    while (b > a && trimmed(s.charAt(b - 1))) {
      b--;
    }
    int digits = a < b && (s.charAt(a) == '-' || s.charAt(a) == '+') ? a + 1 : a;
    if (digits == b) {
      return null;
    }
    for (int k = digits; k < b; k++) {
      char c = s.charAt(k);
      if (c < '0' || c > '9') {
        return null;
      }
    }
    java.math.BigInteger v = new java.math.BigInteger(s.substring(a, b));
    if (v.bitLength() > (toLong ? 63 : 31)) {
      return null;
    }
    return toLong ? (Object) v.longValue() : (Object) v.intValue();
  }

  /** What Spark's UTF8String trims, byte by byte: ASCII whitespace and control characters. */
  private static boolean trimmed(char c) {
    return c <= ' ' || c == 0x7f;
  }

  private static Double special(String s) {
    switch (s.trim().toLowerCase(Locale.ROOT)) {
      case "inf", "+inf", "infinity", "+infinity":
        return Double.POSITIVE_INFINITY;
      case "-inf", "-infinity":
        return Double.NEGATIVE_INFINITY;
      case "nan":
        return Double.NaN;
      default:
        return null;
    }
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
