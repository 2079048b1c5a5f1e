"""Every wait on Kafka hears Ctrl-C within a second, and a migrate command asks Kafka only after
every local check.

librdkafka's blocking calls hold SIGINT back until they return, so each goes through
``converters.kafka.waits`` in slices of at most half a second. The subprocess tests use a
"blackhole" broker: a socket on 127.0.0.1 that accepts connections and never answers, so the
command waits on Kafka for as long as its timeout allows (15 s for v1's dependents); the test
waits for the command's connection (an event, not a sleep), sends SIGINT, and expects a clean
exit long before that timeout.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.extras import require

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples/mappings/taxi-ride-v2-to-v1.yaml"
SCHEMACLI = str(Path(sys.executable).parent / "schemacli")
HANG = 10.0  # seconds from SIGINT to exit: only a wait that ignores SIGINT (15 s here) gets near it
# seconds for the command to start and connect: it connects at once, but a loaded machine can take
# many seconds to start Python and import the Kafka client; only a broken test waits this long
START = 120.0


def _deployment(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    (state / "progress.json").write_text('{"totals": {"in": 1, "converted": 1}}')
    return state


@pytest.fixture
def blackhole():
    """A listening socket that accepts and never answers: a broker that hangs."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(START)
    accepted: list[socket.socket] = []
    yield server, accepted
    for conn in accepted:
        conn.close()
    server.close()


def _interrupt_once_connected(command: list[str], server, accepted, cwd: Path):
    proc = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        conn, _ = server.accept()  # the command's Kafka client reached the broker: it waits
        accepted.append(conn)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=HANG)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err


def test_ctrl_c_stops_finish_while_it_waits_on_a_silent_broker(tmp_path, blackhole):
    require("confluent_kafka", "kafka")
    server, accepted = blackhole
    state = _deployment(tmp_path)
    port = server.getsockname()[1]
    code, out, err = _interrupt_once_connected(
        [SCHEMACLI, "migrate", "finish", str(EXAMPLE), "--state-dir", str(state),
         "-b", f"127.0.0.1:{port}", "--interval", "0"],
        server, accepted, ROOT,
    )  # fmt: skip
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err, err
    assert not (state / "final-report.json").exists()


def test_ctrl_c_stops_status_while_it_waits_on_a_silent_broker(tmp_path, blackhole):
    require("confluent_kafka", "kafka")
    server, accepted = blackhole
    state = _deployment(tmp_path)
    port = server.getsockname()[1]
    code, _, err = _interrupt_once_connected(
        [SCHEMACLI, "migrate", "status", str(EXAMPLE), "--state-dir", str(state),
         "-b", f"127.0.0.1:{port}"],
        server, accepted, ROOT,
    )  # fmt: skip
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err, err


def test_ctrl_c_stops_a_registry_call_that_waits_on_a_silent_registry(blackhole):
    server, accepted = blackhole
    port = server.getsockname()[1]
    code, _, err = _interrupt_once_connected(
        [SCHEMACLI, "subjects", "list", "--registry", f"http://127.0.0.1:{port}",
         "--timeout", "60"],
        server, accepted, ROOT,
    )  # fmt: skip
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err, err


