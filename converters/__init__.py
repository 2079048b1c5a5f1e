"""The v2 -> v1 migration converter: a mapping between two Avro schemas, planned, validated,
and applied by a Spark Structured Streaming job as pure Spark SQL.

Three rooms over shared plumbing:

* ``mapping/`` - the mapping language: the model, the YAML file, its schemas, plan, the Spark
  SQL each rule becomes, ``migrate validate``'s checks and dry run;
* ``pipeline/`` - the records road: a v2 message through the converter to v1 or the dead-letter
  topic (``records``), the headers it writes, the streaming query, the exactly-once JVM writer,
  the progress counts;
* ``ops/`` - operating it: deploy, status, stop, the migration window, dependents, finish, replay;
* plumbing below them all: ``kafka/`` (client settings from a properties file, waits that hear
  Ctrl-C, librdkafka's log), ``spark`` (version, packages, the local session) and ``state``
  (the state directory's files, written by the job and read by the operations).

``job.py`` is the spark-submit entry point (``spark-submit converters/job.py ...``): argparse,
one call into ``pipeline.stream``, and the one place its errors become words and an exit code.
"""
