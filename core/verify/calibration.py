"""Temperature scaling of the verifier's probabilities (Guo et al. 2017), as the verifier
applies it at run time. The fit lives with the benchmarks (core.evaluate.metrics.fit_temperature);
applying a fitted T is production code, so it lives here and the verifier never imports
benchmark code.
"""

from __future__ import annotations

import numpy as np


def log_softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax, shifted by the row maximum for stability."""
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def apply_temperature(probs: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(log p / T) per row (probabilities clipped at 1e-12 before the log)."""
    p = np.clip(np.asarray(probs, dtype=np.float64), 1e-12, 1.0)
    return np.exp(log_softmax(np.log(p) / temperature))
