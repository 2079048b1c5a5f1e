"""One ``--kafka-properties`` file for two kinds of client: the Java clients (Spark's Kafka source
and sink, the exactly-once writer on the executors) and librdkafka (through confluent-kafka: the
driver's read of the committed progress, ``status``, ``finish``, ``replay``).

The file is written in the Java client's names, as Spark wants them. For librdkafka:

* names both clients share pass as they are (``security.protocol``, ``sasl.mechanism``,
  ``sasl.username`` ..., ``ssl.ca.location``, ``ssl.keystore.location`` for PKCS#12,
  ``client.id``, ``socket.*``, ...);
* ``sasl.jaas.config`` with a ``PlainLoginModule`` or ``ScramLoginModule`` becomes
  ``sasl.username`` / ``sasl.password``;
* a line ``librdkafka.<name>=<value>`` is for librdkafka alone (e.g.
  ``librdkafka.ssl.ca.location=/etc/ssl/ca.pem`` beside the Java truststore) and never reaches
  Spark; it wins over a translated value;
* everything else (consumer tuning such as ``max.poll.records``, Java truststores) is Spark's
  alone: librdkafka refuses names it does not know.

:func:`load` reads the file and has librdkafka judge its share at once (a name it does not know
on a ``librdkafka.`` line, a value it refuses): an input error naming the file's line, before
any Spark starts or any broker is asked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from converters.kafka.log import KAFKA_LOGGER
from schemacli import redact
from schemacli.errors import InputError, Location
from schemacli.textfile import SETTINGS_LIMIT, read_utf8

ONLY_LIBRDKAFKA = "librdkafka."
SHARED_PREFIXES = ("security.", "sasl.", "ssl.", "socket.", "reconnect.", "metadata.max.age")
SHARED = {"client.id", "client.dns.lookup", "connections.max.idle.ms"}
JAVA_ONLY = {
    "sasl.jaas.config",
    "sasl.client.callback.handler.class",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.type",
    "ssl.truststore.certificates",
    "ssl.keystore.type",
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
    "ssl.protocol",
    "ssl.enabled.protocols",
    "ssl.provider",
    "ssl.secure.random.implementation",
    "ssl.engine.factory.class",
    "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms",
}
_JAAS = re.compile(r'\b(username|password)\s*=\s*"((?:[^"\\]|\\.)*)"')

# The Java clients' settings that bound the stall after a broker is lost (the converter's Spark
# source and writer, the census's JVM and Spark roads; docs/migration.md, "A lost broker"). A
# --kafka-properties file overrides them. Kafka gives a lost partition leader's partitions a new
# leader once the controller fences the broker (broker.session.timeout.ms, 9 s by default); the
# clients pick it up from their next metadata. What kept them waiting longer was a call bound by
# Kafka's defaults:
#  - default.api.timeout.ms (60 s): a blocking call of a consumer or admin client. Spark's Kafka
#    source lists offsets through an admin client; its call to a leader that left the cluster
#    was seen waiting for a node until this bound, then Spark retries with a new admin client
#    (fetchOffset.retryIntervalMs later, 10 ms): a lost broker stalled the converter ~60 s
#    (tests/integration/test_broker_loss.py). With 10 s the retry comes after the new leader.
#  - request.timeout.ms (30 s): a request in flight to a broker that went silent (its machine
#    lost, no connection reset) is given up after this; 10 s, and never more than the calls'
#    bound above (an admin client refuses default.api.timeout.ms < request.timeout.ms).
#  - socket.connection.setup.timeout.ms (10 s, doubling to 30 s): a connection to an address
#    that no longer answers; 5 s, at most 10.
# Nothing here changes what is committed: a call that times out fails its task, which Spark
# runs again, fencing and resuming from the committed offsets as after any failure.
FAILOVER_CONSUMER = {
    "default.api.timeout.ms": "10000",
    "request.timeout.ms": "10000",
    "socket.connection.setup.timeout.ms": "5000",
    "socket.connection.setup.timeout.max.ms": "10000",
}
FAILOVER_PRODUCER = {
    "request.timeout.ms": "10000",
    "socket.connection.setup.timeout.ms": "5000",
    "socket.connection.setup.timeout.max.ms": "10000",
}
# Spark's Kafka source lists offsets up to this many times before it fails the query (default 3,
# which with 10 s calls would give up after ~30 s of a leaderless partition): ~60 s.
SPARK_SOURCE_FAILOVER = {"fetchOffset.numRetries": "6"}


def with_failover(
    defaults: Mapping[str, str], given: Mapping[str, str], prefix: str = ""
) -> dict[str, str]:
    """``given`` (a --kafka-properties file's settings) over ``defaults`` (a client's, holding
    :data:`FAILOVER_CONSUMER`), every name with ``prefix`` (``"kafka."`` for Spark's options).
    A given request.timeout.ms above our default.api.timeout.ms, that one not given, raises it
    to match: Kafka's admin client refuses a default.api.timeout.ms below request.timeout.ms."""
    merged = {**defaults, **given}
    api, request = prefix + "default.api.timeout.ms", prefix + "request.timeout.ms"
    if api in merged and api not in given and request in given:
        try:
            merged[api] = str(max(int(merged[api]), int(given[request])))
        except ValueError:
            pass  # not a number: the client names the setting
    return merged


def client_config(
    bootstrap: str | None,
    properties: Mapping[str, Any] | None = None,
    role: Mapping[str, Any] | None = None,
    *,
    logger: bool = True,
) -> dict[str, Any]:
    """One librdkafka client's settings, built the same way for every consumer, producer and
    admin client: ``bootstrap.servers`` (when given), the client's own ``role`` settings (its
    group, isolation level, ...), the silent logger (``converters.kafka.log``), then the
    ``properties`` (already librdkafka's names, :func:`librdkafka_properties`), which win over
    the role's. A caller whose settings must win puts them on top of the result. ``logger=False``
    leaves librdkafka's log on stderr (the job's driver: its log is the job's)."""
    return {
        **({"bootstrap.servers": bootstrap} if bootstrap is not None else {}),
        **(role or {}),
        **({"logger": KAFKA_LOGGER} if logger else {}),
        **(properties or {}),
    }


def spark_options(properties: Mapping[str, str]) -> dict[str, str]:
    """``{"kafka.k": v}`` from the file, without the librdkafka-only lines."""
    return {k: v for k, v in properties.items() if not k.startswith("kafka." + ONLY_LIBRDKAFKA)}


def librdkafka_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The same file's settings for librdkafka (see the module doc); ``properties`` as
    :func:`load` gives them (``kafka.``-prefixed)."""
    out: dict[str, str] = {}
    only: dict[str, str] = {}
    for key, value in properties.items():
        name = key.removeprefix("kafka.")
        if name.startswith(ONLY_LIBRDKAFKA):
            only[name.removeprefix(ONLY_LIBRDKAFKA)] = value
        elif name == "sasl.jaas.config":
            creds = {m.group(1): m.group(2).replace('\\"', '"') for m in _JAAS.finditer(value)}
            if "LoginModule" in value and ("Plain" in value or "Scram" in value):
                out.update({f"sasl.{k}": v for k, v in creds.items()})
        elif name in JAVA_ONLY:
            continue
        elif name in SHARED or name.startswith(SHARED_PREFIXES):
            out[name] = value
    out.update(only)
    return out


# librdkafka settings naming a file: left out of the check when the file is read elsewhere (a
# driver on the cluster opens its own)
FILE_SETTINGS = {
    "ssl.ca.location",
    "ssl.crl.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.keystore.location",
    "sasl.kerberos.keytab",
}
_QUOTED = re.compile(r'"([^"]+)"')


def load(path: str | Path | None, *, files: bool = True) -> dict[str, str]:
    """The file's ``k=v`` lines (``#`` comments) as {"kafka.k": v}, ``{}`` for no file; an
    InputError naming the line when librdkafka refuses its share (``files=False`` leaves out the
    settings naming a file, for a driver on another machine, which opens its own). Nothing is
    connected to. Values are never logged."""

    if not path:
        return {}
    # The bounded reader: /dev/zero stops at the cap, a FIFO or a directory is named as such
    # at once (an InputError naming the file), never a hang or a MemoryError.
    text = read_utf8(
        Path(path),
        hint="Save it as UTF-8 text of key=value lines.",
        limit=SETTINGS_LIMIT,
        what="Kafka properties file",
    )
    entries = _entries(text)
    properties = {key: value for key, value, _ in entries}
    redact.remember_properties(properties)  # masked in all we print, librdkafka's words too
    refused = librdkafka_refuses(properties, files=files)
    if refused is not None:
        reason, name = refused
        raise InputError(
            f"librdkafka refuses the Kafka properties: {reason}",
            location=Location(source=str(path), line=_line_of(name, entries)),
            hint="Fix or remove that setting (librdkafka's names and values: "
            "https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md); a "
            "setting for the Java clients alone needs no librdkafka. prefix.",
        )
    return properties


def _entries(text: str) -> list[tuple[str, str, int]]:
    """(``kafka.``-prefixed key, value, line number) of each setting."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        k = k.strip()
        out.append((k if k.startswith("kafka.") else f"kafka.{k}", v.strip(), number))
    return out


def librdkafka_refuses(
    properties: Mapping[str, str], *, files: bool = True
) -> tuple[str, str | None] | None:
    """(librdkafka's reason, the librdkafka setting it names) when it will not make a client of
    :func:`librdkafka_properties`; None when it will. The client is made and closed at once."""
    from confluent_kafka import Consumer, KafkaError, KafkaException

    conf = librdkafka_properties(properties)
    if not files:
        conf = {k: v for k, v in conf.items() if k not in FILE_SETTINGS}
    try:
        Consumer(client_config(None, conf, {"group.id": "schemacli-check"})).close()
    except KafkaException as exc:
        error = exc.args[0]
        if error.code() != KafkaError._INVALID_ARG:
            raise
        reason = error.str()
        quoted = [n for n in _QUOTED.findall(reason) if n in conf]
        named = quoted[0] if quoted else next((n for n in conf if n in reason), None)
        return reason, named
    return None


def _line_of(name: str | None, entries: list[tuple[str, str, int]]) -> int | None:
    """The file's line that gave librdkafka setting ``name`` (the one that won)."""
    if name is None:
        return None
    lines = {key: number for key, _, number in entries}  # a key's last line is the one read
    jaas = "kafka.sasl.jaas.config" if name in ("sasl.username", "sasl.password") else None
    for key in (f"kafka.{ONLY_LIBRDKAFKA}{name}", f"kafka.{name}", jaas):
        if key in lines:  # in the order librdkafka_properties lets them win
            return lines[key]
    return None
