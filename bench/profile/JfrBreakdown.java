import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a JVM's CPU went during the windows of a bench run (bench/bench_converter.py writes
 * phases.json; bench/profile/breakdown.py calls this): JFR execution samples in [start, end)
 * (epoch seconds), each counted once by the first frame from the top that is not the JDK's,
 * grouped by library, and by thread kind. Run as a single-file program:
 * {@code java bench/profile/JfrBreakdown.java <recording.jfr> <start> <end> [<start> <end>...]}.
 */
public final class JfrBreakdown {
  static final String[][] LIBRARIES = {
    {"org.apache.avro.", "Avro (datum reader/writer)"},
    {"org.apache.spark.sql.avro.", "Spark from_avro/to_avro"},
    {"org.apache.spark.sql.catalyst.expressions.GeneratedClass", "Spark generated code"},
    {"org.apache.spark.sql.catalyst.", "Spark SQL rows/expressions"},
    {"org.apache.spark.sql.execution.", "Spark SQL execution"},
    {"org.apache.spark.sql.kafka010.", "Spark Kafka source/sink"},
    {"org.apache.spark.unsafe.", "Spark unsafe rows/strings"},
    {"org.apache.spark.", "Spark core"},
    {"org.apache.kafka.clients.producer.", "Kafka producer"},
    {"org.apache.kafka.clients.consumer.", "Kafka consumer"},
    {"org.apache.kafka.common.record.", "Kafka record batches"},
    {"org.apache.kafka.streams.", "Kafka Streams"},
    {"org.apache.kafka.", "Kafka (other)"},
    {"dev.schemacli.", "schemacli JVM writer"},
    {"scala.", "Scala library"},
    {"py4j.", "Py4J"},
    {"io.netty.", "Netty"},
    {"com.github.luben.zstd", "compression"},
    {"org.xerial.snappy", "compression"},
    {"net.jpountz", "compression"},
  };

  public static void main(String[] args) throws Exception {
    List<Instant[]> windows = new ArrayList<>();
    for (int i = 1; i + 1 < args.length; i += 2) {
      windows.add(new Instant[] {seconds(args[i]), seconds(args[i + 1])});
    }
    Map<String, Integer> byLibrary = new TreeMap<>();
    Map<String, Integer> byThread = new TreeMap<>();
    // Spark's task threads only: the first method that is not the JDK's, and every method on
    // the stack (once per sample): where a road's per-record work goes
    Map<String, Integer> byMethod = new TreeMap<>();
    Map<String, Integer> within = new TreeMap<>();
    int total = 0;
    for (RecordedEvent e : RecordingFile.readAllEvents(Path.of(args[0]))) {
      if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
        continue;
      }
      Instant t = e.getStartTime();
      boolean in = false;
      for (Instant[] w : windows) {
        in |= !t.isBefore(w[0]) && t.isBefore(w[1]);
      }
      if (!in) {
        continue;
      }
      total++;
      byLibrary.merge(library(e.getStackTrace()), 1, Integer::sum);
      var thread = e.getThread("sampledThread");
      String kind = threadKind(thread == null ? "?" : thread.getJavaName());
      byThread.merge(kind, 1, Integer::sum);
      if (kind.equals("Spark tasks") && e.getStackTrace() != null) {
        List<RecordedFrame> frames = e.getStackTrace().getFrames();
        byMethod.merge(firstOwn(frames), 1, Integer::sum);
        frames.stream().map(JfrBreakdown::method).distinct()
            .forEach(m -> within.merge(m, 1, Integer::sum));
      }
    }
    System.out.println("{\"samples\": " + total + ", \"library\": " + json(byLibrary)
        + ", \"thread\": " + json(byThread) + ", \"method\": " + json(top(byMethod, 40))
        + ", \"within\": " + json(top(within, 80)) + "}");
  }

  static String method(RecordedFrame f) {
    return f.getMethod().getType().getName() + "." + f.getMethod().getName();
  }

  static String firstOwn(List<RecordedFrame> frames) {
    for (RecordedFrame f : frames) {
      String cls = f.getMethod().getType().getName();
      if (!cls.startsWith("java.") && !cls.startsWith("jdk.") && !cls.startsWith("sun.")) {
        return method(f);
      }
    }
    return "JDK only";
  }

  static Map<String, Integer> top(Map<String, Integer> m, int n) {
    Map<String, Integer> out = new TreeMap<>();
    m.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(n)
        .forEach(x -> out.put(x.getKey(), x.getValue()));
    return out;
  }

  static Instant seconds(String s) {
    double d = Double.parseDouble(s);
    return Instant.ofEpochSecond((long) d, (long) ((d - Math.floor(d)) * 1e9));
  }

  static String library(RecordedStackTrace stack) {
    if (stack == null) {
      return "?";
    }
    for (RecordedFrame f : stack.getFrames()) {
      String cls = f.getMethod().getType().getName();
      if (cls.startsWith("java.") || cls.startsWith("jdk.") || cls.startsWith("sun.")) {
        continue;
      }
      for (String[] lib : LIBRARIES) {
        if (cls.startsWith(lib[0])) {
          return lib[1];
        }
      }
      return "other: " + cls.replaceAll("\\.[^.]*$", "");
    }
    return "JDK only";
  }

  static String threadKind(String name) {
    if (name == null) {
      return "?";
    }
    if (name.startsWith("Executor task launch")) {
      return "Spark tasks";
    }
    if (name.startsWith("kafka-producer-network-thread")) {
      return "Kafka producer I/O";
    }
    if (name.contains("StreamThread")) {
      return "Kafka Streams threads";
    }
    return name.replaceAll("[-0-9 #]+$", "").replaceAll("\\d+", "N");
  }

  static String json(Map<String, Integer> m) {
    StringBuilder b = new StringBuilder("{");
    for (Map.Entry<String, Integer> e : m.entrySet()) {
      b.append(b.length() > 1 ? ", " : "").append('"').append(e.getKey().replace("\"", "'"))
          .append("\": ").append(e.getValue());
    }
    return b.append('}').toString();
  }
}
