"""The mapping language: which v2 value becomes each v1 field, and what happens when it cannot.

``model`` (the dataclasses and the catalogue of conversions), ``reader`` (the YAML file, every
key's line:col kept), ``schemas`` (each side's schema: file, inline or registry), ``dump`` (the
mapping written back), ``conversions`` (each conversion as a spec: what it accepts and what every
road makes of it), ``plan`` (derive a mapping from two schemas), ``schemaview`` (the small view
of an Avro schema the planner needs), ``sql`` (the Spark SQL each rule becomes; ``sqltext``,
``sqlnames``, ``sqlsyntax``), ``check`` (``migrate validate``: static checks and the dry run),
``preview`` (a rule applied to one record in Python, as the dry run does), ``recordplan`` (the
fast road's plan), ``jsonata`` (Confluent migration rules), ``sampling`` (records from a topic
for the dry run).

Nothing here imports pyspark or confluent_kafka at import time.
"""
