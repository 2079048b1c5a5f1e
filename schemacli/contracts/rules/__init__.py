"""Data-quality rules: Confluent rule sets (domain rules, field tags) and the CEL language.

A pure room (no terminal, no Spark, no network): ``model`` reads a contract file's rule set and
metadata with positions, ``cel`` parses, type-checks and evaluates CEL, ``avrocel`` says how
Confluent's executors present an Avro record to CEL, ``execute`` runs a rule set on a record as
Confluent's serializers do, ``judge`` turns rule sets into CI findings.
"""
