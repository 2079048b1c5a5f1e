"""Where the CPU went in each road of a bench_converter.py run profiled with JFR.

    JAVA_TOOL_OPTIONS="-XX:StartFlightRecording=filename=DIR/,settings=profile" \\
        .venv/bin/python bench/bench_converter.py --messages 200000 --skip-python
    .venv/bin/python bench/profile/breakdown.py PHASES.json DIR/*.jfr

Every JVM the bench starts (Spark's, the Kafka Streams anchor's; the broker is killed, so its
recording is lost) writes a recording; for each road this prints, per recording with samples in
that road's timed windows (warm rounds only), the share of samples by library (the first frame
from the top that is not the JDK's) and by thread kind (bench/profile/JfrBreakdown.java).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROADS = {
    "cp-copy": "(a) passthrough",
    "cp-hdr": "(a') + headers",
    "cp-conv": "(b) at-least-once",
    "cp-eo": "(b') exactly-once, SQL road",
    "cp-fo": "(b'') exactly-once, fast road",
    "cp-fd": "(b*) exactly-once, fast road, every record by Avro's datum reader",
    "bench-ks": "(k) Kafka Streams",
}


# the methods whose share of the task threads' samples (on the stack) the breakdown shows
WITHIN = (
    "dev.schemacli.",
    "org.apache.avro.generic.GenericDatumReader.read",
    "org.apache.avro.generic.GenericDatumWriter.write",
    "org.apache.kafka.clients.producer.KafkaProducer.send",
    "org.apache.spark.sql.kafka010.KafkaBatchPartitionReader.next",
    "org.apache.spark.sql.kafka010.KafkaRowWriter.sendRow",
)


def road(name: str) -> tuple[str, int] | None:
    m = re.match(r"^(.*?)-(?:[0-9a-f]{6}-)?(\d+)$", name)
    if not m or m.group(1) not in ROADS:
        return None
    return ROADS[m.group(1)], int(m.group(2))


def main(argv: list[str]) -> int:
    phases = json.loads(Path(argv[0]).read_text())
    windows: dict[str, list[str]] = defaultdict(list)
    for name, start, end in phases:
        found = road(name)
        if found and found[1] > 0:  # round 0 is the warm-up
            windows[found[0]] += [f"{start:.3f}", f"{end:.3f}"]
    out = {}
    for label, bounds in windows.items():
        for jfr in argv[1:]:
            got = subprocess.run(
                ["java", str(HERE / "JfrBreakdown.java"), jfr, *bounds],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            data = json.loads(got.strip().splitlines()[-1])
            if data["samples"] < 50:
                continue
            n = data["samples"]

            def share(d: dict[str, int], n: int = n) -> dict[str, float]:
                return {
                    k: round(100 * v / n, 1) for k, v in sorted(d.items(), key=lambda kv: -kv[1])
                }

            tasks = data["thread"].get("Spark tasks", 0)

            def task_share(d: dict[str, int], n: int = tasks) -> dict[str, float]:
                top = sorted(d.items(), key=lambda kv: -kv[1])[:15]
                return {k: round(100 * v / n, 1) for k, v in top} if n else {}

            out[f"{label} [{Path(jfr).name}]"] = {
                "samples": n,
                "library_pct": share(data["library"]),
                "thread_pct": share(data["thread"]),
                # of the Spark task threads' samples: the first non-JDK method, and the methods
                # on the stack (the per-record work: our writer, Avro, the producer, the source)
                "task_method_pct": task_share(data["method"]),
                "task_within_pct": task_share(
                    {k: v for k, v in data["within"].items() if k.startswith(WITHIN)}
                ),
            }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
