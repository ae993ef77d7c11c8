"""Verify stage: (claim, evidence) → three NLI probabilities per unit → a claim verdict.

Interface: the pair model :class:`models.nli.NLIModel` (``predict``, ``predict_long``) and
:class:`~core.verify.verifier.Verifier` with its :class:`~core.verify.verifier.Thresholds` in
``verifier.py`` (units, grounding guard and the verdict rules, i.e. the aggregation);
``injection.py`` strips instructions planted in evidence; ``calibration.py`` applies the fitted
temperature. To add a pair model, give it ``ref``, ``predict`` and ``predict_long`` and a
loader in ``core.workbench``.
"""
