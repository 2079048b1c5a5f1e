"""Taxi rides on Kafka, as the teams of the example would produce and read them.

    python examples/taxi.py produce --topic taxi-rides --version 1 --count 20 [--bad 2]
    python examples/taxi.py consume --topic taxi-rides --group billing [--count N] [--seconds S]

``produce`` writes rides with confluent-kafka's AvroSerializer against the latest version of
``<topic>-value`` (it must be registered: ``schemacli register``); version 2 is the breaking
contract, ``total_amount`` a string (``--bad N`` makes the last N of them non-numbers).
``consume`` reads with AvroDeserializer in a consumer group, commits, and prints each ride; it
stops after ``--count`` rides or ``--seconds`` without one. Bootstrap servers and registry from
``-b`` / ``-r`` or ``KAFKA_BOOTSTRAP`` / ``SCHEMACLI_REGISTRY_URL``. Needs the ``kafka`` extra.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time


def ride(n: int, version: int, bad: bool = False) -> dict:
    amount = round(5 + n * 1.25, 2)
    return {
        "vendorId": n % 3 + 1,
        "passenger_count": n % 4 + 1,
        "trip_distance": round(0.5 + n * 0.25, 2),
        "payment_type": n % 2 + 1,
        "total_amount": ("n/a" if bad else f"{amount:.2f}") if version == 2 else amount,
    }


def produce(args: argparse.Namespace) -> int:
    from confluent_kafka import Producer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    registry = SchemaRegistryClient({"url": args.registry})
    subject = f"{args.topic}-value"
    latest = registry.get_latest_version(subject)
    serializer = AvroSerializer(
        registry, latest.schema.schema_str, conf={"auto.register.schemas": False}
    )
    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": "all"})
    context = SerializationContext(args.topic, MessageField.VALUE)
    for n in range(args.count):
        bad = n >= args.count - args.bad
        value = serializer(ride(n, args.version, bad), context)
        producer.produce(args.topic, key=f"ride-{n}".encode(), value=value)
    if producer.flush(30):
        print("taxi: not every ride was delivered", file=sys.stderr)
        return 1
    print(f"produced {args.count} v{args.version} rides to {args.topic} ({args.bad} bad)")
    return 0


def consume(args: argparse.Namespace) -> int:
    from confluent_kafka import Consumer
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    deserializer = AvroDeserializer(SchemaRegistryClient({"url": args.registry}))
    consumer = Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": args.group,
            "client.id": f"{args.group}-app",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    # leave the group cleanly on SIGTERM too (kill): Kafka then sees the member go at once
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    consumer.subscribe([args.topic])
    read, last = 0, time.monotonic()
    try:
        while (args.count is None or read < args.count) and time.monotonic() - last < args.seconds:
            msg = consumer.poll(0.5)
            if msg is None or msg.error() is not None:
                continue
            value = deserializer(msg.value(), SerializationContext(args.topic, MessageField.VALUE))
            marker = dict(msg.headers() or ()).get("schemacli.converted-from")
            origin = "converted from v2" if marker else "written as v1"
            amount = value["total_amount"]
            key = msg.key().decode()
            print(f"{args.group}: {key} total_amount={amount} ({origin})", flush=True)
            consumer.commit(msg, asynchronous=False)
            read, last = read + 1, time.monotonic()
    finally:
        consumer.close()
    print(f"{args.group}: read {read} ride(s) from {args.topic}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="examples/taxi.py", description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP"))
    parser.add_argument("-r", "--registry", default=os.environ.get("SCHEMACLI_REGISTRY_URL"))
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("produce")
    p.add_argument("--topic", required=True)
    p.add_argument("--version", type=int, choices=(1, 2), required=True)
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--bad", type=int, default=0)
    c = verbs.add_parser("consume")
    c.add_argument("--topic", required=True)
    c.add_argument("--group", required=True)
    c.add_argument("--count", type=int, default=None)
    c.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)
    if not args.bootstrap or not args.registry:
        parser.error("give -b and -r (or KAFKA_BOOTSTRAP and SCHEMACLI_REGISTRY_URL)")
    return produce(args) if args.verb == "produce" else consume(args)


if __name__ == "__main__":
    sys.exit(main())
