package dev.schemacli.converters;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
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
 * {@code decimal} (Spark's DECIMAL(p, s) round trip; a copied value with decimals or maps
 * inside takes Spark's round trip of each, on a copy: the datum reader reuses the decoded one).
 * A nullable v2 field's null is handled before the operation, by the field's {@code if_null}:
 * null, a dead letter with the SQL road's reason, or a default.
 *
 * <p>A record whose writer schema is the mapping's v2 schema is read in place ({@link InPlace}:
 * its bytes walked and copied, no objects); any other, or one the walk does not take as
 * written, by Avro's datum reader and writer here. Both give the same bytes.
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

  /** One v1 field's operation, as the plan gives it and as both readings of a record use it. */
  static final class FieldOp {
    int op;
    int source; // position in the v2 record
    String to; // the v1 kind for promote/parse
    Object literal;
    String reasonHead;
    String reasonTail;
    int ifNull; // a null v2 value (a nullable v2 field): 0 never null, else null / dead letter / default
    String nullReason;
    Object nullValue;
    Schema v1Type; // the v1 field's type without its null branch
    Schema v2Type; // the v2 field's type without its null branch
    int precision; // a decimal's (as Avro reads the v2 schema)
    boolean roundTrip; // a copied value with decimals or maps inside: Spark's round trip of each
    boolean failDefault; // parse_int with on_error: default
    Object failValue;
    // what the in-place reading writes (InPlace): the v1 field's bytes of each constant, the
    // index of v1's value and null branches (-1: v1's field is no union), v2's enum symbol -> v1's
    byte[] literalBytes;
    byte[] nullValueBytes;
    byte[] failValueBytes;
    int v1ValueIndex = -1;
    int v1NullIndex = -1;
    int[] enumMap;
  }

  /** The interpreter, one per task (decoders and buffers are reused, not shared). */
  static final class Transform {
    static final int COPY = 0;
    static final int PROMOTE = 1;
    static final int PARSE = 2;
    static final int LITERAL = 3;
    static final int ENUM = 4; // an enum symbol, as v1's enum
    static final int FIXED = 5; // a fixed's bytes, as v1's fixed (the same size)
    static final int DECIMAL = 6; // a decimal, Spark's DECIMAL(p, s) round trip
    static final int PARSE_INT = 7; // string to int/long, Spark's try_cast
    static final int NULL_NEVER = 0;
    static final int NULL_WRITE = 1;
    static final int NULL_FAIL = 2;
    static final int NULL_DEFAULT = 3;

    /** A writer schema's reading: Avro's datum reader, in place where its schema allows. */
    private static final class Writer {
      final GenericDatumReader<GenericRecord> reader;
      final InPlace inPlace; // null: its records take the datum reader
      final String version;
      // the record the datum reader reads into, reused from record to record as Spark's
      // from_avro reuses its own (one per writer schema): a map's table grows across records
      // and the order of its entries with it, which the SQL road's v1 bytes show
      GenericRecord decoded;

      Writer(GenericDatumReader<GenericRecord> reader, InPlace inPlace, String version) {
        this.reader = reader;
        this.inPlace = inPlace;
        this.version = version;
      }
    }

    private final Map<Integer, Writer> writers = new HashMap<>();
    // a copied value holds a map: every record of a writer goes through its datum reader, those
    // the loop guard skips too, as the SQL road's from_avro reads them (see Writer.decoded)
    private final boolean maps;
    private final String known;
    private final GenericDatumWriter<GenericRecord> writer;
    private final GenericData.Record v1;
    private final byte[] frame;
    private final FieldOp[] ops;
    private final String corruptWhy;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    private BinaryDecoder decoder;
    private BinaryEncoder encoder;
    // the last writer id seen and its reading (a batch is mostly one writer: no map lookups)
    private int lastId;
    private Writer last;

    Transform(RecordPlan plan) {
      JsonNode root = read(plan.json);
      // records are read in place where the writer allows, unless the plan says not to (tests
      // and benches compare the two readings)
      boolean inPlace = !root.has("in_place") || root.get("in_place").asBoolean();
      Schema reader = new Schema.Parser().parse(root.get("reader_schema").asText());
      Schema target = new Schema.Parser().parse(root.get("target_schema").asText());
      String readerForm = SchemaNormalization.toParsingForm(reader);
      corruptWhy = root.get("corrupt_why").asText();
      writer = new GenericDatumWriter<>(target);
      v1 = new GenericData.Record(target);
      int id = root.get("target_id").asInt();
      frame = new byte[] {0, (byte) (id >>> 24), (byte) (id >>> 16), (byte) (id >>> 8), (byte) id};
      JsonNode fields = root.get("fields");
      int n = fields.size();
      if (n != target.getFields().size()) {
        throw new IllegalArgumentException("record plan: " + n + " fields for a v1 of "
            + target.getFields().size());
      }
      ops = new FieldOp[n];
      for (int i = 0; i < n; i++) {
        ops[i] = fieldOp(fields.get(i), reader, target.getFields().get(i).schema());
      }
      boolean hasMaps = false;
      for (FieldOp o : ops) {
        hasMaps |= o.roundTrip && InPlace.hasMap(InPlace.shape(o.v2Type));
      }
      maps = hasMaps;
      InPlace direct = inPlace && !maps ? new InPlace(reader, ops) : null;
      List<Integer> ids = new ArrayList<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = root.get("writers").fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> w = it.next();
        int wid = Integer.parseInt(w.getKey());
        ids.add(wid);
        Schema ws = new Schema.Parser().parse(w.getValue().get("schema").asText());
        // where the writer's bytes are the reader's (no resolution), they are read in place
        boolean same = SchemaNormalization.toParsingForm(ws).equals(readerForm);
        writers.put(wid, new Writer(new GenericDatumReader<>(ws, reader), same ? direct : null,
            w.getValue().get("version").asText()));
      }
      ids.sort(null);
      StringBuilder k = new StringBuilder();
      for (int wid : ids) {
        k.append(k.length() == 0 ? "" : ", ").append(wid);
      }
      known = k.toString();
    }

    private FieldOp fieldOp(JsonNode f, Schema reader, Schema v1Field) {
      FieldOp o = new FieldOp();
      String name = f.get("op").asText();
      switch (name) {
        case "copy" -> o.op = COPY;
        case "promote" -> o.op = PROMOTE;
        case "parse" -> o.op = PARSE;
        case "literal" -> o.op = LITERAL;
        case "enum" -> o.op = ENUM;
        case "fixed" -> o.op = FIXED;
        case "decimal" -> o.op = DECIMAL;
        case "parse_int" -> o.op = PARSE_INT;
        default -> throw new IllegalArgumentException("record plan: unknown op " + name);
      }
      o.v1Type = nonNull(v1Field);
      if (f.has("source")) {
        Schema.Field sf = reader.getField(f.get("source").asText());
        if (sf == null) {
          throw new IllegalArgumentException("record plan: no v2 field " + f.get("source"));
        }
        o.source = sf.pos();
        o.v2Type = nonNull(sf.schema());
        o.precision = InPlace.decimalPrecision(o.v2Type);
        InPlace.Shape shape = InPlace.shape(o.v2Type);
        o.roundTrip = o.op == COPY && (!shape.plain || InPlace.hasMap(shape));
      }
      if (o.op == DECIMAL && o.precision == 0) { // Avro ignores the decimal (invalid): so does Spark
        o.op = o.v2Type.getType() == Schema.Type.FIXED ? FIXED : COPY;
      }
      o.to = f.has("to") ? f.get("to").asText() : null;
      if (o.op == LITERAL) {
        o.literal = literal(f.get("value"), v1Field);
        o.literalBytes = encoded(v1Field, o.literal);
      }
      o.reasonHead = f.has("reason_head") ? f.get("reason_head").asText() : null;
      o.reasonTail = f.has("reason_tail") ? f.get("reason_tail").asText() : null;
      o.ifNull = ifNull(f, v1Field, o);
      if (f.has("on_fail")) {
        o.failDefault = true;
        o.failValue = literal(f.get("fail_value"), v1Field);
        o.failValueBytes = encoded(v1Field, o.failValue);
      }
      if (v1Field.getType() == Schema.Type.UNION) {
        List<Schema> branches = v1Field.getTypes();
        for (int b = 0; b < branches.size(); b++) {
          if (branches.get(b).getType() == Schema.Type.NULL) {
            o.v1NullIndex = b;
          } else {
            o.v1ValueIndex = b;
          }
        }
      }
      if (o.op == ENUM) {
        List<String> symbols = o.v2Type.getEnumSymbols();
        o.enumMap = new int[symbols.size()];
        for (int s = 0; s < symbols.size(); s++) {
          o.enumMap[s] = o.v1Type.getEnumOrdinal(symbols.get(s));
        }
      }
      return o;
    }

    /** The bytes Avro's writer gives {@code value} as a value of {@code schema}. */
    private static byte[] encoded(Schema schema, Object value) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      BinaryEncoder e = EncoderFactory.get().binaryEncoder(bytes, null);
      try {
        new GenericDatumWriter<Object>(schema).write(value, e);
        e.flush();
      } catch (IOException ex) {
        throw new IllegalStateException("record plan: cannot encode " + value, ex);
      }
      return bytes.toByteArray();
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

    /** What a null v2 value of field {@code o} becomes (the plan's {@code if_null}). */
    private static int ifNull(JsonNode f, Schema v1Field, FieldOp o) {
      if (!f.has("if_null")) {
        return NULL_NEVER;
      }
      String how = f.get("if_null").asText();
      switch (how) {
        case "null":
          return NULL_WRITE;
        case "fail":
          o.nullReason = f.get("null_reason").asText();
          return NULL_FAIL;
        case "default":
          o.nullValue = literal(f.get("null_value"), v1Field);
          o.nullValueBytes = encoded(v1Field, o.nullValue);
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

    /** Whether {@code value} is read in place (a framed body of a writer that allows it). */
    boolean readsInPlace(byte[] value) {
      if (value.length < 5 || value[0] != 0) {
        return false;
      }
      Writer w = writers.get(((value[1] & 0xff) << 24) | ((value[2] & 0xff) << 16)
          | ((value[3] & 0xff) << 8) | (value[4] & 0xff));
      return w != null && w.inPlace != null && w.inPlace.convert(value, frame, new Result());
    }

    /**
     * A framed value the loop guard skips: read as the SQL road's from_avro reads it when a
     * copied map's entry order depends on the records before (else nothing to do).
     */
    void skipped(byte[] value) {
      Writer w = maps ? writer(value) : null;
      if (w != null) {
        try {
          decoder = DecoderFactory.get().binaryDecoder(value, 5, value.length - 5, decoder);
          w.decoded = w.reader.read(w.decoded, decoder);
        } catch (IOException | RuntimeException e) {
          // undecodable: what from_avro read of it before failing stays in the record, as there
        }
      }
    }

    /** The reading of a framed value's writer id; null when unframed or of no known writer. */
    private Writer writer(byte[] value) {
      if (value == null || value.length < 5 || value[0] != 0) {
        return null;
      }
      int id = ((value[1] & 0xff) << 24) | ((value[2] & 0xff) << 16) | ((value[3] & 0xff) << 8)
          | (value[4] & 0xff);
      if (last == null || id != lastId) {
        Writer w = writers.get(id);
        if (w == null) {
          return null;
        }
        last = w;
        lastId = id;
      }
      return last;
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
      Writer w = writer(value);
      if (w == null) {
        int id = ((value[1] & 0xff) << 24) | ((value[2] & 0xff) << 16) | ((value[3] & 0xff) << 8)
            | (value[4] & 0xff);
        dead(r, "decode", "unknown schema id " + id + " (known ids: " + known + ")");
        return;
      }
      int id = lastId;
      if (w.inPlace != null && w.inPlace.convert(value, frame, r)) {
        if (r.error == null) {
          r.origin = w.version;
        }
        return;
      }
      GenericRecord decoded;
      try {
        decoder = DecoderFactory.get().binaryDecoder(value, 5, value.length - 5, decoder);
        decoded = w.reader.read(w.decoded, decoder);
        w.decoded = decoded;
      } catch (IOException | RuntimeException e) {
        dead(r, "decode", "undecodable Avro body for schema id " + id + corruptWhy);
        return;
      }
      StringBuilder reasons = null;
      for (int i = 0; i < ops.length; i++) {
        FieldOp o = ops[i];
        if (o.ifNull != NULL_NEVER && decoded.get(o.source) == null) {
          if (o.ifNull == NULL_FAIL) {
            reasons = reasons == null ? new StringBuilder() : reasons.append("; ");
            reasons.append(o.nullReason);
          } else {
            v1.put(i, o.ifNull == NULL_WRITE ? null : o.nullValue);
          }
          continue;
        }
        switch (o.op) {
          case COPY -> {
            Object copied = decoded.get(o.source);
            if (o.roundTrip) {
              copied = sparkRoundTrip(copied, o.v2Type);
            }
            if (copied == UNREADABLE) {
              dead(r, "decode", "undecodable Avro body for schema id " + id + corruptWhy);
              return;
            }
            v1.put(i, copied);
          }
          case PROMOTE -> v1.put(i, promote(decoded.get(o.source), o.to));
          case LITERAL -> v1.put(i, o.literal);
          case ENUM -> v1.put(i, new GenericData.EnumSymbol(o.v1Type, decoded.get(o.source)));
          case FIXED -> v1.put(i, new GenericData.Fixed(o.v1Type,
              ((org.apache.avro.generic.GenericFixed) decoded.get(o.source)).bytes()));
          case PARSE_INT -> {
            String text = decoded.get(o.source).toString();
            Object parsed = tryCastIntegral(text, "long".equals(o.to));
            if (parsed != null) {
              v1.put(i, parsed);
            } else if (o.failDefault) {
              v1.put(i, o.failValue);
            } else {
              reasons = reasons == null ? new StringBuilder() : reasons.append("; ");
              reasons.append(o.reasonHead).append(text).append(o.reasonTail);
            }
          }
          case DECIMAL -> {
            Object d = decimal(decoded.get(o.source), o.v1Type, o.precision);
            if (d == null) { // what Spark's from_avro cannot read: the record is undecodable
              dead(r, "decode", "undecodable Avro body for schema id " + id + corruptWhy);
              return;
            }
            v1.put(i, d);
          }
          default -> { // PARSE
            String text = decoded.get(o.source).toString();
            Object parsed; // no ?: here: it would unbox both to double
            if ("float".equals(o.to)) {
              parsed = tryCastFloat(text);
            } else {
              parsed = tryCastDouble(text);
            }
            if (parsed == null || !Double.isFinite(((Number) parsed).doubleValue())) {
              // the SQL road's nanvl(x * 0, NULL): NaN, ±Infinity and overflow fail
              reasons = reasons == null ? new StringBuilder() : reasons.append("; ");
              reasons.append(o.reasonHead).append(text).append(o.reasonTail);
            } else if ("float".equals(o.to)) {
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
      r.origin = w.version;
    }

    private static final Object UNREADABLE = new Object();

    /**
     * A copied value as Spark's row round trip gives it back, the decoded value left as it is
     * (the datum reader reuses it): each map a new {@code HashMap} of {@code String} keys of its
     * size, filled in the decoded map's order (to_avro's map), each decimal Spark's; the
     * containers on the way copied. {@link #UNREADABLE} when Spark cannot read a decimal.
     */
    private static Object sparkRoundTrip(Object v, Schema s) {
      if (v == null) {
        return null;
      }
      switch (s.getType()) {
        case UNION:
          return sparkRoundTrip(v, s.getTypes().get(GenericData.get().resolveUnion(s, v)));
        case RECORD: {
          GenericRecord record = (GenericRecord) v;
          GenericData.Record copy = new GenericData.Record(s);
          for (Schema.Field f : s.getFields()) {
            Object x = sparkRoundTrip(record.get(f.pos()), f.schema());
            if (x == UNREADABLE) {
              return UNREADABLE;
            }
            copy.put(f.pos(), x);
          }
          return copy;
        }
        case ARRAY: {
          List<?> items = (List<?>) v;
          List<Object> copy = new ArrayList<>(items.size());
          for (Object item : items) {
            Object x = sparkRoundTrip(item, s.getElementType());
            if (x == UNREADABLE) {
              return UNREADABLE;
            }
            copy.add(x);
          }
          return copy;
        }
        case MAP: {
          Map<?, ?> map = (Map<?, ?>) v;
          Map<String, Object> copy = new HashMap<>(map.size());
          for (Map.Entry<?, ?> e : map.entrySet()) {
            Object x = sparkRoundTrip(e.getValue(), s.getValueType());
            if (x == UNREADABLE) {
              return UNREADABLE;
            }
            copy.put(e.getKey().toString(), x);
          }
          return copy;
        }
        case BYTES:
        case FIXED: {
          int precision = InPlace.decimalPrecision(s);
          if (precision == 0) {
            return v;
          }
          Object d = decimal(v, s, precision);
          return d == null ? UNREADABLE : d;
        }
        default:
          return v;
      }
    }

    /**
     * A decimal through Spark's DECIMAL(p, s) and back (from_avro, then to_avro), as a value of
     * {@code type} (bytes or a fixed): null when Spark cannot read it ({@link #sparkDecimal}).
     */
    private static Object decimal(Object v, Schema type, int precision) {
      byte[] b;
      if (v instanceof org.apache.avro.generic.GenericFixed fixed) {
        b = fixed.bytes();
      } else {
        java.nio.ByteBuffer buf = ((java.nio.ByteBuffer) v).duplicate();
        b = new byte[buf.remaining()];
        buf.get(b);
      }
      boolean isFixed = type.getType() == Schema.Type.FIXED;
      byte[] back = sparkDecimal(b, 0, b.length, precision, isFixed ? type.getFixedSize() : -1);
      if (back == null) {
        return null;
      }
      return isFixed ? new GenericData.Fixed(type, back) : java.nio.ByteBuffer.wrap(back);
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

  private static final long[] POW10 = new long[19];

  static {
    POW10[0] = 1;
    for (int i = 1; i < POW10.length; i++) {
      POW10[i] = POW10[i - 1] * 10;
    }
  }

  /**
   * A decimal's two's-complement bytes ({@code n} at {@code off}) through Spark's DECIMAL(p, s)
   * and back, as from_avro and to_avro do it: the bytes to_avro writes - a bytes decimal's
   * shortest form, or {@code fixedSize} bytes - or null when from_avro cannot read it (no
   * bytes, or more digits than the precision). Up to 18 digits Spark keeps the unscaled value in
   * a long, so it reads the low 64 bits of a longer value ({@code BigInteger.longValue()}).
   */
  static byte[] sparkDecimal(byte[] b, int off, int n, int precision, int fixedSize) {
    if (n == 0) {
      return null; // new BigInteger(new byte[0]) throws: from_avro cannot read it
    }
    if (precision <= 18) {
      long v = n < 8 && b[off] < 0 ? -1L : 0L;
      for (int k = Math.max(0, n - 8); k < n; k++) {
        v = (v << 8) | (b[off + k] & 0xff);
      }
      if (v <= -POW10[precision] || v >= POW10[precision]) {
        return null;
      }
      int size = fixedSize >= 0 ? fixedSize : (64 - Long.numberOfLeadingZeros(v ^ (v >> 63))) / 8 + 1;
      byte[] out = new byte[size];
      for (int k = size - 1; k >= 0; k--) {
        out[k] = (byte) v;
        v >>= 8;
      }
      return out;
    }
    java.math.BigInteger unscaled = new java.math.BigInteger(b, off, n);
    if (unscaled.abs().compareTo(java.math.BigInteger.TEN.pow(precision)) >= 0) {
      return null;
    }
    return fixedSize >= 0 ? Arrays.copyOfRange(b, off, off + n) : unscaled.toByteArray();
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
