"""Score stage: answer-level scores over stored claim verdicts, as pure functions.

Modules: ``precision.py`` (FActScore factual precision), ``icat.py`` (ICAT: coverage of
aspects, aspect generation and alignment), ``attribution.py`` (ExpertQA AutoAIS),
``structured.py`` (support propagated through a structured document), ``agreement.py``
(Cohen's κ, Krippendorff's α between human labels and verdicts). Nothing here touches the
database: core/pipeline/stored.py reads the rows and stores the results. This module is the
registry of score kinds a run carries: to add one, write its pure function in its own module
and add its kind to :func:`run_scores`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.score.icat import ICAT_KIND, icat_from_detail
from core.score.precision import answer_precision, run_outcomes

SCORE_KINDS = ("factual_precision", ICAT_KIND)


def run_scores(results: Sequence[Mapping], stored: Mapping[str, Mapping]) -> dict[str, tuple[float | None, dict]]:
    """Every score kind computable for a run from its stored rows: ``factual_precision``
    always; ``icat`` when aspects and an alignment were stored for it. kind → (value, detail)."""
    fp = answer_precision(run_outcomes(results))
    detail = {
        "factual_precision": fp.precision,
        "claims": len(results), "checkable": sum(1 for r in results if r["checkable"]),
        "verdicts": fp.verdicts, "supported": fp.supported, "verified": fp.checkable, "pending": fp.pending,
        "abstentions": fp.abstentions, "not_checkable": fp.not_checkable, "abstained": fp.abstained,
    }
    out: dict[str, tuple[float | None, dict]] = {"factual_precision": (fp.precision, detail)}
    icat = (stored.get(ICAT_KIND) or {}).get("detail")
    if icat and icat.get("aspects") is not None:
        d = icat_from_detail(icat, results)
        out[ICAT_KIND] = (d["icat"], d)
    return out
