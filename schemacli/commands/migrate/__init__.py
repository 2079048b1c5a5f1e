"""`schemacli migrate plan|validate|deploy|status|stop|finish|replay|rules`: the v2 -> v1 converter,
and the same mapping as Confluent migration rules.

One module per verb; each parses its arguments, calls ``converters`` (the pure core) once and
hands the result to a renderer (``schemacli.output.migrate``); ``group`` gathers them under
``schemacli migrate``. The mapping format and the job are described in docs/migration.md.
"""
