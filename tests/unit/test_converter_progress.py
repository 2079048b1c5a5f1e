"""The converter's counts are read from the query by the driver's own thread, once per batch."""

from __future__ import annotations

import io
import json

from converters.pipeline.progress import METRICS, ProgressFile, follow
from converters.pipeline.stream import watch


def report(batch: int, *, rows: int = 0, converted: int = 0, dead: int = 0) -> dict:
    metrics = {"in": rows, "converted": converted, "dead_letter": dead, "skipped": 0}
    return {"batchId": batch, "numInputRows": rows, "observedMetrics": {METRICS: metrics}}


class Progress:
    """What pyspark's StreamingQueryProgress offers the follower: its JVM JSON."""

    def __init__(self, data: dict) -> None:
        self.json = json.dumps(data)


class FakeQuery:
    """A query whose batches have finished; ``ends_after`` waits of awaitTermination(1)."""

    def __init__(self, reports: list[dict], *, ends_after: int = 0, fails: str | None = None):
        self.reports = [Progress(r) for r in reports]
        self.waits = 0
        self.ends_after = ends_after
        self.fails = fails
        self.stopped = False

    @property
    def lastProgress(self):  # noqa: N802
        return self.reports[-1] if self.reports else None

    @property
    def recentProgress(self):  # noqa: N802
        return list(self.reports)

    def awaitTermination(self, timeout):  # noqa: N802
        self.waits += 1
        if self.fails:
            raise RuntimeError(self.fails)
        return self.waits > self.ends_after

    def stop(self):
        self.stopped = True


def totals(path) -> dict:
    return json.loads(path.read_text())["totals"]


def test_a_query_that_ends_before_any_wait_still_has_its_last_batch_counted(tmp_path):
    # The fresh-machine failure: an --available-now query ends while its progress event is still
    # on Spark's listener bus. Read from the query itself, the batch is counted before exit.
    path = tmp_path / "progress.json"
    query = FakeQuery([report(0, rows=120, converted=95, dead=24)], ends_after=0)
    assert watch(query, ProgressFile(path)) == 0
    assert totals(path)["in"] == 120 and totals(path)["converted"] == 95
    assert totals(path)["dead_letter"] == 24


def test_each_batch_is_counted_once_however_often_it_is_seen(tmp_path):
    progress = ProgressFile(tmp_path / "progress.json")
    query = FakeQuery([report(0, rows=10, converted=10)])
    out = io.StringIO()
    assert follow(query, progress, out=out) == 1
    assert follow(query, progress, out=out) == 0
    assert progress.data["totals"]["in"] == 10
    assert out.getvalue() == "batch 0: in 10 converted 10 dead-lettered 0 skipped 0\n"


def test_batches_finished_between_two_looks_are_filled_in_from_recent_progress(tmp_path):
    progress = ProgressFile(tmp_path / "progress.json")
    query = FakeQuery([report(0, rows=1, converted=1)])
    follow(query, progress, out=io.StringIO())
    query.reports += [Progress(report(b, rows=2, converted=2)) for b in (1, 2, 3)]
    out = io.StringIO()
    assert follow(query, progress, out=out) == 3
    assert progress.data["totals"]["in"] == 7 and progress.last_batch == 3
    assert [line.split(":")[0] for line in out.getvalue().splitlines()] == [
        "batch 1",
        "batch 2",
        "batch 3",
    ]


def test_an_idle_trigger_without_metrics_counts_nothing_but_keeps_the_rates(tmp_path):
    progress = ProgressFile(tmp_path / "progress.json")
    idle = {"batchId": 0, "numInputRows": 0, "inputRowsPerSecond": 0.0, "observedMetrics": {}}
    assert follow(FakeQuery([idle]), progress, out=io.StringIO()) == 0
    saved = json.loads((tmp_path / "progress.json").read_text())
    assert saved["totals"]["in"] == 0 and saved["last_batch"] == -1
    assert saved["input_rows_per_second"] == 0.0


def test_a_restarted_job_does_not_count_a_batch_its_checkpoint_replays(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text(json.dumps({"totals": {"in": 5, "converted": 5}, "last_batch": 4}))
    progress = ProgressFile(path)
    follow(FakeQuery([report(4, rows=5, converted=5)]), progress, out=io.StringIO())
    assert progress.data["totals"]["in"] == 5


def test_a_failed_query_still_counts_what_it_finished_and_exits_1(tmp_path, capsys):
    path = tmp_path / "progress.json"
    query = FakeQuery([report(0, rows=3, converted=3)], fails="Kafka went away\nat ...")
    assert watch(query, ProgressFile(path)) == 1
    assert totals(path)["in"] == 3
    err = capsys.readouterr().err
    assert "converter failed: Kafka went away" in err and "at ..." not in err


def test_a_failed_query_names_no_credential_from_the_error_it_quotes(tmp_path, capsys):
    from schemacli import redact

    redact.remember("kafka-s3cret")  # as loading the properties file does
    query = FakeQuery(
        [], fails='SASL failed: PlainLoginModule password="kafka-s3cret" at sasl://u:pw@b:9'
    )
    assert watch(query, ProgressFile(tmp_path / "progress.json")) == 1
    err = capsys.readouterr().err
    assert "converter failed: SASL failed" in err
    assert "kafka-s3cret" not in err and "u:pw@" not in err
