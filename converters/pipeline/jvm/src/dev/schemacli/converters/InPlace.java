package dev.schemacli.converters;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.LogicalType;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryData;

/**
 * The fast road's reading of a v2 record in place: when a message's writer schema is the
 * mapping's v2 schema (the same Parsing Canonical Form, so reading it is no resolution), its
 * bytes are walked where they are - every value checked as Avro's decoder reads it - and the v1
 * record is written from them: a copied value's bytes as they are, a converted one decoded and
 * encoded alone. No record, string or buffer object is made per message, which is what Avro's
 * datum reader and writer spend most of the fast road's time on (bench/README.md, issue #39).
 *
 * <p>It gives the bytes the {@link RecordPlan.Transform}'s datum reader and writer give, or
 * gives up: anything it does not take as written - a varint in more bytes than it needs, an
 * array or map in more than one block, a boolean byte other than 0 and 1, an index out of
 * range, a truncated body, a decimal Spark cannot read - makes {@link #convert} return false,
 * and the record takes the datum reader's road, which decides it (the dead letter of an
 * undecodable body among them). So the two can differ only in speed.
 */
final class InPlace {
  static final int NULL = 0;
  static final int BOOLEAN = 1;
  static final int INT = 2;
  static final int LONG = 3;
  static final int FLOAT = 4;
  static final int DOUBLE = 5;
  static final int BYTES = 6;
  static final int STRING = 7;
  static final int FIXED = 8;
  static final int ENUM = 9;
  static final int ARRAY = 10;
  static final int MAP = 11;
  static final int UNION = 12;
  static final int RECORD = 13;

  /** Not taken as written: the datum reader's road decides the record. */
  private static final class GiveUp extends RuntimeException {
    private static final long serialVersionUID = 1L;

    GiveUp() {
      super(null, null, false, false);
    }
  }

  private static final GiveUp GIVE_UP = new GiveUp();

  /** A type as the walk reads it. */
  static final class Shape {
    int kind;
    int size; // a fixed's bytes, an enum's symbols
    Shape item; // an array's items, a map's values
    Shape[] children; // a record's fields, a union's branches
    int precision; // a decimal's (Spark's DECIMAL(p, s) round trip), else 0
    boolean plain; // no decimal inside: its bytes are copied as they are
  }

  /** The shape of {@code s} (named types walked once: a recursive type is a loop of shapes). */
  static Shape shape(Schema s) {
    Shape out = shape(s, new IdentityHashMap<>());
    plain(out, new IdentityHashMap<>());
    return out;
  }

  private static Shape shape(Schema s, Map<Schema, Shape> seen) {
    Shape known = seen.get(s);
    if (known != null) {
      return known;
    }
    Shape out = new Shape();
    seen.put(s, out);
    switch (s.getType()) {
      case NULL -> out.kind = NULL;
      case BOOLEAN -> out.kind = BOOLEAN;
      case INT -> out.kind = INT;
      case LONG -> out.kind = LONG;
      case FLOAT -> out.kind = FLOAT;
      case DOUBLE -> out.kind = DOUBLE;
      case BYTES -> out.kind = BYTES;
      case STRING -> out.kind = STRING;
      case FIXED -> {
        out.kind = FIXED;
        out.size = s.getFixedSize();
      }
      case ENUM -> {
        out.kind = ENUM;
        out.size = s.getEnumSymbols().size();
      }
      case ARRAY -> {
        out.kind = ARRAY;
        out.item = shape(s.getElementType(), seen);
      }
      case MAP -> {
        out.kind = MAP;
        out.item = shape(s.getValueType(), seen);
      }
      case UNION -> {
        out.kind = UNION;
        out.children = shapes(s.getTypes(), seen);
      }
      default -> { // RECORD
        out.kind = RECORD;
        List<Schema.Field> fields = s.getFields();
        out.children = new Shape[fields.size()];
        for (int i = 0; i < fields.size(); i++) {
          out.children[i] = shape(fields.get(i).schema(), seen);
        }
      }
    }
    out.precision = decimalPrecision(s);
    return out;
  }

  private static Shape[] shapes(List<Schema> types, Map<Schema, Shape> seen) {
    Shape[] out = new Shape[types.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = shape(types.get(i), seen);
    }
    return out;
  }

