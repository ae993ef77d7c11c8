"""Pipeline: the stages composed into runs, and every read and write of the run tables.

``runner.py`` (:class:`~core.pipeline.runner.Pipeline`: decompose → retrieve → verify → score
as a stream of events, each stored before it is announced; resumable), ``stored.py`` (what the
stages compute, written to and read from ``store``), ``export.py`` (JSONL / CSV / Markdown).
Only this package (and ``ingest`` / ``retrieve`` for their indexes) talks to ``store``.
"""
