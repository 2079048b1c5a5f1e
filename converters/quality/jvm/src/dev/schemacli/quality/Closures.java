package dev.schemacli.quality;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.ast.CelReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.apache.avro.Schema;
import org.apache.avro.util.Utf8;

/**
 * A rule's CEL, as CEL-Java checked it, compiled into a tree of closures (issue 40: CEL-Java's
 * interpreter was 83 % of {@code topics check}'s scan). The closures cover a subset (the one the
 * Spark road compiles to SQL, spark_avro/rules.py, less comprehensions): constants, the
 * variables, field selection, list literals, {@code && || ! ?:}, {@code == != < <= > >=},
 * arithmetic, {@code in}, indexing, {@code size}, {@code startsWith endsWith contains matches}
 * and the identity and int-to-double conversions.
 *
 * <p>A string field a size, an equality or an {@code in} with string constants, or a
 * {@code startsWith endsWith contains} of a constant reads is read in place, as Avro decoded it
 * (a {@code Utf8}, no String made: {@link #ascii}), when its bytes and the constants are ASCII:
 * then each of those answers is the bytes' own, and the String CEL-Java would be given gives the
 * same. Any other string is made a String first, as before.
 *
 * <p>They give a value only where CEL-Java surely gives that same value: a value of any class
 * they do not know (null, bytes, timestamps, records compared, mixed number types, ...), an
 * error of any kind (overflow, division by zero, a missing key, a bad pattern) or anything else
 * unusual throws {@link Fallback}, and the caller evaluates that evaluation with CEL-Java's
 * program instead, which then gives the value or the error, with its own words. An expression
 * outside the subset is not compiled at all ({@link #compile} gives null): CEL-Java runs it.
 * tests/integration/test_cel_compiled_equals_celjava.py runs both over the proof's corpus.
 */
final class Closures {
  private Closures() {}

  /** A compiled expression: its value given the variables ({@code message}, {@code value}...). */
  interface Node {
    Object eval(Map<String, Object> vars);
  }

  /** This evaluation is CEL-Java's to make (made once: no stack trace, no allocation). */
  static final class Fallback extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final Fallback INSTANCE = new Fallback();

