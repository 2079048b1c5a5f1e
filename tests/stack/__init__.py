"""The real integration stack, without Docker: Kafka (KRaft), a Confluent-API schema registry
(Apicurio or AxonOps) and Spark with its Avro and Kafka connectors.

Launchers live one per module (kafka, registry, spark); pytest fixtures (tests/conftest.py,
tests/integration/conftest.py) and scripts/devstack call the same code and share ``.cache/``.
See docs/stack.md.
"""
