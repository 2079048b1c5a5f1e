"""Operating the converter: what the ``schemacli migrate`` commands do to a running job.

``deploy`` (check a mapping is deployable, build and run the spark-submit command), ``process``
(whose pid a pid file names), ``status``, ``stop``, ``window`` (the migration window: planned,
running, draining, finished), ``dependents`` (who still reads v2 or writes it), ``finish`` (drain
and close the window, saying what it leaves behind) and ``replay`` (repaired dead letters back
through the records road). The state directory they share is ``converters.state``.
"""