    private Fallback() {
      super("fall back to CEL-Java", null, false, false);
    }
  }

  /** An expression outside the subset. */
  private static final class Outside extends Exception {
    private static final long serialVersionUID = 1L;

    Outside() {
      super(null, null, false, false);
    }
  }

  /** The checked expression as closures, or null when some part of it is outside the subset. */
  static Node compile(CelAbstractSyntaxTree ast) {
    if (!ast.isChecked()) return null;
    try {
      return new Closures.Compiler(ast).node(ast.getExpr());
    } catch (Outside e) {
      return null;
    }
  }

  private static Fallback fallback() {
    return Fallback.INSTANCE;
  }

  private static boolean bool(Object v) {
    if (v instanceof Boolean b) return b;
    throw fallback();
  }

  /**
   * A string read in place whose bytes are all ASCII, or null (any other value, or a string
   * with other bytes, which takes the String road). For such bytes the String is one char a
   * byte, so its size, equality, prefix, suffix and containment against ASCII constants are
   * the bytes': no malformed sequence or surrogate pair can stand for an ASCII char.
   */
  static Utf8 ascii(Object v) {
    if (v == null || v.getClass() != Utf8.class) return null;
    Utf8 u = (Utf8) v;
    byte[] b = u.getBytes();
    for (int i = 0, n = u.getByteLength(); i < n; i++) {
      if (b[i] < 0) return null;
    }
    return u;
  }

  /** A value as CEL-Java is given it: a string read in place made a String. */
  static Object text(Object v) {
    return v != null && v.getClass() == Utf8.class ? v.toString() : v;
  }

  /** A string constant's bytes when it is ASCII, else null (it is compared as a String). */
  private static byte[] asciiBytes(Object constant) {
    if (!(constant instanceof String s)) return null;
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) >= 0x80) return null;
    }
    return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  /** Whether the bytes of {@code u} from {@code at} hold {@code c}. */
  private static boolean region(Utf8 u, int at, byte[] c) {
    if (at < 0 || at + c.length > u.getByteLength()) return false;
    byte[] b = u.getBytes();
    for (int i = 0; i < c.length; i++) {
      if (b[at + i] != c[i]) return false;
    }
    return true;
  }

  /** {@code startsWith endsWith contains} (0..2) of ASCII bytes in ASCII bytes. */
  private static boolean has(Utf8 u, byte[] c, int which) {
    int n = u.getByteLength();
    if (which == 0) return region(u, 0, c);
    if (which == 1) return region(u, n - c.length, c);
    for (int at = 0; at + c.length <= n; at++) {
      if (region(u, at, c)) return true;
    }
    return false;
  }

  /** CEL-Java's equality as Confluent's options make it (Objects.equals), for scalars only. */
  static boolean equal(Object a, Object b) {
    if (a == null || b == null || a.getClass() != b.getClass()) throw fallback();
    if (a instanceof String || a instanceof Long || a instanceof Double || a instanceof Boolean) {
      return a.equals(b);
    }
    throw fallback();
  }

  /** The order of two values of one class, as CEL-Java's less_* and greater_* give it. */
  static int order(Object a, Object b) {
    if (a instanceof Long x && b instanceof Long y) return Long.compare(x, y);
    if (a instanceof String x && b instanceof String y) return x.compareTo(y);
    if (a instanceof Boolean x && b instanceof Boolean y) return Boolean.compare(x, y);
    throw fallback();
  }

  /** The field a select names, read from a record's view (its position kept per schema). */
  private static final class Select implements Node {
    /** A record schema and the field's position in it (final: safe to share among threads). */
    private record At(Schema schema, int pos) {}

    private final Node operand;
    private final String field;
    private final boolean inPlace; // a string is given as decoded (see Closures.ascii)
    private At at = new At(null, -1); // racy but safe: a stale one misses, never lies

    Select(Node operand, String field, boolean inPlace) {
      this.operand = operand;
      this.field = field;
      this.inPlace = inPlace;
    }

    @Override
    public Object eval(Map<String, Object> vars) {
      Object o = operand.eval(vars);
      if (o instanceof Engine.RecordView view) {
        Schema schema = view.schema();
        At known = at;
        if (known.schema() != schema) {
          Schema.Field f = schema.getField(field);
          if (f == null) throw fallback();
          known = new At(schema, f.pos());
          at = known;
        }
        return inPlace ? view.inPlace(known.pos()) : view.at(known.pos());
      }
      if (o instanceof Map<?, ?> map) {
        Object v = map.get(field);
        if (v == null) throw fallback();
        return v;
      }
      throw fallback();
    }
  }

  private static final class Compiler {
    private final CelAbstractSyntaxTree ast;

    Compiler(CelAbstractSyntaxTree ast) {
      this.ast = ast;
    }

    Node node(CelExpr e) throws Outside {
      switch (e.getKind()) {
        case CONSTANT: {
          Object v = constant(e.constant());
          return vars -> v;
        }
        case IDENT:
          return ident(e, false);
        case SELECT:
          return select(e, false);
        case LIST: {
          if (!e.list().optionalIndices().isEmpty()) throw new Outside();
          List<Node> items = new ArrayList<>();
          boolean constant = true;
          for (CelExpr item : e.list().elements()) {
            items.add(node(item));
            constant &= item.getKind() == CelExpr.ExprKind.Kind.CONSTANT;
          }
          if (constant) {
            List<Object> values = new ArrayList<>();
            for (Node n : items) values.add(n.eval(Map.of()));
            List<Object> fixed = java.util.Collections.unmodifiableList(values);
            return vars -> fixed;
          }
          Node[] nodes = items.toArray(new Node[0]);
          return vars -> {
            List<Object> out = new ArrayList<>(nodes.length);
            for (Node n : nodes) out.add(n.eval(vars));
            return out;
          };
        }
        case CALL:
          return call(e);
        default:
          throw new Outside(); // maps, structs, comprehensions: CEL-Java's
      }
    }

    /**
     * An operand whose string, when it is a variable or a field, may be given as decoded (a
     * {@code Utf8}): only for the calls that take it ({@link Closures#ascii}).
     */
    private Node inPlace(CelExpr e) throws Outside {
      return switch (e.getKind()) {
        case IDENT -> ident(e, true);
        case SELECT -> select(e, true);
        default -> node(e);
      };
    }

    private Node ident(CelExpr e, boolean inPlace) throws Outside {
      String name = e.ident().name();
      Optional<CelReference> ref = ast.getReference(e.id());
      if (ref.isPresent() && (ref.get().value().isPresent() || !name.equals(ref.get().name()))) {
        throw new Outside();
      }
      if ("now".equals(name)) throw new Outside();
      int slot = Engine.Vars.slot(name); // the engine's variables are read by slot
      return vars -> {
        Object v = slot >= 0 && vars instanceof Engine.Vars known
            ? (inPlace ? known.inPlace(slot) : known.at(slot))
            : vars.get(name);
        if (v == null) throw fallback();
        return v;
      };
    }

    private Node select(CelExpr e, boolean inPlace) throws Outside {
      if (e.select().testOnly() || ast.getReference(e.id()).isPresent()) throw new Outside();
      return new Select(node(e.select().operand()), e.select().field(), inPlace);
    }

    /** The value of a string constant expression, or null when it is none. */
    private static byte[] asciiConstant(CelExpr e) throws Outside {
      if (e.getKind() != CelExpr.ExprKind.Kind.CONSTANT) return null;
      if (e.constant().getKind() != CelConstant.Kind.STRING_VALUE) return null;
      return asciiBytes(constant(e.constant()));
    }

    /** A list literal of ASCII string constants, each one's bytes; else null. */
    private static byte[][] asciiConstants(CelExpr e) throws Outside {
      if (e.getKind() != CelExpr.ExprKind.Kind.LIST || !e.list().optionalIndices().isEmpty()) {
        return null;
      }
      List<CelExpr> items = e.list().elements();
      byte[][] out = new byte[items.size()][];
      for (int i = 0; i < out.length; i++) {
        out[i] = asciiConstant(items.get(i));
        if (out[i] == null) return null;
      }
      return out;
    }

    /**
     * {@code x == 'c'} or {@code x != 'c'} (either side the ASCII constant), with x's string
     * read in place; null when neither side is such a constant.
     */
    private Node equalsConstant(CelExpr.CelCall c, boolean negated) throws Outside {
      if (c.target().isPresent() || c.args().size() != 2) return null;
      CelExpr left = c.args().get(0);
      CelExpr right = c.args().get(1);
      byte[] bytes = asciiConstant(right);
      CelExpr other = left;
      if (bytes == null) {
        bytes = asciiConstant(left);
        other = right;
      }
      if (bytes == null) return null;
      byte[] fixed = bytes;
      String constant = new String(fixed, java.nio.charset.StandardCharsets.US_ASCII);
      Node x = inPlace(other);
      return vars -> {
        Object v = x.eval(vars);
        Utf8 u = ascii(v);
        boolean same = u != null
            ? u.getByteLength() == fixed.length && region(u, 0, fixed)
            : equal(text(v), constant);
        return negated != same;
      };
    }

    private static Object constant(CelConstant c) throws Outside {
      return switch (c.getKind()) {
        case BOOLEAN_VALUE -> c.booleanValue();
        case INT64_VALUE -> c.int64Value();
        case DOUBLE_VALUE -> c.doubleValue();
        case STRING_VALUE -> c.stringValue();
        default -> throw new Outside(); // null, uint, bytes: CEL-Java's own classes
      };
    }

    private Node call(CelExpr e) throws Outside {
      CelExpr.CelCall c = e.call();
      String fn = c.function();
      Node inPlace = inPlaceCall(c, fn);
      if (inPlace != null) return inPlace;
      List<Node> parts = new ArrayList<>();
      if (c.target().isPresent()) parts.add(node(c.target().get()));
      for (CelExpr a : c.args()) parts.add(node(a));
      int n = parts.size();
      Node a = n > 0 ? parts.get(0) : null;
      Node b = n > 1 ? parts.get(1) : null;
      switch (fn) {
        case "_&&_":
          return vars -> bool(a.eval(vars)) ? (Object) bool(b.eval(vars)) : Boolean.FALSE;
        case "_||_":
          return vars -> bool(a.eval(vars)) ? (Object) Boolean.TRUE : (Object) bool(b.eval(vars));
        case "!_":
          return vars -> !bool(a.eval(vars));
        case "_?_:_": {
          Node x = parts.get(2);
          return vars -> bool(a.eval(vars)) ? b.eval(vars) : x.eval(vars);
        }
        case "_==_":
          return vars -> equal(a.eval(vars), b.eval(vars));
        case "_!=_":
          return vars -> !equal(a.eval(vars), b.eval(vars));
        case "_<_":
          return compare(a, b, 0);
        case "_<=_":
          return compare(a, b, 1);
        case "_>_":
          return compare(a, b, 2);
        case "_>=_":
          return compare(a, b, 3);
        case "_+_", "_-_", "_*_", "_/_", "_%_":
          return arithmetic(fn, a, b);
        case "-_":
          return vars -> {
            Object v = a.eval(vars);
            if (v instanceof Long x) {
              if (x == Long.MIN_VALUE) throw fallback();
              return -x;
            }
            if (v instanceof Double x) return -x;
            throw fallback();
          };
        case "@in":
          return vars -> {
            Object v = a.eval(vars);
            Object in = b.eval(vars);
            if (!(v instanceof String || v instanceof Boolean)) throw fallback();
            if (in instanceof List<?> list) return list.contains(v);
            if (in instanceof Map<?, ?> map && v instanceof String) return map.get(v) != null;
            throw fallback();
          };
        case "_[_]":
          return vars -> {
            Object on = a.eval(vars);
            Object at = b.eval(vars);
            if (on instanceof List<?> list && at instanceof Long i) {
              if (i < 0 || i >= list.size()) throw fallback();
              return list.get((int) (long) i);
            }
            if (on instanceof Map<?, ?> map && at instanceof String key) {
              Object v = map.get(key);
              if (v == null) throw fallback();
              return v;
            }
            throw fallback();
          };
        case "size":
          if (n != 1) throw new Outside();
          return vars -> sizeOf(a.eval(vars));
        case "startsWith", "endsWith", "contains": {
          if (n != 2 || !c.target().isPresent()) throw new Outside();
          int which = fn.equals("startsWith") ? 0 : fn.equals("endsWith") ? 1 : 2;
          return vars -> {
            if (a.eval(vars) instanceof String s && b.eval(vars) instanceof String t) {
              return which == 0 ? s.startsWith(t) : which == 1 ? s.endsWith(t) : s.contains(t);
            }
            throw fallback();
          };
        }
        case "matches": {
          if (n != 2) throw new Outside();
          CelExpr re = c.target().isPresent() ? c.args().get(0) : c.args().get(1);
          Pattern fixed = null;
          if (re.getKind() == CelExpr.ExprKind.Kind.CONSTANT
              && re.constant().getKind() == CelConstant.Kind.STRING_VALUE) {
            try {
              fixed = Pattern.compile(re.constant().stringValue());
            } catch (RuntimeException bad) {
              throw new Outside(); // CEL-Java gives the error
            }
          }
          Pattern pattern = fixed;
          return vars -> {
            if (a.eval(vars) instanceof String s && b.eval(vars) instanceof String r) {
              Pattern p = pattern;
              if (p == null) {
                try {
                  p = Pattern.compile(r);
                } catch (RuntimeException bad) {
                  throw fallback();
                }
              }
              return p.matcher(s).matches();
            }
            throw fallback();
          };
        }
        case "double":
          if (n != 1) throw new Outside();
          return vars -> {
            Object v = a.eval(vars);
            if (v instanceof Double) return v;
            if (v instanceof Long x) return (double) x;
            throw fallback();
          };
        case "int":
          if (n != 1) throw new Outside();
          return vars -> {
            Object v = a.eval(vars);
            if (v instanceof Long) return v;
            throw fallback();
          };
        case "string":
          if (n != 1) throw new Outside();
          return vars -> {
            Object v = a.eval(vars);
            if (v instanceof String) return v;
            if (v instanceof Long x) return Long.toString(x);
            throw fallback();
          };
        case "dyn":
          if (n != 1) throw new Outside();
          return a;
        default:
          throw new Outside();
      }
    }

    /**
     * The calls that read a string operand in place (see {@link Closures#ascii}): {@code size},
     * {@code ==} and {@code !=} against an ASCII constant, {@code in} a list of them, and
     * {@code startsWith endsWith contains} of one; null for any other call (compiled as before).
     * Each gives what its String form gives: a string not ASCII is made a String first.
     */
    private Node inPlaceCall(CelExpr.CelCall c, String fn) throws Outside {
      switch (fn) {
        case "size": {
          CelExpr of;
          if (c.target().isPresent() && c.args().isEmpty()) of = c.target().get();
          else if (!c.target().isPresent() && c.args().size() == 1) of = c.args().get(0);
          else return null;
          Node x = inPlace(of);
          return vars -> {
            Object v = x.eval(vars);
            Utf8 u = ascii(v);
            return u != null ? (Object) (long) u.getByteLength() : sizeOf(text(v));
          };
        }
        case "_==_", "_!=_":
          return equalsConstant(c, fn.equals("_!=_"));
        case "@in": {
          if (c.target().isPresent() || c.args().size() != 2) return null;
          byte[][] all = asciiConstants(c.args().get(1));
          if (all == null) return null;
          Node x = inPlace(c.args().get(0));
          Node in = node(c.args().get(1));
          return vars -> {
            Object v = x.eval(vars);
            Utf8 u = ascii(v);
            if (u != null) {
              for (byte[] one : all) {
                if (u.getByteLength() == one.length && region(u, 0, one)) return true;
              }
              return false;
            }
            v = text(v);
            if (!(v instanceof String || v instanceof Boolean)) throw fallback();
            return ((List<?>) in.eval(vars)).contains(v);
          };
        }
        case "startsWith", "endsWith", "contains": {
          if (!c.target().isPresent() || c.args().size() != 1) return null;
          byte[] bytes = asciiConstant(c.args().get(0));
          if (bytes == null) return null;
          int which = fn.equals("startsWith") ? 0 : fn.equals("endsWith") ? 1 : 2;
          String constant = new String(bytes, java.nio.charset.StandardCharsets.US_ASCII);
          Node x = inPlace(c.target().get());
          return vars -> {
            Object v = x.eval(vars);
            Utf8 u = ascii(v);
            if (u != null) return has(u, bytes, which);
            if (text(v) instanceof String s) {
              return which == 0 ? s.startsWith(constant)
                  : which == 1 ? s.endsWith(constant) : s.contains(constant);
            }
            throw fallback();
          };
        }
        default:
          return null;
      }
    }

    /** CEL's {@code size} of a string (its code points), a list or a map. */
    private static Object sizeOf(Object v) {
      if (v instanceof String s) return (long) s.codePointCount(0, s.length());
      if (v instanceof List<?> list) return (long) list.size();
      if (v instanceof Map<?, ?> map) return (long) map.size();
      throw fallback();
    }

    /** {@code < <= > >=} (0..3): numbers of one class, strings, bools. */
    private static Node compare(Node a, Node b, int op) {
      return vars -> {
        Object x = a.eval(vars);
        Object y = b.eval(vars);
        if (x instanceof Double p && y instanceof Double q) {
          double l = p;
          double r = q;
          return switch (op) {
            case 0 -> l < r;
            case 1 -> l <= r;
            case 2 -> l > r;
            default -> l >= r;
          };
        }
        int c = order(x, y);
        return switch (op) {
          case 0 -> c < 0;
          case 1 -> c <= 0;
          case 2 -> c > 0;
          default -> c >= 0;
        };
      };
    }

    /** Arithmetic on two ints (an overflow, a zero divisor or -1: CEL-Java's), two doubles, or
     * two strings joined. */
    private static Node arithmetic(String fn, Node a, Node b) {
      char op = fn.charAt(1);
      return vars -> {
        Object x = a.eval(vars);
        Object y = b.eval(vars);
        if (x instanceof Long p && y instanceof Long q) {
          long l = p;
          long r = q;
          try {
            return switch (op) {
              case '+' -> Math.addExact(l, r);
              case '-' -> Math.subtractExact(l, r);
              case '*' -> Math.multiplyExact(l, r);
              default -> {
                if (r == 0 || r == -1) throw fallback();
                yield op == '/' ? l / r : l % r;
              }
            };
          } catch (ArithmeticException overflow) {
            throw fallback();
          }
        }
        if (x instanceof Double p && y instanceof Double q && op != '%') {
          double l = p;
          double r = q;
          return switch (op) {
            case '+' -> l + r;
            case '-' -> l - r;
            case '*' -> l * r;
            default -> l / r;
          };
        }
        if (x instanceof String p && y instanceof String q && op == '+') return p + q;
        throw fallback();
      };
    }
  }
}
