"""Where librdkafka's own log lines go: the ``schemacli.kafka`` logger, silent unless the user
configures logging (a refused connection is retried and logged many times a second; the
command reports the failure once, as an error with a hint)."""

from __future__ import annotations

import logging

KAFKA_LOGGER = logging.getLogger("schemacli.kafka")
KAFKA_LOGGER.addHandler(logging.NullHandler())
KAFKA_LOGGER.propagate = False