def test_finish_without_a_deployment_refuses_before_asking_kafka(tmp_path, blackhole):
    # the broker would hang for 15 s: an exit 2 without a connection shows Kafka was not asked
    server, _ = blackhole
    port = server.getsockname()[1]
    done = subprocess.run(
        [SCHEMACLI, "migrate", "finish", str(EXAMPLE), "--state-dir", str(tmp_path / "none"),
         "-b", f"127.0.0.1:{port}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "no converter state" in done.stderr and "Traceback" not in done.stderr
    server.settimeout(0)
    with pytest.raises(BlockingIOError):
        server.accept()  # nobody ever connected


class _SlowClient:
    """A librdkafka call that only answers after ``misses`` timeouts, recording each timeout."""

    def __init__(self, misses: int, code: int | None = None) -> None:
        self.misses, self.timeouts, self.code = misses, [], code

    def list_topics(self, topic, timeout):
        from confluent_kafka import KafkaError, KafkaException

        self.timeouts.append(timeout)
        if len(self.timeouts) <= self.misses:
            raise KafkaException(KafkaError(self.code or KafkaError._TRANSPORT))
        return "metadata"


def test_a_long_kafka_wait_is_made_of_slices_of_at_most_half_a_second():
    require("confluent_kafka", "kafka")
    from converters.kafka import waits

    client = _SlowClient(misses=5)
    assert waits.list_topics(client, "t", 10) == "metadata"
    assert len(client.timeouts) == 6 and max(client.timeouts) <= waits.SLICE


def test_a_request_whose_broker_left_the_cluster_is_asked_again():
    require("confluent_kafka", "kafka")
    from confluent_kafka import KafkaError

    from converters.kafka import waits

    # a lost broker, fenced by the controller: librdkafka destroys its handle with the request
    # still queued; the partition's new leader answers the next slice
    client = _SlowClient(misses=2, code=KafkaError._DESTROY_BROKER)
    assert waits.list_topics(client, "t", 10) == "metadata"
    assert len(client.timeouts) == 3


def test_a_leader_just_elected_is_asked_again_until_its_high_watermark_caught_up():
    require("confluent_kafka", "kafka")
    from confluent_kafka import KafkaError

    from converters.kafka import waits

    for code in (
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
    ):
        client = _SlowClient(misses=2, code=code)
        assert waits.list_topics(client, "t", 10) == "metadata"
        assert len(client.timeouts) == 3


def test_an_error_that_is_not_a_timeout_is_raised_at_once():
    require("confluent_kafka", "kafka")
    from confluent_kafka import KafkaError, KafkaException

    from converters.kafka import waits

    client = _SlowClient(misses=5, code=KafkaError._AUTHENTICATION)
    with pytest.raises(KafkaException):
        waits.list_topics(client, "t", 10)
    assert len(client.timeouts) == 1


def test_a_wait_that_never_answers_raises_its_last_error_at_the_deadline():
    require("confluent_kafka", "kafka")
    from confluent_kafka import KafkaException

    from converters.kafka import waits

    client = _SlowClient(misses=10**9)
    with pytest.raises(KafkaException):
        waits.list_topics(client, "t", 0.2)  # a short deadline: ends after a slice or two


def test_ctrl_c_inside_a_librdkafka_callback_is_a_keyboard_interrupt():
    from converters.kafka import waits

    def callback_interrupted(*_):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("consume returned a result with an exception set") from exc

    with pytest.raises(KeyboardInterrupt):
        waits.interruptible(callback_interrupted)


def test_a_transaction_call_that_timed_out_is_called_again_in_slices():
    require("confluent_kafka", "kafka")
    from confluent_kafka import KafkaError, KafkaException

    from converters.kafka import waits

    timeouts = []

    def commit_transaction(timeout):
        timeouts.append(timeout)
        if len(timeouts) < 3:  # librdkafka: a timed-out commit is retriable, call it again
            raise KafkaException(KafkaError(KafkaError.REQUEST_TIMED_OUT, retriable=True))

    waits.sliced(commit_transaction, 120)
    assert len(timeouts) == 3 and max(timeouts) <= waits.SLICE


def test_a_transaction_that_must_be_aborted_is_not_retried():
    require("confluent_kafka", "kafka")
    from confluent_kafka import KafkaError, KafkaException

    from converters.kafka import waits

    calls = []

    def commit_transaction(timeout):
        calls.append(timeout)
        raise KafkaException(KafkaError(KafkaError._FENCED, txn_requires_abort=True))

    with pytest.raises(KafkaException):
        waits.sliced(commit_transaction, 120)
    assert len(calls) == 1


class _Queue:
    """A producer whose queue empties after a few flushes; a consumer that records its wait."""

    def __init__(self, flushes: int) -> None:
        self.left, self.waits = flushes, []

    def flush(self, timeout):
        self.waits.append(timeout)
        self.left -= 1
        return max(self.left, 0)

    def consume(self, count, timeout):
        self.waits.append(timeout)
        return []


def test_flush_and_consume_wait_at_most_half_a_second_at_a_time():
    from converters.kafka import waits

    producer = _Queue(flushes=4)
    assert waits.flush(producer, 10) == 0
    assert len(producer.waits) == 4 and max(producer.waits) <= waits.SLICE
    consumer = _Queue(flushes=0)
    waits.consume(consumer, 500, timeout=30)
    assert consumer.waits == [waits.SLICE]
