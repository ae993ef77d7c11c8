"""Benchmarks behind ``claimscope eval …``: one module per task plus shared metrics/loaders.

One shape for every benchmark module (retrieval, leakage, verifier, verdicts, decompose,
attribution, factuality, acu): ``evaluate_<task>(…, progress=None) -> dict`` returns a
JSON-serialisable report carrying ``claimscope_version`` and ``machine`` (``report.py``),
its inputs and its figures, and ``format_table(report) -> str`` renders it for the terminal;
the ``eval`` commands (tui/cli/eval.py) print the table and write the report. Datasets are
read with the public loaders of ``datasets.py`` and the JSONL helpers of core.ingest.sources
(``jsonl_records``, ``record_field``: file and line in every error). Metrics live in
``metrics.py``; calibration applied at run time lives in core.verify.calibration. To add a
benchmark, add a module of that shape and one command in tui/cli/eval.py.
"""
