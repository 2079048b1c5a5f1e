package dev.schemacli.quality;

import com.google.common.collect.ImmutableSet;
import com.google.protobuf.Timestamp;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationException;
import dev.cel.common.CelVarDecl;
import dev.cel.common.types.CelType;
import dev.cel.common.types.CelTypeProvider;
import dev.cel.common.types.ListType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.StructType;
import dev.cel.common.types.StructTypeReference;
import dev.cel.common.values.CelByteString;
import dev.cel.common.values.NullValue;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerBuilder;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeFactory;
import dev.cel.runtime.CelStandardFunctions;
import dev.cel.runtime.CelStandardFunctions.StandardFunction;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.apache.avro.AvroTypeException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericEnumSymbol;
import org.apache.avro.generic.GenericFixed;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.util.Utf8;

/**
 * A domain rule set run over Avro records the way Confluent's Java serializers run it
 * (Confluent Schema Registry 8.3: AbstractKafkaSchemaSerDe's rule loop, CelExecutor,
 * CelFieldExecutor, AvroSchema's field walk), with Google's CEL-Java. Written from reading that
 * code; what it does, step by step:
 *
 * <ul>
 *   <li>a record reaches CEL as a map of field name to value: strings (Utf8) and enum symbols as
 *       strings, int and float widened to long and double, bytes and fixed as CEL bytes, null as
 *       CEL's null, arrays as lists and maps as maps (keys as strings), a union's value as
 *       itself; logical types as their Avro carrier (no conversions);
 *   <li>{@code message} is declared as a struct of the record's own schema (a field's CEL type
 *       from its Avro type; a logical type or a union other than [null, X] is dyn), and when
 *       that does not type-check, as {@code map(string, dyn)};
 *   <li>an expression may start with a guard ({@code guard; body}): a guard that is not true
 *       (or fails) skips the body; {@code matches} is java.util.regex's full match;
 *   <li>CEL_FIELD rules walk the record: every primitive field (after a union's branch is
 *       chosen) whose tags ({@code confluent:tags} in the schema, and the subject's metadata
 *       tags by field path) meet the rule's tags (or every one, for a rule without tags) is
 *       given to the expression as {@code value}, with {@code name}, {@code fullName},
 *       {@code typeName}, {@code tags} and the containing record as {@code message};
 *   <li>a CONDITION fails when its result is false (only false: null or a string passes); a
 *       CEL_FIELD CONDITION fails when any selected field's result is false; a TRANSFORM's
 *       result replaces the record (CEL) or the field (CEL_FIELD, narrowed to the field's type);
 *   <li>rules run in order (READ rules in reverse), each on the previous transform's result;
 *       a rule that fails or errs runs its onFailure action (ERROR when none), which stops the
 *       chain unless it is NONE.
 * </ul>
 */
public final class Engine {

  /** One rule of a rule set's domainRules, as the registry keeps it. */
  public record Rule(
      String name,
      String kind,
      String mode,
      String type,
      Set<String> tags,
      Map<String, String> params,
      String expr,
      String onSuccess,
      String onFailure,
      boolean disabled) {}

  /** What a rule did to one record. */
  public enum Verdict {
    PASS,
    FAIL,
    ERROR,
    SKIPPED,
    NOT_RUN
  }

  /** One rule's outcome on one record: the verdict, the action it ran and the error's words. */
  public record Outcome(Verdict verdict, String action, String error) {}

  /** A record through the rule set: each rule's outcome and the record after the transforms. */
  public record Result(Outcome[] outcomes, Object record, boolean refused) {}

  static final String GUARD_OFF = "cel.ignore.guard.separator";

  private final List<Rule> rules;
  private final Map<String, Set<String>> metadataTags;
  private final boolean read;
  private final boolean chain;
  private final String[] guards; // a rule's guard (before its first ';'), null when none
  private final String[] bodies; // and what it evaluates
  private final Map<Shape, Compiled> programs = new ConcurrentHashMap<>();
  // the compilers the programs are compiled with, one per set of variables' declarations
  private final Map<Env, CelCompiler> compilers = new ConcurrentHashMap<>();
  private final java.util.concurrent.atomic.AtomicLong compiledAtRun =
      new java.util.concurrent.atomic.AtomicLong();
  // each rule's last program (its body's, its guard's), found by identity before the map: a
  // record's hash and equals per evaluation cost a quarter of the scan (bench/README.md, #40)
  private final Hit[] bodyHits;
  private final Hit[] guardHits;
  private final Outcome[] passed; // a rule's outcomes that carry no error, made once
  // what a rule is, decided once (the scan asked each record these strings' questions again)
  private final int[] executors; // the executor: CEL, CEL_FIELD or none known
  private static final int CEL = 0;
  private static final int CEL_FIELD = 1;
  private static final int UNKNOWN = 2;
  private final boolean[] ignoredTransforms; // a CEL_FIELD TRANSFORM after one of its tags
  private final boolean[] skips; // disabled, or not a rule of this mode
  private final boolean[] conditions; // a CONDITION
  private final boolean[] fieldTransforms; // a CEL_FIELD TRANSFORM
  private final Outcome[] failed;
  private final Map<Schema, Walked[]> walks = new ConcurrentHashMap<>();
  // each program's closures (Closures) run first, and the fast field walk, when true; false:
  // CEL-Java alone and every field walked (the reference road the proof compares with)
  private final boolean closures;
  // evaluations made by the closures, given back to CEL-Java, made by CEL-Java alone: counted
  // only for RuleRun (single-threaded), null in the scan
  private long[] counts;

  /**
   * @param rules the rule set's domain rules, in order
   * @param metadataTags the subject's metadata tags: field path pattern to tags
   * @param mode "WRITE" (as a producer's serializer) or "READ" (as a consumer's deserializer)
   * @param chain true: a failure whose action is not NONE stops the chain, as in the
   *     serializer; false: every rule is evaluated on every record (a census of the rules)
   */
  public Engine(
      List<Rule> rules, Map<String, Set<String>> metadataTags, String mode, boolean chain) {
    this(rules, metadataTags, mode, chain, true);
  }

