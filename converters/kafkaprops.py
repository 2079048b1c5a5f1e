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
"""

from __future__ import annotations

import re
from collections.abc import Mapping

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


def spark_options(properties: Mapping[str, str]) -> dict[str, str]:
    """``{"kafka.k": v}`` from the file, without the librdkafka-only lines."""
    return {k: v for k, v in properties.items() if not k.startswith("kafka." + ONLY_LIBRDKAFKA)}


def librdkafka_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The same file's settings for librdkafka (see the module doc); ``properties`` as
    ``converters.job.read_properties`` gives them (``kafka.``-prefixed)."""
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
