"""The pipeline that carries records: a v2 Kafka message through the converter to v1 or to the
dead-letter topic.

``records`` (the pure road: ``build_records``, ``build_output``, ``convert_side``, the registry
plan), ``transform`` (the mapping's Spark SQL over a decoded frame), ``headers`` (every header
the converter writes, named once; the marker's format), ``stream`` (the streaming query the job
runs, and its wait), ``txsink`` with ``jvmjar`` and ``jvm/`` (the exactly-once writer on the
executors), ``progress`` (the counts in ``progress.json``).
"""