  /** A decimal's precision as Avro reads the schema (an invalid one is no decimal), else 0. */
  static int decimalPrecision(Schema s) {
    LogicalType t = s.getLogicalType();
    return t instanceof LogicalTypes.Decimal d ? d.getPrecision() : 0;
  }

  /** Whether a value of shape {@code s} may hold a map. */
  static boolean hasMap(Shape s) {
    return hasMap(s, new IdentityHashMap<>());
  }

  private static boolean hasMap(Shape s, Map<Shape, Boolean> seen) {
    if (s.kind == MAP) {
      return true;
    }
    if (seen.put(s, true) != null) {
      return false;
    }
    if (s.item != null && hasMap(s.item, seen)) {
      return true;
    }
    if (s.children != null) {
      for (Shape c : s.children) {
        if (hasMap(c, seen)) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean plain(Shape s, Map<Shape, Boolean> seen) {
    Boolean known = seen.get(s);
    if (known != null) {
      return known;
    }
    seen.put(s, true); // a loop adds nothing a walk of its members does not find
    boolean p = s.precision == 0;
    if (s.item != null) {
      p &= plain(s.item, seen);
    }
    if (s.children != null) {
      for (Shape c : s.children) {
        p &= plain(c, seen);
      }
    }
    s.plain = p;
    seen.put(s, p);
    return p;
  }

  private final Shape[] fields; // the v2 record's
  private final RecordPlan.FieldOp[] ops; // one per v1 field, in v1's order
  private final int[] start; // per v2 field: where its value starts (after a union's index)
  private final int[] end;
  private final boolean[] isNull;
  private final Shape[] read; // per v2 field: the shape of its value (a union's branch read)
  private byte[] in;
  private int pos;
  private int limit;
  private byte[] out = new byte[256];
  private int len;

  InPlace(Schema reader, RecordPlan.FieldOp[] ops) {
    Shape record = shape(reader);
    this.fields = record.children;
    this.ops = ops;
    this.start = new int[fields.length];
    this.end = new int[fields.length];
    this.isNull = new boolean[fields.length];
    this.read = new Shape[fields.length];
  }

  /**
   * Convert one body ({@code value[5:]}) into {@code r}: the framed v1 bytes, or the convert
   * stage's reasons; false when the datum reader's road must decide it ({@code r} untouched).
   */
  boolean convert(byte[] value, byte[] frame, RecordPlan.Result r) {
    in = value;
    pos = 5;
    limit = value.length;
    len = 0;
    try {
      for (int i = 0; i < fields.length; i++) {
        Shape f = fields[i];
        read[i] = f.kind == UNION ? f.children[index(f.children.length)] : f;
        isNull[i] = read[i].kind == NULL;
        start[i] = pos;
        skip(read[i]);
        end[i] = pos;
      }
      write(frame, 0, frame.length);
      StringBuilder reasons = null;
      for (RecordPlan.FieldOp f : ops) {
        String why = field(f);
        if (why != null) {
          reasons = reasons == null ? new StringBuilder() : reasons.append("; ");
          reasons.append(why);
        }
      }
      if (reasons != null) {
        r.stage = "convert";
        r.error = reasons.toString();
        return true;
      }
      r.value = Arrays.copyOf(out, len);
      return true;
    } catch (GiveUp e) {
      return false;
    } finally {
      in = null;
    }
  }

  /** Write v1 field {@code f}; its failure's reason, or null. */
  private String field(RecordPlan.FieldOp f) {
    int i = f.source;
    if (f.op == RecordPlan.Transform.LITERAL) {
      write(f.literalBytes, 0, f.literalBytes.length);
      return null;
    }
    if (isNull[i]) {
      switch (f.ifNull) {
        case RecordPlan.Transform.NULL_WRITE -> writeInt(f.v1NullIndex);
        case RecordPlan.Transform.NULL_DEFAULT -> write(f.nullValueBytes, 0, f.nullValueBytes.length);
        case RecordPlan.Transform.NULL_FAIL -> {
          return f.nullReason;
        }
        default -> throw GIVE_UP; // a null the plan does not expect: the datum reader says why
      }
      return null;
    }
    pos = start[i];
    Shape s = read[i];
    switch (f.op) {
      case RecordPlan.Transform.COPY, RecordPlan.Transform.FIXED -> {
        valueIndex(f);
        if (s.plain) {
          write(in, start[i], end[i] - start[i]);
        } else {
          copy(s);
        }
      }
      case RecordPlan.Transform.ENUM -> {
        valueIndex(f);
        writeInt(f.enumMap[readInt()]);
      }
      case RecordPlan.Transform.PROMOTE -> {
        valueIndex(f);
        promote(s.kind, f.to);
      }
      case RecordPlan.Transform.DECIMAL -> {
        valueIndex(f);
        decimal(s);
      }
      case RecordPlan.Transform.PARSE_INT -> {
        String text = string();
        Object parsed = RecordPlan.tryCastIntegral(text, "long".equals(f.to));
        if (parsed != null) {
          valueIndex(f);
          if (parsed instanceof Long l) {
            writeLong(l);
          } else {
            writeInt((Integer) parsed);
          }
        } else if (f.failDefault) {
          write(f.failValueBytes, 0, f.failValueBytes.length);
        } else {
          return f.reasonHead + text + f.reasonTail;
        }
      }
      default -> { // PARSE
        String text = string();
        if ("float".equals(f.to)) {
          Float parsed = RecordPlan.tryCastFloat(text);
          if (parsed == null || !Float.isFinite(parsed)) {
            return f.reasonHead + text + f.reasonTail;
          }
          valueIndex(f);
          writeFloat(parsed + 0.0f); // -0 is 0, as the SQL road's x + 0
        } else {
          Double parsed = RecordPlan.tryCastDouble(text);
          if (parsed == null || !Double.isFinite(parsed)) {
            return f.reasonHead + text + f.reasonTail;
          }
          valueIndex(f);
          writeDouble(parsed + 0.0);
        }
      }
    }
    return null;
  }

  private void valueIndex(RecordPlan.FieldOp f) {
    if (f.v1ValueIndex >= 0) {
      writeInt(f.v1ValueIndex);
    }
  }

  private void promote(int from, String to) {
    switch (to) {
      case "long" -> writeLong(from == INT ? readInt() : readLong());
      case "float" -> writeFloat(from == INT ? (float) readInt() : (float) readLong());
      default -> { // double
        double d = switch (from) {
          case INT -> readInt();
          case LONG -> (double) readLong();
          default -> Float.intBitsToFloat(readFixedInt());
        };
        writeDouble(d);
      }
    }
  }

  /** A value copied into the output as it is, but for its decimals (Spark's round trip). */
  private void copy(Shape s) {
    if (s.plain) {
      int from = pos;
      skip(s);
      write(in, from, pos - from);
      return;
    }
    switch (s.kind) {
      case RECORD -> {
        for (Shape c : s.children) {
          copy(c);
        }
      }
      case UNION -> {
        int b = index(s.children.length);
        writeInt(b);
        copy(s.children[b]);
      }
      case ARRAY -> {
        long n = blockStart();
        if (n > 0) {
          writeLong(n);
          for (long k = 0; k < n; k++) {
            copy(s.item);
          }
          blockEnd();
        }
        writeLong(0);
      }
      case BYTES, FIXED -> decimal(s);
      default -> throw GIVE_UP; // a map: never copied on the fast road
    }
  }

  /** A decimal through Spark's DECIMAL(p, s) and back; gives up where Spark cannot read it. */
  private void decimal(Shape s) {
    int n = s.kind == FIXED ? s.size : length();
    byte[] back = RecordPlan.sparkDecimal(in, pos, n, s.precision, s.kind == FIXED ? s.size : -1);
    if (back == null) {
      throw GIVE_UP;
    }
    pos += n;
    if (s.kind != FIXED) {
      writeInt(back.length);
    }
    write(back, 0, back.length);
  }

  // -- reading: every value as Avro's binary decoder reads it, or give up ---------------------

  private void skip(Shape s) {
    switch (s.kind) {
      case NULL -> { }
      case BOOLEAN -> {
        need(1);
        if ((in[pos] & 0xfe) != 0) {
          throw GIVE_UP; // Avro reads any byte but 1 as false, and writes 0
        }
        pos++;
      }
      case INT -> readInt();
      case LONG -> readLong();
      case FLOAT -> {
        need(4);
        pos += 4;
      }
      case DOUBLE -> {
        need(8);
        pos += 8;
      }
      case BYTES, STRING -> {
        int n = length(); // before `pos +=` reads pos
        pos += n;
      }
      case FIXED -> {
        need(s.size);
        pos += s.size;
      }
      case ENUM -> index(s.size);
      case UNION -> skip(s.children[index(s.children.length)]);
      case RECORD -> {
        for (Shape c : s.children) {
          skip(c);
        }
      }
      case ARRAY -> {
        long n = blockStart();
        if (n > 0) {
          for (long k = 0; k < n; k++) {
            skip(s.item);
          }
          blockEnd();
        }
      }
      default -> { // MAP
        long n = blockStart();
        if (n > 0) {
          for (long k = 0; k < n; k++) {
            int key = length();
            pos += key;
            skip(s.item);
          }
          blockEnd();
        }
      }
    }
  }

  /** The item count of an array's or map's one block (Avro's writer writes one, then 0). */
  private long blockStart() {
    long n = readLong();
    if (n < 0 || n > limit - pos) {
      throw GIVE_UP;
    }
    return n;
  }

  private void blockEnd() {
    if (readLong() != 0) {
      throw GIVE_UP;
    }
  }

  private int index(int count) {
    int i = readInt();
    if (i < 0 || i >= count) {
      throw GIVE_UP;
    }
    return i;
  }

  private int length() {
    long n = readLong();
    if (n < 0 || n > limit - pos) {
      throw GIVE_UP;
    }
    return (int) n;
  }

  private String string() {
    int n = length();
    String s = n == 0 ? "" : new String(in, pos, n, StandardCharsets.UTF_8); // Utf8.toString()
    pos += n;
    return s;
  }

  private void need(int n) {
    if (n > limit - pos) {
      throw GIVE_UP;
    }
  }

  /** A zig-zag varint in its fewest bytes (5 at most, the 5th holding 4 bits). */
  private int readInt() {
    int v = 0;
    for (int shift = 0; ; shift += 7) {
      need(1);
      int b = in[pos++] & 0xff;
      v |= (b & 0x7f) << shift;
      if (b < 0x80) {
        if ((b == 0 && shift > 0) || (shift == 28 && b > 0x0f)) {
          throw GIVE_UP;
        }
        return (v >>> 1) ^ -(v & 1);
      }
      if (shift == 28) {
        throw GIVE_UP;
      }
    }
  }

  /** A zig-zag varint in its fewest bytes (10 at most, the 10th holding 1 bit). */
  private long readLong() {
    long v = 0;
    for (int shift = 0; ; shift += 7) {
      need(1);
      int b = in[pos++] & 0xff;
      v |= (long) (b & 0x7f) << shift;
      if (b < 0x80) {
        if ((b == 0 && shift > 0) || (shift == 63 && b > 1)) {
          throw GIVE_UP;
        }
        return (v >>> 1) ^ -(v & 1);
      }
      if (shift == 63) {
        throw GIVE_UP;
      }
    }
  }

  private int readFixedInt() {
    need(4);
    int v = (in[pos] & 0xff) | (in[pos + 1] & 0xff) << 8 | (in[pos + 2] & 0xff) << 16
        | (in[pos + 3] & 0xff) << 24;
    pos += 4;
    return v;
  }

  // -- writing: Avro's own encodings (BinaryData) ----------------------------------------------

  private void room(int n) {
    if (len + n > out.length) {
      out = Arrays.copyOf(out, Math.max(out.length * 2, len + n));
    }
  }

  private void write(byte[] b, int from, int n) {
    room(n);
    System.arraycopy(b, from, out, len, n);
    len += n;
  }

  private void writeInt(int v) {
    room(5);
    len += BinaryData.encodeInt(v, out, len);
  }

  private void writeLong(long v) {
    room(10);
    len += BinaryData.encodeLong(v, out, len);
  }

  private void writeFloat(float v) {
    room(4);
    len += BinaryData.encodeFloat(v, out, len);
  }

  private void writeDouble(double v) {
    room(8);
    len += BinaryData.encodeDouble(v, out, len);
  }
}
