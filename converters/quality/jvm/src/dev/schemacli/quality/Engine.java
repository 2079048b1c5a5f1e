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
  private final Map<ProgramKey, Compiled> programs = new ConcurrentHashMap<>();

  /**
   * @param rules the rule set's domain rules, in order
   * @param metadataTags the subject's metadata tags: field path pattern to tags
   * @param mode "WRITE" (as a producer's serializer) or "READ" (as a consumer's deserializer)
   * @param chain true: a failure whose action is not NONE stops the chain, as in the
   *     serializer; false: every rule is evaluated on every record (a census of the rules)
   */
  public Engine(
      List<Rule> rules, Map<String, Set<String>> metadataTags, String mode, boolean chain) {
    this.rules = new ArrayList<>(rules);
    if ("READ".equals(mode)) {
      java.util.Collections.reverse(this.rules);
    }
    this.metadataTags = metadataTags;
    this.read = "READ".equals(mode);
    this.chain = chain;
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
    Now now = new Now();
    for (int i = 0; i < rules.size(); i++) {
      Rule rule = rules.get(i);
      if (stopped) {
        out[i] = new Outcome(Verdict.NOT_RUN, null, null);
        continue;
      }
      if (rule.disabled() || !applies(rule)) {
        out[i] = new Outcome(Verdict.SKIPPED, null, null);
        continue;
      }
      Verdict verdict;
      String error = null;
      try {
        Object output = execute(rule, i, message, now);
        if ("CONDITION".equals(rule.kind())) {
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
      String action = verdict == Verdict.PASS
          ? actionName(rule, rule.onSuccess(), null)
          : actionName(rule, rule.onFailure(), "ERROR");
      out[i] = new Outcome(verdict, action, error);
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

  private Object execute(Rule rule, int index, Object message, Now now)
      throws CelEvaluationException, CelValidationException {
    String type = rule.type() == null ? "" : rule.type().toUpperCase(java.util.Locale.ROOT);
    switch (type) {
      case "CEL": {
        Map<String, Object> args = new HashMap<>();
        args.put("message", message);
        Object result = withGuard(rule, message, args, now);
        if ("CONDITION".equals(rule.kind()) || result == message) return result;
        if (!(message instanceof IndexedRecord rec)) return result;
        return toAvro(result, rec.getSchema());
      }
      case "CEL_FIELD": {
        if ("TRANSFORM".equals(rule.kind()) && sameTagsEarlier(rule, index)) return message;
        if (!(message instanceof IndexedRecord rec)) return message;
        walk(rule, rec.getSchema(), rec, null, now);
        return message;
      }
      default:
        throw new IllegalArgumentException("Could not find rule executor of type " + rule.type());
    }
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

  /** The field being walked: what the expression is told about it. */
  private static final class Field {
    final Object container;
    final String fullName;
    final String name;
    final Set<String> tags;
    String typeName;

    Field(Object container, String fullName, String name, String typeName, Set<String> tags) {
      this.container = container;
      this.fullName = fullName;
      this.name = name;
      this.typeName = typeName;
      this.tags = tags;
    }
  }

  private Object walk(Rule rule, Schema schema, Object value, Field field, Now now)
      throws CelEvaluationException, CelValidationException {
    if (field != null) field.typeName = typeName(schema);
    switch (schema.getType()) {
      case UNION: {
        int branch = GenericData.get().resolveUnion(schema, value);
        return walk(rule, schema.getTypes().get(branch), value, field, now);
      }
      case ARRAY: {
        if (!(value instanceof Iterable<?> items)) return value;
        List<Object> out = new ArrayList<>();
        for (Object item : items) out.add(walk(rule, schema.getElementType(), item, field, now));
        return out;
      }
      case MAP: {
        if (!(value instanceof Map<?, ?> map)) return value;
        Map<Object, Object> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
          out.putIfAbsent(e.getKey(), walk(rule, schema.getValueType(), e.getValue(), field, now));
        }
        return out;
      }
      case RECORD: {
        if (value == null) return null;
        IndexedRecord rec = (IndexedRecord) value;
        Schema recordSchema = rec.getSchema();
        for (Schema.Field f : recordSchema.getFields()) {
          Schema.Field declared = schema.getField(f.name());
          if (declared == null) declared = f;
          String fullName = recordSchema.getFullName() + "." + f.name();
          Set<String> tags = inlineTags(declared);
          Set<String> byPath = pathTags(fullName);
          if (!byPath.isEmpty()) {
            tags = new LinkedHashSet<>(tags);
            tags.addAll(byPath);
          }
          String kind = typeName(declared.schema());
          Field entered = field;
          // RuleContext.enterField: a primitive field whose tags miss the rule's is not entered
          if (!primitive(kind) || rule.tags().isEmpty() || !disjoint(tags, rule.tags())) {
            entered = new Field(rec, fullName, f.name(), kind, tags);
          }
          Object v = rec.get(f.pos());
          if (v instanceof Utf8) v = v.toString();
          Object nv = walk(rule, declared.schema(), v, entered, now);
          if ("CONDITION".equals(rule.kind())) {
            if (Boolean.FALSE.equals(nv)) throw new RuleFailed();
          } else {
            rec.put(f.pos(), nv);
          }
        }
        return rec;
      }
      default: {
        if (field == null) return value;
        if (!rule.tags().isEmpty() && disjoint(field.tags, rule.tags())) return value;
        return fieldTransform(rule, value, field, now);
      }
    }
  }

  private Object fieldTransform(Rule rule, Object value, Field field, Now now)
      throws CelEvaluationException, CelValidationException {
    if (!primitive(field.typeName)) return value;
    Map<String, Object> args = new LinkedHashMap<>();
    args.put("value", value != null ? value : com.google.protobuf.NullValue.NULL_VALUE);
    args.put("fullName", field.fullName);
    args.put("name", field.name);
    args.put("typeName", field.typeName);
    args.put("tags", new ArrayList<>(field.tags));
    args.put("message", field.container);
    Object result = withGuard(rule, value, args, now);
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

  static boolean primitive(String typeName) {
    return switch (typeName) {
      case "STRING", "BYTES", "INT", "LONG", "FLOAT", "DOUBLE", "BOOLEAN", "NULL" -> true;
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

  private Object withGuard(Rule rule, Object subject, Map<String, Object> args, Now now)
      throws CelEvaluationException, CelValidationException {
    String expr = rule.expr() == null ? "" : rule.expr();
    boolean guardOff = Boolean.parseBoolean(rule.params().get(GUARD_OFF));
    Bound bound = bind(args, rule);
    if (!guardOff) {
      int at = expr.indexOf(';');
      if (at >= 0) {
        String guard = expr.substring(0, at);
        if (!guard.trim().isEmpty()) {
          Object ok = Boolean.FALSE;
          try {
            ok = eval(guard, bound, now);
          } catch (CelEvaluationException | CelValidationException | RuntimeException e) {
            ok = Boolean.FALSE; // a guard that fails skips the body
          }
          if (!Boolean.TRUE.equals(ok)) {
            return "CONDITION".equals(rule.kind()) ? Boolean.TRUE : subject;
          }
        }
        expr = expr.substring(at + 1);
      }
    }
    Object result = eval(expr, bound, now);
    // CelExecutor.transform: an expression that gives back the bound message leaves it as is
    if (result == bound.values.get("message") && args.get("message") == subject) return subject;
    return result;
  }

  /** The variables as CEL sees them, and their declared types. */
  private record Bound(Map<String, Object> values, Map<String, CelType> types, Schema schema) {}

  private static Bound bind(Map<String, Object> args, Rule rule) {
    Map<String, Object> values = new HashMap<>();
    Map<String, CelType> types = new LinkedHashMap<>();
    Schema schema = null;
    Object message = args.get("message");
    if (message instanceof IndexedRecord r) schema = r.getSchema();
    for (Map.Entry<String, Object> e : args.entrySet()) {
      types.put(e.getKey(), celTypeOf(e.getValue()));
      values.put(e.getKey(), toCel(e.getValue()));
    }
    types.put("now", SimpleType.TIMESTAMP);
    return new Bound(values, types, schema);
  }

  private Object eval(String expr, Bound bound, Now now)
      throws CelEvaluationException, CelValidationException {
    Compiled compiled = programs.computeIfAbsent(
        new ProgramKey(expr, bound.types, bound.schema), k -> compile(k));
    if (compiled.failure != null) throw compiled.failure;
    Map<String, Object> values = bound.values;
    return compiled.program.eval(
        name -> "now".equals(name) ? Optional.of(now.get()) : Optional.ofNullable(values.get(name)));
  }

  private record ProgramKey(String expr, Map<String, CelType> types, Schema schema) {}

  private static final class Compiled {
    final CelRuntime.Program program;
    final CelValidationException failure;

    Compiled(CelRuntime.Program program, CelValidationException failure) {
      this.program = program;
      this.failure = failure;
    }
  }

  private static Compiled compile(ProgramKey key) {
    boolean structs = key.schema != null
        && key.types.values().stream().anyMatch(t -> t instanceof StructTypeReference);
    try {
      if (structs) {
        try {
          return new Compiled(build(key.expr, key.types, key.schema), null);
        } catch (CelValidationException first) {
          Map<String, CelType> loose = new LinkedHashMap<>();
          for (Map.Entry<String, CelType> e : key.types.entrySet()) {
            loose.put(e.getKey(), e.getValue() instanceof StructTypeReference
                ? MapType.create(SimpleType.STRING, SimpleType.DYN) : e.getValue());
          }
          try {
            return new Compiled(build(key.expr, loose, null), null);
          } catch (CelValidationException second) {
            return new Compiled(null, first);
          }
        }
      }
      return new Compiled(build(key.expr, key.types, null), null);
    } catch (CelValidationException e) {
      return new Compiled(null, e);
    }
  }

  @SuppressWarnings("deprecation") // math(CelOptions): the call Confluent's CelUtils makes
  private static CelRuntime.Program build(String expr, Map<String, CelType> types, Schema schema)
      throws CelValidationException {
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
    CelRuntimeBuilder runtime = CelRuntimeFactory.standardCelRuntimeBuilder()
        .setOptions(CelOptions.DEFAULT)
        .addLibraries(CelExtensions.strings(), CelExtensions.math(CelOptions.DEFAULT))
        .setStandardEnvironmentEnabled(false)
        .setStandardFunctions(CelStandardFunctions.newBuilder()
            .excludeFunctions(StandardFunction.MATCHES)
            .build())
        .addFunctionBindings(
            CelFunctionBinding.from("matches", String.class, String.class, Engine::fullMatch),
            CelFunctionBinding.from(
                "matches_string", String.class, String.class, Engine::fullMatch));
    CelCompiler built = compiler.build();
    CelAbstractSyntaxTree ast = built.compile(expr).getAst();
    try {
      return runtime.build().createProgram(ast);
    } catch (CelEvaluationException e) {
      throw new IllegalStateException(e);
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

  /** {@code now}: one instant per record, taken when a rule first asks. */
  static final class Now {
    private Timestamp at;

    Timestamp get() {
      if (at == null) {
        Instant i = Instant.now();
        at = Timestamp.newBuilder().setSeconds(i.getEpochSecond()).setNanos(i.getNano()).build();
      }
      return at;
    }
  }

  /** A variable's declared CEL type, from its value (CelUtils.findCelType's rules). */
  static CelType celTypeOf(Object v) {
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

  /** A value as CEL is given it (CelUtils.toCelValue's rules). */
  static Object toCel(Object v) {
    if (v == null || v instanceof com.google.protobuf.NullValue) return NullValue.NULL_VALUE;
    if (v instanceof IndexedRecord r) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (Schema.Field f : r.getSchema().getFields()) out.put(f.name(), toCel(r.get(f.pos())));
      return out;
    }
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
        Object plain = v instanceof Map<?, ?> || v instanceof List<?> ? v : plainOf(v);
        int branch = GenericData.get().resolveUnion(schema, plain);
        return toAvro(v, schema.getTypes().get(branch));
      }
      default:
        throw new AvroTypeException("Unsupported Avro type: " + schema.getType());
    }
  }

  private static Object plainOf(Object v) {
    if (v instanceof CelByteString b) return ByteBuffer.wrap(b.toByteArray());
    return v;
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
