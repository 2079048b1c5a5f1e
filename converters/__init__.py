"""The v2 -> v1 migration converter: a mapping between two Avro schemas, planned, validated,
and applied by a Spark Structured Streaming job (``converters.job``) as pure Spark SQL.

Modules: ``types`` (the small view of an Avro schema the planner needs), ``mapping`` (the
versioned YAML format), ``plan`` (derive a mapping from two schemas), ``sql`` (the Spark SQL
each rule becomes), ``validate`` (static checks and the fastavro dry run), ``transform`` (the pure
DataFrame -> DataFrame conversion), ``job`` (the spark-submit entry point), ``deploy`` (build and
run the spark-submit command; status and stop).
"""
