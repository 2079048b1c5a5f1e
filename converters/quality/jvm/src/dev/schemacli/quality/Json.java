package dev.schemacli.quality;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The rule set and the subject's metadata tags, read from the JSON Python writes. */
final class Json {
  static final ObjectMapper MAPPER = new ObjectMapper();

  private Json() {}

  /** A rule set's domainRules as the registry's JSON names them. */
  static List<Engine.Rule> rules(JsonNode list) {
    List<Engine.Rule> out = new ArrayList<>();
    if (list == null || list.isNull()) return out;
    for (JsonNode r : list) {
      Set<String> tags = new LinkedHashSet<>();
      if (r.has("tags")) for (JsonNode t : r.get("tags")) tags.add(t.asText());
      Map<String, String> params = new LinkedHashMap<>();
      if (r.hasNonNull("params")) {
        r.get("params").fields().forEachRemaining(e -> params.put(e.getKey(), e.getValue().asText()));
      }
      out.add(new Engine.Rule(
          text(r, "name"),
          text(r, "kind") == null ? "CONDITION" : text(r, "kind"),
          text(r, "mode") == null ? "WRITE" : text(r, "mode"),
          text(r, "type"),
          tags,
          params,
          text(r, "expr"),
          text(r, "onSuccess"),
          text(r, "onFailure"),
          r.path("disabled").asBoolean(false)));
    }
    return out;
  }

  /** metadata.tags: a field path pattern to its tags. */
  static Map<String, Set<String>> tags(JsonNode node) {
    Map<String, Set<String>> out = new LinkedHashMap<>();
    if (node == null || node.isNull()) return out;
    node.fields().forEachRemaining(e -> {
      Set<String> tags = new LinkedHashSet<>();
      for (JsonNode t : e.getValue()) tags.add(t.asText());
      out.put(e.getKey(), tags);
    });
    return out;
  }

  private static String text(JsonNode node, String name) {
    JsonNode v = node.get(name);
    return v == null || v.isNull() ? null : v.asText();
  }
}
