"""Kafka plumbing every room of the converter shares: the client settings built from a
``--kafka-properties`` file (``settings``), the waits that hear Ctrl-C (``waits``), and where
librdkafka's log lines go (``log``)."""
