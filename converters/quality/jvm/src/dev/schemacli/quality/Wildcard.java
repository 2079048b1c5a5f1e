package dev.schemacli.quality;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * A metadata tag's field path pattern, as Confluent's serializers match it: {@code *} any run of
 * characters without a dot, {@code **} any run, {@code ?} one character other than a dot; the
 * whole path must match.
 */
final class Wildcard {
  private static final Map<String, Pattern> CACHE = new ConcurrentHashMap<>();

  private Wildcard() {}

  static boolean matches(String path, String pattern) {
    return CACHE.computeIfAbsent(pattern, p -> Pattern.compile(regex(p))).matcher(path).matches();
  }

  static String regex(String glob) {
    String src = glob.replace("**.*", "**");
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < src.length(); i++) {
      char c = src.charAt(i);
      switch (c) {
        case '*' -> {
          if (i + 1 < src.length() && src.charAt(i + 1) == '*') {
            out.append(".*");
            i++;
          } else {
            out.append("[^.]*");
          }
        }
        case '?' -> out.append("[^.]");
        case '.', '+', '{', '}', '(', ')', '|', '^', '$' -> out.append('\\').append(c);
        case '\\' -> {
          out.append('\\');
          if (i + 2 < src.length()) {
            out.append('\\').append(src.charAt(i + 1));
            i++;
          } else {
            out.append('\\');
          }
        }
        default -> out.append(c);
      }
    }
    return out.toString();
  }
}
