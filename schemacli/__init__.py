"""schemacli: Avro data contracts on Kafka.

Compatibility checks, Spark readers, migration converters.
"""

from types import ModuleType

__version__ = "0.1.0"


def __getattr__(name: str) -> ModuleType:
    # `from schemacli import compat` works without importing the engine at CLI start-up.
    if name == "compat":
        from schemacli.contracts.evolution import compat

        return compat
    raise AttributeError(f"module 'schemacli' has no attribute {name!r}")