  /**
   * @param closures true: each expression CEL-Java checked is also compiled into closures
   *     ({@link Closures}), which evaluate it where they can, and a CEL_FIELD CONDITION passes
   *     over the top record's fields it cannot see ({@link #inert}); false: CEL-Java's
   *     interpreter alone, and every field walked (the reference road)
   */
  public Engine(List<Rule> rules, Map<String, Set<String>> metadataTags, String mode,
      boolean chain, boolean closures) {
    this.closures = closures;
    this.rules = new ArrayList<>(rules);
    if ("READ".equals(mode)) {
      java.util.Collections.reverse(this.rules);
    }
    this.metadataTags = metadataTags;
    this.read = "READ".equals(mode);
    this.chain = chain;
    this.guards = new String[this.rules.size()];
    this.bodies = new String[this.rules.size()];
    for (int i = 0; i < this.rules.size(); i++) {
      Rule rule = this.rules.get(i);
      String expr = rule.expr() == null ? "" : rule.expr();
      int at = Boolean.parseBoolean(rule.params().get(GUARD_OFF)) ? -1 : expr.indexOf(';');
      if (at >= 0) {
        String guard = expr.substring(0, at);
        guards[i] = guard.trim().isEmpty() ? null : guard;
        expr = expr.substring(at + 1);
      }
      bodies[i] = expr;
    }
    int n = this.rules.size();
    this.executors = new int[n];
    this.ignoredTransforms = new boolean[n];
    this.skips = new boolean[n];
    this.conditions = new boolean[n];
    this.fieldTransforms = new boolean[n];
    for (int i = 0; i < n; i++) {
      Rule rule = this.rules.get(i);
      String type = rule.type() == null ? "" : rule.type().toUpperCase(java.util.Locale.ROOT);
      executors[i] = "CEL".equals(type) ? CEL : "CEL_FIELD".equals(type) ? CEL_FIELD : UNKNOWN;
      ignoredTransforms[i] = "TRANSFORM".equals(rule.kind()) && sameTagsEarlier(rule, i);
      skips[i] = rule.disabled() || !applies(rule);
      conditions[i] = "CONDITION".equals(rule.kind());
      fieldTransforms[i] = "CEL_FIELD".equals(rule.type()) && "TRANSFORM".equals(rule.kind());
    }
    this.bodyHits = new Hit[this.rules.size()];
    this.guardHits = new Hit[this.rules.size()];
    this.passed = new Outcome[this.rules.size()];
    this.failed = new Outcome[this.rules.size()];
    for (int i = 0; i < this.rules.size(); i++) {
      Rule rule = this.rules.get(i);
      passed[i] = new Outcome(Verdict.PASS, actionName(rule, rule.onSuccess(), null), null);
      failed[i] = new Outcome(Verdict.FAIL, actionName(rule, rule.onFailure(), "ERROR"), null);
    }
  }

  /** Count the evaluations from now on (one thread only): see {@link #counts()}. */
  public void count() {
    counts = new long[3];
  }

  /** Evaluations made by the closures, given back by them to CEL-Java, and CEL-Java's alone. */
  public long[] counts() {
    return counts == null ? new long[3] : counts.clone();
  }

  /** The rules in the order they run (READ: reversed). */
  public List<Rule> rules() {
    return rules;
  }

  /** Every rule of the rule set over one record decoded with its writer schema. */
  public Result run(IndexedRecord record) {
    Outcome[] out = new Outcome[rules.size()];
    Object message = record;
    boolean stopped = false;
    boolean refused = false;
    Scope now = new Scope();
    for (int i = 0; i < rules.size(); i++) {
      Rule rule = rules.get(i);
      if (stopped) {
        out[i] = new Outcome(Verdict.NOT_RUN, null, null);
        continue;
      }
      if (skips[i]) {
        out[i] = new Outcome(Verdict.SKIPPED, null, null);
        continue;
      }
      Verdict verdict;
      String error = null;
      try {
        Object output = execute(rule, i, message, now);
        if (fieldTransforms[i]) {
          now.forget(); // the record was changed in place: its views are stale
        }
        if (conditions[i]) {
          verdict = Boolean.FALSE.equals(output) ? Verdict.FAIL : Verdict.PASS;
        } else {
          message = output;
          verdict = message == null ? Verdict.FAIL : Verdict.PASS;
        }
      } catch (RuleFailed e) {
        verdict = Verdict.FAIL;
      } catch (CelEvaluationException | RuntimeException | CelValidationException e) {
        verdict = Verdict.ERROR;
        error = words(e);
      }
      Outcome o = switch (verdict) {
        case PASS -> passed[i];
        case FAIL -> failed[i];
        default -> new Outcome(verdict, failed[i].action(), error);
      };
      String action = o.action();
      out[i] = o;
      if (verdict != Verdict.PASS && action != null && !"NONE".equals(action)) {
        refused = true;
        stopped = chain;
      }
    }
    return new Result(out, message, refused);
  }

  private boolean applies(Rule rule) {
    String mode = rule.mode() == null ? "WRITE" : rule.mode();
    return switch (mode) {
      case "WRITEREAD" -> true;
      case "WRITE" -> !read;
      case "READ" -> read;
      default -> false; // UPGRADE, DOWNGRADE, UPDOWN: migration rules, not domain rules
    };
  }

  private String actionName(Rule rule, String action, String fallback) {
    if (action != null && action.contains(",") && "WRITEREAD".equals(rule.mode())) {
      String[] parts = action.split(",");
      action = read ? parts[1] : parts[0];
    }
    return action == null || action.isEmpty() ? fallback : action;
  }

  static String words(Throwable e) {
    StringBuilder out = new StringBuilder();
    Throwable t = e;
    for (int depth = 0; t != null && depth < 4; depth++, t = t.getCause()) {
      if (depth > 0) out.append(": ");
      out.append(t.getClass().getSimpleName());
      if (t.getMessage() != null) out.append(' ').append(t.getMessage().replace('\n', ' '));
    }
    String text = out.toString();
    return text.length() > 400 ? text.substring(0, 400) : text;
  }

