"""schemacli: Avro data contracts on Kafka — compatibility checks, Spark readers, migration converters."""

__version__ = "0.1.0"
