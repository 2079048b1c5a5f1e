package dev.schemacli.converters;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Cumulative counts of one v2 partition, kept in its committed offset's metadata as
 * {@code {"v":1,"converted":N,"dead_letter":N,"skipped":N,"tombstone":N}} and a NUL: the format
 * of {@code converters.txsink.Counts}, which reads them on the driver.
 *
 * <p>The NUL is for librdkafka's readers: librdkafka copies a fetched offset's metadata without a
 * terminator and confluent-kafka reads it as a C string, so without one of our own it reads on
 * past the end (librdkafka issue 4649).
 */
final class Counts {
  static final int CONVERTED = 0;
  static final int DEAD_LETTER = 1;
  static final int SKIPPED = 2;
  static final int TOMBSTONE = 3;
  static final String[] NAMES = {"converted", "dead_letter", "skipped", "tombstone"};
  private static final UTF8String[] KINDS = {
    UTF8String.fromString(NAMES[0]),
    UTF8String.fromString(NAMES[1]),
    UTF8String.fromString(NAMES[2]),
    UTF8String.fromString(NAMES[3]),
  };
  private static final ObjectMapper JSON = new ObjectMapper();

  private final long[] n = new long[NAMES.length];

  /** The index of a row's {@code kind} column; throws for a kind the converter never writes. */
  static int kind(UTF8String name) {
    for (int i = 0; i < KINDS.length; i++) {
      if (KINDS[i].equals(name)) {
        return i;
      }
    }
    throw new IllegalArgumentException("unknown row kind: " + name);
  }

  static int kind(String name) {
    return kind(UTF8String.fromString(name));
  }

  void add(int kind) {
    n[kind]++;
  }

  Counts plus(Counts other) {
    Counts sum = new Counts();
    for (int i = 0; i < n.length; i++) {
      sum.n[i] = n[i] + other.n[i];
    }
    return sum;
  }

  /** The offset metadata: {@link #json} and the NUL. */
  String metadata() {
    return json() + '\u0000';
  }

  String json() {
    StringBuilder out = new StringBuilder("{\"v\":1");
    for (int i = 0; i < n.length; i++) {
      out.append(",\"").append(NAMES[i]).append("\":").append(n[i]);
    }
    return out.append('}').toString();
  }

  /** The counts in an offset's metadata; zero for none. */
  static Counts fromMetadata(String metadata) {
    Counts counts = new Counts();
    if (metadata == null || metadata.isEmpty()) {
      return counts;
    }
    try {
      int end = metadata.indexOf('\u0000');
      JsonNode data = JSON.readTree(end < 0 ? metadata : metadata.substring(0, end));
      if (data == null || data.path("v").asInt(0) != 1) {
        throw new IllegalStateException();
      }
      for (int i = 0; i < NAMES.length; i++) {
        counts.n[i] = data.path(NAMES[i]).asLong(0);
      }
      return counts;
    } catch (Exception e) {
      String shown = metadata.length() > 80 ? metadata.substring(0, 80) : metadata;
      throw new IllegalStateException(
          "offset metadata not written by the converter: '" + shown + "'");
    }
  }
}
