"""benchmarks/bm25_engine_probe.py's pairing of two runs over the same claims (docs/benchmarks.md,
"BM25 on Tantivy for every source")."""

from __future__ import annotations

import pytest

from benchmarks.bm25_engine_probe import pair


def test_pairing_counts_claims_that_rose_and_fell():
    got = pair([1.0, 0.5, 0.0, 1.0], [1.0, 1.0, 0.0, 0.5])
    assert got == {"delta_recall@5": 0.0, "claims_up": 1, "claims_down": 1}
    assert pair([0.0, 0.0], [1.0, 0.5])["delta_recall@5"] == pytest.approx(0.75)


def test_runs_over_other_claims_are_refused():
    with pytest.raises(ValueError):
        pair([1.0], [1.0, 0.0])
    with pytest.raises(ValueError):
        pair([], [])