  /** A CEL_FIELD CONDITION that came out false for some field. */
  static final class RuleFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RuleFailed() {
      super("condition false", null, false, false);
    }
  }

  private Object execute(Rule rule, int index, Object message, Scope now)
      throws CelEvaluationException, CelValidationException {
    switch (executors[index]) {
      case CEL: {
        Object bound = now.view(message);
        Vars values = now.messageVars(bound);
        IndexedRecord rec = asRecord(message);
        Schema schema = rec != null ? rec.getSchema() : null;
        CelType type = schema == null ? celTypeOf(message) : null;
        Object result = withGuard(index, schema, type, values, bound, now);
        // CelExecutor.transform: an expression giving back the bound message leaves it as is
        if (result == bound) return message;
        if (conditions[index] || result == message) return result;
        if (rec == null) return result;
        return toAvro(result, rec.getSchema());
      }
      case CEL_FIELD: {
        if (ignoredTransforms[index]) return message;
        IndexedRecord rec = asRecord(message);
        if (rec == null) return message;
        walk(rule, index, rec.getSchema(), rec, null, now);
        return message;
      }
      default:
        throw new IllegalArgumentException("Could not find rule executor of type " + rule.type());
    }
  }

  /** The value as a record, or null when it is none: its exact class first (see toCel). */
  static IndexedRecord asRecord(Object v) {
    if (v != null && v.getClass() == GenericData.Record.class) return (GenericData.Record) v;
    return v instanceof IndexedRecord r ? r : null;
  }

  /** FieldRuleExecutor: a TRANSFORM is ignored when another with the same tags runs first. */
  private boolean sameTagsEarlier(Rule rule, int index) {
    for (int j = 0; j < index; j++) {
      Rule other = rules.get(j);
      if (!rule.tags().isEmpty()
          && "TRANSFORM".equals(other.kind())
          && java.util.Objects.equals(rule.mode(), other.mode())
          && java.util.Objects.equals(rule.type(), other.type())
          && rule.tags().equals(other.tags())) {
        return true;
      }
    }
    return false;
  }

  // ---- the field walk (CEL_FIELD) ----

  /** A record's field as every walk sees it: its names, tags and declared type (per schema). */
  private record Walked(
      Schema.Field field, Schema declared, String fullName, Set<String> tags, List<String> tagList,
      String kind, boolean primitive, boolean[] misses, boolean[] inert) {}

  private Walked[] walked(Schema schema, Schema recordSchema) {
    if (schema == recordSchema) {
      Walked[] known = walks.get(recordSchema);
      if (known != null) return known;
    }
    List<Schema.Field> fields = recordSchema.getFields();
    Walked[] out = new Walked[fields.size()];
    for (int i = 0; i < out.length; i++) {
      Schema.Field f = fields.get(i);
      Schema.Field declared = schema.getField(f.name());
      if (declared == null) declared = f;
      String fullName = recordSchema.getFullName() + "." + f.name();
      Set<String> tags = inlineTags(declared);
      Set<String> byPath = pathTags(fullName);
      if (!byPath.isEmpty()) {
        tags = new LinkedHashSet<>(tags);
        tags.addAll(byPath);
      }
      // per rule: the rule names tags and this field has none of them
      boolean[] misses = new boolean[rules.size()];
      boolean[] inert = new boolean[rules.size()];
      for (int r = 0; r < misses.length; r++) {
        Set<String> wanted = rules.get(r).tags();
        misses[r] = !wanted.isEmpty() && disjoint(tags, wanted);
        inert[r] = inert(declared.schema(), misses[r]);
      }
      out[i] = new Walked(f, declared.schema(), fullName, tags, List.copyOf(tags),
          typeName(declared.schema()), primitive(declared.schema().getType()), misses, inert);
    }
    if (schema == recordSchema) walks.put(recordSchema, out);
    return out;
  }

  /**
   * Whether a CEL_FIELD CONDITION's walk from the top record can pass over a field of this type
   * without a word: no expression sees it (its tags miss the rule's, or it is an enum or fixed,
   * which no expression is given), it holds no field deeper down, and its value cannot be the
   * boolean false that fails the rule (see walk). Only for the top record's own fields: deeper
   * down, a field that misses the rule's tags is judged by its container's (RuleContext's
   * stack of fields), which walk alone follows.
   */
  static boolean inert(Schema declared, boolean misses) {
    return switch (declared.getType()) {
      case ENUM, FIXED -> true;
      case BOOLEAN, RECORD, ARRAY, MAP -> false;
      case UNION -> {
        for (Schema branch : declared.getTypes()) {
          Schema.Type t = branch.getType();
          boolean known = t == Schema.Type.ENUM || t == Schema.Type.FIXED
              || (t != Schema.Type.BOOLEAN && primitive(t) && misses);
          if (!known) yield false;
        }
        yield true;
      }
      default -> misses; // STRING, BYTES, INT, LONG, FLOAT, DOUBLE, NULL
    };
  }

  /** The field being walked: what the expression is told about it. */
  private static final class Field {
    final IndexedRecord container;
    final Walked walked;
    String typeName;
    boolean primitive; // typeName is a primitive's

    Field(IndexedRecord container, Walked walked) {
      this.container = container;
      this.walked = walked;
      this.typeName = walked.kind();
      this.primitive = walked.primitive();
    }
  }

  private Object walk(Rule rule, int index, Schema schema, Object value, Field field, Scope now)
      throws CelEvaluationException, CelValidationException {
    if (field != null) {
      field.typeName = typeName(schema);
      field.primitive = primitive(schema.getType());
    }
    switch (schema.getType()) {
      case UNION: {
        int branch = GenericData.get().resolveUnion(schema, value);
        return walk(rule, index, schema.getTypes().get(branch), value, field, now);
      }
      case ARRAY: {
        if (!(value instanceof Iterable<?> items)) return value;
        List<Object> out = new ArrayList<>();
        for (Object item : items) {
          out.add(walk(rule, index, schema.getElementType(), item, field, now));
        }
        return out;
      }
      case MAP: {
        if (!(value instanceof Map<?, ?> map)) return value;
        Map<Object, Object> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
          out.putIfAbsent(
              e.getKey(), walk(rule, index, schema.getValueType(), e.getValue(), field, now));
        }
        return out;
      }
      case RECORD: {
        if (value == null) return null;
        IndexedRecord rec = value.getClass() == GenericData.Record.class
            ? (GenericData.Record) value : (IndexedRecord) value;
        // the fast road (with the closures) passes over the top record's inert fields; the
        // reference road walks every one: the oracle compares the two
        boolean top = field == null && closures && conditions[index];
        for (Walked w : walked(schema, rec.getSchema())) {
          if (top && w.inert()[index]) continue;
          Field entered = field;
          // RuleContext.enterField: a primitive field whose tags miss the rule's is not entered
          if (!w.primitive() || !w.misses()[index]) {
            entered = new Field(rec, w);
          }
          Schema.Field f = w.field();
          Object v = rec.get(f.pos());
          // a field no expression sees and no transform writes back is left as decoded; so is
          // a top string a CONDITION sees: its expression is given it through the record's
          // view (fieldTransform), made a String there once for every rule, if ever
          if (v instanceof Utf8 && !top && (entered != null || !conditions[index])) {
            v = v.toString();
          }
          Object nv = walk(rule, index, w.declared(), v, entered, now);
          if (conditions[index]) {
            if (Boolean.FALSE.equals(nv)) throw new RuleFailed();
          } else {
            rec.put(f.pos(), nv);
          }
        }
        return rec;
      }
      default: {
        if (field == null) return value;
        if (field.walked.misses()[index]) return value;
        return fieldTransform(rule, index, value, field, now);
      }
    }
  }

  private Object fieldTransform(Rule rule, int index, Object value, Field field, Scope now)
      throws CelEvaluationException, CelValidationException {
    if (!field.primitive) return value;
    // a TRANSFORM changes the record field by field: its view is made afresh for each field
    Object message =
        conditions[index] ? now.view(field.container) : new RecordView(field.container);
    int pos = field.walked.field().pos();
    Vars values;
    if (value != null && value.getClass() == Utf8.class && conditions[index]
        && field.container.get(pos) == value) {
      // the top record's string field, left as decoded by the walk (a CONDITION's only; not
      // an item of a list or map field): the expression reads it through the record's view
      // (a String made once for every rule, or read in place)
      RecordView view = (RecordView) message;
      values = now.fieldVars(null, field.walked.fullName(), field.walked.field().name(),
          field.typeName, field.walked.tagList(), view).inPlaceValue(view, pos);
    } else {
      values = now.fieldVars(toCel(value), field.walked.fullName(),
          field.walked.field().name(), field.typeName, field.walked.tagList(), message);
    }
    Object result =
        withGuard(index, field.container.getSchema(), celTypeOf(value), values, value, now);
    if (result != null && result.getClass() == Boolean.class) return result; // a condition's
    if (result instanceof NullValue || result instanceof com.google.protobuf.NullValue) {
      return null;
    }
    if (result instanceof CelByteString b) return ByteBuffer.wrap(b.toByteArray());
    if (result instanceof Number n) {
      return switch (field.typeName) {
        case "INT" -> n.intValue();
        case "LONG" -> n.longValue();
        case "FLOAT" -> n.floatValue();
        case "DOUBLE" -> n.doubleValue();
        default -> result;
      };
    }
    return result;
  }

  /**
   * A rule's variables: {@code message} alone (CEL) or the six a CEL_FIELD expression sees, in
   * slots rather than a hash map (the closures read a slot by its index, {@link #slot}). A
   * run's two are made once and refilled for each evaluation: nothing keeps them after it.
   */
  static final class Vars extends java.util.AbstractMap<String, Object> {
    private static final List<String> NAMES =
        List.of("value", "fullName", "name", "typeName", "tags", "message");
    private static final int MESSAGE = 5;
    private final Object[] values = new Object[NAMES.size()];
    private final int from; // the first slot in use: 0, a field's six; MESSAGE, message alone
    // a CEL_FIELD value that is a record's string field not yet made a String: the record's
    // view and the field's position (values[0] null until it is asked for as CEL gives it)
    private RecordView valueView;
    private int valuePos;

    private Vars(int from) {
      this.from = from;
    }

    /** A name's slot, or -1 for a name that is none of the six. */
    static int slot(String name) {
      return NAMES.indexOf(name);
    }

    /** The value in a slot, null when this expression has no such variable. */
    Object at(int slot) {
      if (slot == 0 && values[0] == null && valueView != null) values[0] = valueView.at(valuePos);
      return slot >= from ? values[slot] : null;
    }

    /** The value in a slot, a string field's {@code value} as decoded ({@link Closures#ascii}). */
    Object inPlace(int slot) {
      if (slot == 0 && values[0] == null && valueView != null) {
        return valueView.inPlace(valuePos);
      }
      return at(slot);
    }

    Vars message(Object message) {
      values[MESSAGE] = message;
      return this;
    }

    Vars field(Object value, String fullName, String name, String typeName, List<String> tags,
        Object message) {
      valueView = null;
      values[0] = value;
      values[1] = fullName;
      values[2] = name;
      values[3] = typeName;
      values[4] = tags;
      values[MESSAGE] = message;
      return this;
    }

    /** The value a record's string field as the view gives it, made a String when asked. */
    Vars inPlaceValue(RecordView view, int pos) {
      values[0] = null;
      valueView = view;
      valuePos = pos;
      return this;
    }

    @Override
    public Object get(Object key) {
      return key instanceof String k ? at(slot(k)) : null;
    }

    @Override
    public boolean containsKey(Object key) {
      return key instanceof String k && slot(k) >= from;
    }

    @Override
    public Set<Map.Entry<String, Object>> entrySet() {
      Set<Map.Entry<String, Object>> out = new LinkedHashSet<>();
      for (int i = from; i < values.length; i++) {
        out.add(new java.util.AbstractMap.SimpleImmutableEntry<>(NAMES.get(i), at(i)));
      }
      return out;
    }
  }

  /** Whether a field of this type is given to a CEL_FIELD expression (RuleContext's kinds). */
  static boolean primitive(Schema.Type type) {
    return switch (type) {
      case STRING, BYTES, INT, LONG, FLOAT, DOUBLE, BOOLEAN, NULL -> true;
      default -> false;
    };
  }

  static String typeName(Schema schema) {
    return switch (schema.getType()) {
      case RECORD -> "RECORD";
      case ENUM -> "ENUM";
      case ARRAY -> "ARRAY";
      case MAP -> "MAP";
      case UNION -> nullable(schema) ? "NULLABLE" : "COMBINED";
      case FIXED -> "FIXED";
      case STRING -> "STRING";
      case BYTES -> "BYTES";
      case INT -> "INT";
      case LONG -> "LONG";
      case FLOAT -> "FLOAT";
      case DOUBLE -> "DOUBLE";
      case BOOLEAN -> "BOOLEAN";
      default -> "NULL";
    };
  }

  private static boolean nullable(Schema union) {
    List<Schema> types = union.getTypes();
    return types.size() == 2
        && (types.get(0).getType() == Schema.Type.NULL
            || types.get(1).getType() == Schema.Type.NULL);
  }

  private static boolean disjoint(Set<String> a, Set<String> b) {
    if (a.isEmpty() || b.isEmpty()) return true;
    for (String x : a) if (b.contains(x)) return false;
    return true;
  }

  private static Set<String> inlineTags(Schema.Field field) {
    Object prop = field.getObjectProp("confluent:tags");
    if (!(prop instanceof List<?> list)) return Set.of();
    Set<String> out = new LinkedHashSet<>();
    for (Object tag : list) out.add(tag.toString());
    return out;
  }

  private Set<String> pathTags(String fullName) {
    if (metadataTags.isEmpty()) return Set.of();
    Set<String> out = new LinkedHashSet<>();
    for (Map.Entry<String, Set<String>> e : metadataTags.entrySet()) {
      if (Wildcard.matches(fullName, e.getKey())) out.addAll(e.getValue());
    }
    return out;
  }

  // ---- CEL: the guard, the program, the values ----

  /**
   * Compiles ahead the programs the rules will ask for over records of {@code writer}, as
   * {@link #eval} would on its first records: a CEL rule's (guard and body) for the record, a
   * CEL_FIELD rule's for each CEL type a top field it can see may give {@code value}. The scan
   * does this while its consumers connect, rather than in the consumers' threads once the first
   * records arrive (issue 40: the rules' compiles were most of a check's start). A program this
   * misses (a field deeper down, a type seen first at run) is compiled on first use, as before;
   * one it compiles is the one eval would have compiled (same shape, same declarations).
   *
   * @return the programs compiled
   */
  public int prepare(Schema writer) {
    int made = 0;
    Set<String> messageOnly = new Vars(Vars.MESSAGE).keySet();
    Set<String> fieldSix = new Vars(0).keySet();
    for (int i = 0; i < rules.size(); i++) {
      if (skips[i]) continue;
      List<Shape> shapes = new ArrayList<>();
      if (executors[i] == CEL) {
        shapes.add(new Shape(i, false, writer, null));
      } else if (executors[i] == CEL_FIELD && !ignoredTransforms[i]
          && writer.getType() == Schema.Type.RECORD) {
        Set<CelType> types = new LinkedHashSet<>();
        for (Walked w : walked(writer, writer)) {
          if (closures && conditions[i] && w.inert()[i]) continue;
          if (w.misses()[i]) continue;
          Schema declared = w.declared();
          List<Schema> branches =
              declared.getType() == Schema.Type.UNION ? declared.getTypes() : List.of(declared);
          for (Schema b : branches) {
            CelType t = valueType(b.getType());
            if (t != null) types.add(t);
          }
        }
        for (CelType t : types) shapes.add(new Shape(i, false, writer, t));
      }
      for (Shape body : shapes) {
        for (boolean guard : new boolean[] {true, false}) {
          String expr = guard ? guards[i] : bodies[i];
          if (expr == null) continue;
          Shape shape = new Shape(i, guard, body.schema(), body.type());
          Set<String> names = executors[i] == CEL ? messageOnly : fieldSix;
          boolean[] fresh = {false};
          programs.computeIfAbsent(shape, s -> {
            fresh[0] = true;
            return compile(expr, declared(s, names), s.schema(), closures);
          });
          if (fresh[0]) made++;
        }
      }
    }
    return made;
  }

  /** Programs compiled while records were run (not by {@link #prepare}). */
  public long compiledAtRun() {
    return compiledAtRun.get();
  }

  /** The CEL type {@link #celTypeOf(Object)} gives a decoded value of a primitive type. */
  private static CelType valueType(Schema.Type type) {
    return switch (type) {
      case STRING -> SimpleType.STRING;
      case INT, LONG -> SimpleType.INT;
      case FLOAT, DOUBLE -> SimpleType.DOUBLE;
      case BOOLEAN -> SimpleType.BOOL;
      case BYTES -> SimpleType.BYTES;
      case NULL -> SimpleType.DYN;
      default -> null; // records, arrays, maps, enums, fixed: not given as a field's value
    };
  }

  /**
   * A rule's guard, then its body: a guard that is not true (or fails) makes a CONDITION pass
   * and a TRANSFORM give back what it was given.
   */
  private Object withGuard(int index, Schema schema, CelType type, Map<String, Object> values,
      Object subject, Scope now) throws CelEvaluationException, CelValidationException {
    if (guards[index] != null) {
      Object ok;
      try {
        ok = eval(index, true, schema, type, values, now);
      } catch (CelEvaluationException | CelValidationException | RuntimeException e) {
        ok = Boolean.FALSE; // a guard that fails skips the body
      }
      if (!Boolean.TRUE.equals(ok)) return conditions[index] ? Boolean.TRUE : subject;
    }
    return eval(index, false, schema, type, values, now);
  }

  /**
   * A rule's guard or body over the variables, with the program compiled for the schema of the
   * record bound as {@code message} and the CEL type of {@code value} or of a message that is
   * not a record.
   */
  private Object eval(int index, boolean guard, Schema schema, CelType type,
      Map<String, Object> values, Scope now)
      throws CelEvaluationException, CelValidationException {
    Hit[] hits = guard ? guardHits : bodyHits;
    Hit hit = hits[index];
    Compiled compiled;
    if (hit != null && hit.schema == schema && hit.type == type) {
      compiled = hit.compiled;
    } else {
      // the Shape, its hash and equals, only when the rule's last program does not fit
      Shape shape = new Shape(index, guard, schema, type);
      String expr = guard ? guards[index] : bodies[index];
      compiled = programs.get(shape);
      if (compiled == null) {
        compiled = programs.computeIfAbsent(shape, s -> {
          compiledAtRun.incrementAndGet();
          return compile(expr, declared(s, values.keySet()), s.schema, closures);
        });
      }
      // racy but safe: a Hit's fields are final, and a stale or lost one only misses
      hits[index] = new Hit(schema, type, compiled);
    }
    if (compiled.failure != null) throw compiled.failure;
    if (compiled.closures != null) {
      try {
        Object v = compiled.closures.eval(values);
        if (counts != null) counts[0]++;
        return v;
      } catch (Closures.Fallback f) {
        if (counts != null) counts[1]++; // CEL-Java gives the value, or the error in its words
      }
    } else if (counts != null) {
      counts[2]++;
    }
    return compiled.program.eval(
        name -> "now".equals(name) ? Optional.of(now.get()) : Optional.ofNullable(values.get(name)));
  }

  /**
   * What a program is compiled for: the rule (its guard or its body), the schema of the record
   * bound as {@code message}, and the CEL type of {@code value} (CEL_FIELD) or of a message that
   * is not a record. Every record of one writer schema shares its programs.
   */
  private record Shape(int rule, boolean isGuard, Schema schema, CelType type) {}

  /** A rule's last program with the schema and type it was found for (compared by identity). */
  private record Hit(Schema schema, CelType type, Compiled compiled) {}

  /** The variables' declared types (CelUtils.findCelType's rules). */
  private static Map<String, CelType> declared(Shape shape, Set<String> names) {
    Map<String, CelType> types = new LinkedHashMap<>();
    for (String name : names) {
      if ("message".equals(name)) {
        types.put(name, shape.schema != null ? celTypeOf(shape.schema) : shape.type);
      } else if ("value".equals(name)) {
        types.put(name, shape.type);
      } else if ("tags".equals(name)) {
        types.put(name, ListType.create(SimpleType.DYN));
      } else {
        types.put(name, SimpleType.STRING);
      }
    }
    types.put("now", SimpleType.TIMESTAMP);
    return types;
  }

  private static final class Compiled {
    final CelRuntime.Program program;
    final CelAbstractSyntaxTree ast; // as CEL-Java checked it
    final Closures.Node closures; // null: outside the closures' subset, or not asked for
    final CelValidationException failure;

    Compiled(Built built, CelValidationException failure) {
      this(built == null ? null : built.program(), built == null ? null : built.ast(), null,
          failure);
    }

    Compiled(CelRuntime.Program program, CelAbstractSyntaxTree ast, Closures.Node closures,
        CelValidationException failure) {
      this.program = program;
      this.ast = ast;
      this.closures = closures;
      this.failure = failure;
    }
  }

  /** A program and the checked expression it was made from. */
  private record Built(CelRuntime.Program program, CelAbstractSyntaxTree ast) {}

  private Compiled compile(
      String expr, Map<String, CelType> types, Schema schema, boolean closures) {
    Compiled c = compile(expr, types, schema);
    if (!closures || c.program == null) return c;
    return new Compiled(c.program, c.ast, Closures.compile(c.ast), null);
  }

  private Compiled compile(String expr, Map<String, CelType> types, Schema schema) {
    boolean structs = schema != null
        && types.values().stream().anyMatch(t -> t instanceof StructTypeReference);
    try {
      if (structs) {
        try {
          return new Compiled(build(expr, types, schema), null);
        } catch (CelValidationException first) {
          Map<String, CelType> loose = new LinkedHashMap<>();
          for (Map.Entry<String, CelType> e : types.entrySet()) {
            loose.put(e.getKey(), e.getValue() instanceof StructTypeReference
                ? MapType.create(SimpleType.STRING, SimpleType.DYN) : e.getValue());
          }
          try {
            return new Compiled(build(expr, loose, null), null);
          } catch (CelValidationException second) {
            return new Compiled(null, first);
          }
        }
      }
      return new Compiled(build(expr, types, null), null);
    } catch (CelValidationException e) {
      return new Compiled(null, e);
    }
  }

  /**
   * The variables' declarations and the type provider a compiler is built with: every rule
   * over one writer's records with the same variables shares one compiler (issue 40: building
   * CEL's standard environment once a rule was most of a check's start).
   */
  private record Env(Map<String, CelType> types, Schema schema) {}

  private Built build(String expr, Map<String, CelType> types, Schema schema)
      throws CelValidationException {
    CelCompiler compiler = compilers.computeIfAbsent(
        new Env(new HashMap<>(types), schema), env -> compiler(env.types(), env.schema()));
    CelAbstractSyntaxTree ast = compiler.compile(expr).getAst();
    try {
      return new Built(Runtime.INSTANCE.createProgram(ast), ast);
    } catch (CelEvaluationException e) {
      throw new IllegalStateException(e);
    }
  }

  @SuppressWarnings("deprecation") // math(CelOptions): the call Confluent's CelUtils makes
  private static CelCompiler compiler(Map<String, CelType> types, Schema schema) {
    List<CelVarDecl> decls = new ArrayList<>();
    for (Map.Entry<String, CelType> e : types.entrySet()) {
      decls.add(CelVarDecl.newVarDeclaration(e.getKey(), e.getValue()));
    }
    CelCompilerBuilder compiler = CelCompilerFactory.standardCelCompilerBuilder()
        .setOptions(CelOptions.DEFAULT)
        .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
        .addLibraries(CelExtensions.strings(), CelExtensions.math(CelOptions.DEFAULT))
        .addVarDeclarations(decls);
    if (schema != null) {
      AvroTypes avroTypes = AvroTypes.of(schema);
      if (!avroTypes.byName.isEmpty()) compiler.setTypeProvider(avroTypes);
    }
    return compiler.build();
  }

  /**
   * The one runtime every program is made by: it declares no variables (CEL-Java's runtimes are
   * immutable and safe to share among threads), so it is built once, not once a rule.
   */
  private static final class Runtime {
    static final CelRuntime INSTANCE = build();

    @SuppressWarnings("deprecation") // math(CelOptions): the call Confluent's CelUtils makes
    private static CelRuntime build() {
      return CelRuntimeFactory.standardCelRuntimeBuilder()
          .setOptions(CelOptions.DEFAULT)
          .addLibraries(CelExtensions.strings(), CelExtensions.math(CelOptions.DEFAULT))
          .setStandardEnvironmentEnabled(false)
          .setStandardFunctions(CelStandardFunctions.newBuilder()
              .excludeFunctions(StandardFunction.MATCHES)
              .build())
          .addFunctionBindings(
              CelFunctionBinding.from("matches", String.class, String.class, Engine::fullMatch),
              CelFunctionBinding.from(
                  "matches_string", String.class, String.class, Engine::fullMatch))
          .build();
    }
  }

  private static final Map<String, Pattern> PATTERNS = new ConcurrentHashMap<>();

  private static boolean fullMatch(String value, String regex) throws CelEvaluationException {
    Pattern p;
    try {
      p = PATTERNS.computeIfAbsent(regex, Pattern::compile);
    } catch (RuntimeException e) {
      throw new CelEvaluationException("failed to compile regex: " + e.getMessage());
    }
    return p.matcher(value).matches();
  }

  /**
   * One record's run: {@code now} (one instant, taken when a rule first asks) and the CEL views
   * of the records the rules are given, made once and shared until a transform changes them.
   */
  static final class Scope {
    private Timestamp at;
    // the first record viewed (most runs view one) kept apart; the map made only for more
    private Object firstRecord;
    private Object firstView;
    private Map<Object, Object> views;
    private Vars message;
    private Vars field;

    /** The variables of a CEL expression: {@code message} bound to this value. */
    Vars messageVars(Object bound) {
      if (message == null) message = new Vars(Vars.MESSAGE);
      return message.message(bound);
    }

    /** The variables of a CEL_FIELD expression over one field. */
    Vars fieldVars(Object value, String fullName, String name, String typeName,
        List<String> tags, Object container) {
      if (field == null) field = new Vars(0);
      return field.field(value, fullName, name, typeName, tags, container);
    }

    Timestamp get() {
      if (at == null) {
        Instant i = Instant.now();
        at = Timestamp.newBuilder().setSeconds(i.getEpochSecond()).setNanos(i.getNano()).build();
      }
      return at;
    }

    /** The value as CEL is given it; a record's view is shared by the record's rules. */
    Object view(Object value) {
      if (value != null && value == firstRecord) return firstView; // before any instanceof
      if (!(value instanceof IndexedRecord)) return toCel(value);
      if (firstRecord == null) {
        firstRecord = value;
        firstView = new RecordView((IndexedRecord) value);
        return firstView;
      }
      if (views == null) views = new java.util.IdentityHashMap<>();
      return views.computeIfAbsent(value, v -> new RecordView((IndexedRecord) v));
    }

    /** A CEL_FIELD TRANSFORM changed records in place: their views are stale. */
    void forget() {
      firstRecord = null;
      firstView = null;
      if (views != null) views.clear();
    }
  }

  /**
   * A record as CEL is given it: a map of field name to value (CelUtils.avroRecordToMap's), each
   * value converted by {@link #toCel} when CEL first reads it, so a rule pays only for the
   * fields it reads. Reads only: the record must not change while the view is in use.
   */
  static final class RecordView extends java.util.AbstractMap<String, Object> {
    private final IndexedRecord record;
    private final List<Schema.Field> fields;
    private final Object[] values; // null: not read yet (toCel never gives null)

    RecordView(IndexedRecord record) {
      this.record = record;
      this.fields = record.getSchema().getFields();
      this.values = new Object[fields.size()];
    }

    /** The record's schema (the view's fields are its fields). */
    Schema schema() {
      return record.getSchema();
    }

    /** The field at a position of {@link #schema}, as CEL is given it. */
    Object at(int pos) {
      Object v = values[pos];
      if (v == null) {
        v = toCel(record.get(pos));
        values[pos] = v;
      }
      return v;
    }

    /**
     * The field at a position as {@link #at} gives it, but a string not yet made a String as
     * Avro decoded it (a {@code Utf8}): for the closures' calls that read it in place
     * ({@link Closures#ascii}), which make it a String themselves where they need one.
     */
    Object inPlace(int pos) {
      Object v = values[pos];
      if (v != null) return v;
      Object decoded = record.get(pos);
      return decoded != null && decoded.getClass() == Utf8.class ? decoded : at(pos);
    }

    @Override
    public Object get(Object key) {
      if (!(key instanceof String name)) return null;
      Schema.Field f = record.getSchema().getField(name);
      return f == null ? null : at(f.pos());
    }

    @Override
    public boolean containsKey(Object key) {
      return key instanceof String name && record.getSchema().getField(name) != null;
    }

    @Override
    public int size() {
      return fields.size();
    }

    @Override
    public Set<Map.Entry<String, Object>> entrySet() {
      Set<Map.Entry<String, Object>> out = new LinkedHashSet<>();
      for (Schema.Field f : fields) {
        out.add(new java.util.AbstractMap.SimpleImmutableEntry<>(f.name(), at(f.pos())));
      }
      return out;
    }
  }

  /** A variable's declared CEL type, from its value (CelUtils.findCelType's rules). */
  static CelType celTypeOf(Object v) {
    // the exact classes first, as toCel does (no interface scanned)
    Class<?> c = v == null ? null : v.getClass();
    if (c == String.class || c == Utf8.class) return SimpleType.STRING;
    if (c == Double.class) return SimpleType.DOUBLE;
    if (c == Long.class || c == Integer.class) return SimpleType.INT;
    if (c == Boolean.class) return SimpleType.BOOL;
    if (v == null || v instanceof com.google.protobuf.NullValue || v instanceof NullValue) {
      return SimpleType.DYN;
    }
    if (v instanceof IndexedRecord r) return celTypeOf(r.getSchema());
    if (v instanceof GenericFixed || v instanceof GenericEnumSymbol<?>) {
      return celTypeOf(((org.apache.avro.generic.GenericContainer) v).getSchema());
    }
    if (v instanceof Boolean) return SimpleType.BOOL;
    if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return SimpleType.INT;
    }
    if (v instanceof byte[] || v instanceof ByteBuffer) return SimpleType.BYTES;
    if (v instanceof Double || v instanceof Float) return SimpleType.DOUBLE;
    if (v instanceof CharSequence) return SimpleType.STRING;
    if (v instanceof Map) return MapType.create(SimpleType.STRING, SimpleType.DYN);
    if (v instanceof List) return ListType.create(SimpleType.DYN);
    return SimpleType.DYN;
  }

  /** A whole value's CEL type from its Avro schema (CelUtils.findCelTypeForAvroSchema). */
  static CelType celTypeOf(Schema schema) {
    if (schema.getLogicalType() != null) return SimpleType.DYN;
    return switch (schema.getType()) {
      case BOOLEAN -> SimpleType.BOOL;
      case INT, LONG -> SimpleType.INT;
      case BYTES, FIXED -> SimpleType.BYTES;
      case FLOAT, DOUBLE -> SimpleType.DOUBLE;
      case STRING, ENUM -> SimpleType.STRING;
      case ARRAY -> ListType.create(SimpleType.DYN);
      case MAP -> MapType.create(SimpleType.STRING, SimpleType.DYN);
      case NULL -> SimpleType.NULL_TYPE;
      case RECORD -> StructTypeReference.create(schema.getFullName());
      case UNION -> {
        Schema inner = AvroTypes.unwrapNullable(schema);
        yield inner == null ? SimpleType.DYN : celTypeOf(inner);
      }
      default -> SimpleType.DYN;
    };
  }

  /**
   * A value as CEL is given it (CelUtils.toCelValue's rules). The classes a decoded record
   * holds are told apart by their exact class first: an {@code instanceof} of an interface
   * (IndexedRecord, CharSequence) scans the class's interfaces, and on JDK 17 a hit rewrites
   * the class's one-entry cache, which two scan threads then fight over (that road was half of
   * the rules' run, issue 40); {@link #toCelSlowly} answers every other value the same way.
   */
  static Object toCel(Object v) {
    if (v == null) return NullValue.NULL_VALUE;
    Class<?> c = v.getClass();
    if (c == Utf8.class || c == GenericData.EnumSymbol.class) return v.toString();
    if (c == String.class || c == Double.class || c == Long.class || c == Boolean.class) return v;
    if (c == Integer.class) return ((Integer) v).longValue();
    if (c == GenericData.Record.class) return new RecordView((IndexedRecord) v);
    return toCelSlowly(v);
  }

  private static Object toCelSlowly(Object v) {
    if (v == null || v instanceof com.google.protobuf.NullValue) return NullValue.NULL_VALUE;
    if (v instanceof IndexedRecord r) return new RecordView(r);
    if (v instanceof GenericEnumSymbol<?> || v instanceof CharSequence) return v.toString();
    if (v instanceof Integer i) return i.longValue();
    if (v instanceof Short s) return s.longValue();
    if (v instanceof Byte b) return b.longValue();
    if (v instanceof Float f) return f.doubleValue();
    if (v instanceof byte[] b) return CelByteString.of(b);
    if (v instanceof ByteBuffer buf) {
      ByteBuffer d = buf.duplicate();
      byte[] bytes = new byte[d.remaining()];
      d.get(bytes);
      return CelByteString.of(bytes);
    }
    if (v instanceof GenericFixed f) return CelByteString.of(f.bytes());
    if (v instanceof List<?> list) {
      List<Object> out = new ArrayList<>(list.size());
      for (Object e : list) out.add(toCel(e));
      return out;
    }
    if (v instanceof Map<?, ?> map) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : map.entrySet()) out.put(String.valueOf(e.getKey()), toCel(e.getValue()));
      return out;
    }
    return v;
  }

  /** The Avro records of a schema as CEL struct types (AvroCelTypeProvider's rules). */
  static final class AvroTypes implements CelTypeProvider {
    final Map<String, StructType> byName = new HashMap<>();

    static AvroTypes of(Schema root) {
      AvroTypes t = new AvroTypes();
      t.collect(root, new java.util.HashSet<>());
      return t;
    }

    private void collect(Schema schema, Set<String> visiting) {
      Schema s = unwrapNullable(schema);
      if (s == null) return;
      switch (s.getType()) {
        case RECORD -> {
          String name = s.getFullName();
          if (byName.containsKey(name) || visiting.contains(name)) return;
          visiting.add(name);
          ImmutableSet<String> names = s.getFields().stream()
              .map(Schema.Field::name).collect(ImmutableSet.toImmutableSet());
          byName.put(name, StructType.create(name, names, n -> {
            Schema.Field f = s.getField(n);
            return f == null ? Optional.empty() : Optional.of(fieldType(f.schema()));
          }));
          for (Schema.Field f : s.getFields()) collect(f.schema(), visiting);
          visiting.remove(name);
        }
        case ARRAY -> collect(s.getElementType(), visiting);
        case MAP -> collect(s.getValueType(), visiting);
        default -> { }
      }
    }

    static CelType fieldType(Schema schema) {
      Schema s = unwrapNullable(schema);
      if (s == null || s.getLogicalType() != null) return SimpleType.DYN;
      return switch (s.getType()) {
        case BOOLEAN -> SimpleType.BOOL;
        case INT, LONG -> SimpleType.INT;
        case BYTES, FIXED -> SimpleType.BYTES;
        case FLOAT, DOUBLE -> SimpleType.DOUBLE;
        case STRING, ENUM -> SimpleType.STRING;
        case ARRAY -> ListType.create(fieldType(s.getElementType()));
        case MAP -> MapType.create(SimpleType.STRING, fieldType(s.getValueType()));
        case NULL -> SimpleType.NULL_TYPE;
        case RECORD -> StructTypeReference.create(s.getFullName());
        default -> SimpleType.DYN;
      };
    }

    /** [null, X] and [X, null] are X; any other union is null (dyn); not a union: itself. */
    static Schema unwrapNullable(Schema schema) {
      if (schema.getType() != Schema.Type.UNION) return schema;
      List<Schema> b = schema.getTypes();
      if (b.size() == 2) {
        if (b.get(0).getType() == Schema.Type.NULL) return b.get(1);
        if (b.get(1).getType() == Schema.Type.NULL) return b.get(0);
      }
      return null;
    }

    @Override
    public com.google.common.collect.ImmutableCollection<CelType> types() {
      return com.google.common.collect.ImmutableSet.copyOf(byName.values());
    }

    @Override
    public Optional<CelType> findType(String typeName) {
      return Optional.ofNullable(byName.get(typeName));
    }
  }

  // ---- a CEL TRANSFORM's result back into Avro (AvroResultWriter's rules) ----

  static Object toAvro(Object v, Schema schema) {
    if (v instanceof NullValue || v instanceof com.google.protobuf.NullValue) v = null;
    if (schema.getLogicalType() != null && schema.getType() != Schema.Type.UNION && v == null) {
      throw mismatch(null, schema);
    }
    switch (schema.getType()) {
      case NULL:
        if (v != null) throw new AvroTypeException("Expected null for NULL schema, got: " + v);
        return null;
      case BOOLEAN:
        if (v instanceof Boolean) return v;
        throw mismatch(v, schema);
      case INT:
        if (v instanceof Integer) return v;
        if (v instanceof Long l) {
          if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
            throw new AvroTypeException("Value " + l + " out of range for INT field");
          }
          return l.intValue();
        }
        throw mismatch(v, schema);
      case LONG:
        if (v instanceof Long) return v;
        if (v instanceof Integer i) return i.longValue();
        throw mismatch(v, schema);
      case FLOAT:
        if (v instanceof Number n) return n.floatValue();
        throw mismatch(v, schema);
      case DOUBLE:
        if (v instanceof Number n) return n.doubleValue();
        throw mismatch(v, schema);
      case STRING:
        if (v instanceof CharSequence || v instanceof GenericEnumSymbol<?>) return v.toString();
        throw mismatch(v, schema);
      case BYTES:
        if (v instanceof ByteBuffer b) return b.duplicate();
        return ByteBuffer.wrap(bytesOf(v, schema));
      case FIXED: {
        byte[] b = bytesOf(v, schema);
        if (b.length != schema.getFixedSize()) {
          throw new AvroTypeException("Fixed schema " + schema.getFullName() + " expects "
              + schema.getFixedSize() + " bytes, got " + b.length);
        }
        return new GenericData.Fixed(schema, b);
      }
      case ENUM: {
        if (!(v instanceof CharSequence || v instanceof GenericEnumSymbol<?>)) {
          throw mismatch(v, schema);
        }
        if (!schema.hasEnumSymbol(v.toString())) {
          throw new AvroTypeException(
              "Enum " + schema.getFullName() + " has no symbol '" + v + "'");
        }
        return new GenericData.EnumSymbol(schema, v.toString());
      }
      case ARRAY: {
        if (!(v instanceof List<?> list)) throw mismatch(v, schema);
        List<Object> out = new ArrayList<>(list.size());
        for (Object e : list) out.add(toAvro(e, schema.getElementType()));
        return out;
      }
      case MAP: {
        if (!(v instanceof Map<?, ?> map)) throw mismatch(v, schema);
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
          out.put(String.valueOf(e.getKey()), toAvro(e.getValue(), schema.getValueType()));
        }
        return out;
      }
      case RECORD: {
        if (v instanceof IndexedRecord r && r.getSchema().equals(schema)) return r;
        if (!(v instanceof Map<?, ?> map)) throw mismatch(v, schema);
        GenericRecordBuilder b = new GenericRecordBuilder(schema);
        for (Schema.Field f : schema.getFields()) {
          if (map.containsKey(f.name())) b.set(f, toAvro(map.get(f.name()), f.schema()));
        }
        return b.build();
      }
      case UNION: {
        List<Schema> branches = schema.getTypes();
        for (Schema branch : branches) {
          if (takes(branch, v)) return toAvro(v, branch);
        }
        throw new org.apache.avro.UnresolvedUnionException(schema, v);
      }
      default:
        throw new AvroTypeException("Unsupported Avro type: " + schema.getType());
    }
  }

  /**
   * Whether a union's branch takes a CEL result (AvroResultWriter's resolver, not Avro's: CEL
   * widens int to long and float to double and gives records as maps). The first branch that
   * takes it wins, in declaration order.
   */
  static boolean takes(Schema branch, Object v) {
    if (v == null) return branch.getType() == Schema.Type.NULL;
    return switch (branch.getType()) {
      case NULL, UNION -> false;
      case BOOLEAN -> v instanceof Boolean;
      case INT -> v instanceof Integer
          || (v instanceof Long l && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE);
      case LONG -> v instanceof Long || v instanceof Integer;
      case FLOAT, DOUBLE -> v instanceof Number;
      case STRING -> v instanceof CharSequence;
      case ENUM -> (v instanceof CharSequence || v instanceof GenericEnumSymbol<?>)
          && branch.hasEnumSymbol(v.toString());
      case BYTES -> v instanceof byte[] || v instanceof ByteBuffer || v instanceof CelByteString
          || v instanceof GenericFixed;
      case FIXED -> fixedSize(v) == branch.getFixedSize();
      case ARRAY -> v instanceof List<?>;
      case MAP -> v instanceof Map<?, ?>;
      case RECORD -> v instanceof IndexedRecord r
          ? r.getSchema().getFullName().equals(branch.getFullName())
          : v instanceof Map<?, ?>;
    };
  }

  private static int fixedSize(Object v) {
    if (v instanceof GenericFixed f) return f.bytes().length;
    if (v instanceof byte[] b) return b.length;
    if (v instanceof ByteBuffer b) return b.remaining();
    if (v instanceof CelByteString b) return b.size();
    return -1;
  }

  private static byte[] bytesOf(Object v, Schema schema) {
    if (v instanceof CelByteString b) return b.toByteArray();
    if (v instanceof byte[] b) return b;
    if (v instanceof ByteBuffer buf) {
      ByteBuffer d = buf.duplicate();
      byte[] out = new byte[d.remaining()];
      d.get(out);
      return out;
    }
    if (v instanceof GenericFixed f) return f.bytes();
    throw mismatch(v, schema);
  }

  private static AvroTypeException mismatch(Object v, Schema schema) {
    return new AvroTypeException("Expected " + schema.getType() + " for schema "
        + schema.getFullName() + ", got " + (v == null ? "null" : v.getClass().getSimpleName()));
  }

  static Collection<String> verdictNames() {
    List<String> out = new ArrayList<>();
    for (Verdict v : Verdict.values()) out.add(v.name());
    return out;
  }
}
