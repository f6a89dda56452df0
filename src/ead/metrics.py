"""Evaluation metrics from n graded samples per problem: unbiased Pass@k and Worst@k, with bootstrap CIs.

For a problem with n samples of which c are correct, drawing k of them without replacement:

* Pass@k  = P(at least one correct) = 1 - C(n - c, k) / C(n, k)   (Chen et al., 2021)
* Worst@k = P(all k correct)        = C(c, k) / C(n, k)

Both are unbiased for the k-sample quantities when n >= k. (verl's bootstrap, max/min over resamples of k *with*
replacement, is biased upwards for Pass@k and downwards for Worst@k; we report the unbiased estimators.)
The benchmark-level value is the mean over problems; its uncertainty is a percentile bootstrap over problems.
"""

from __future__ import annotations

import numpy as np


def _ratio_of_combinations(top: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """C(top, k) / C(n, k) elementwise, as a product of k ratios (stable; 0 when top < k)."""
    top, n = np.asarray(top, dtype=np.float64), np.asarray(n, dtype=np.float64)
    result = np.ones(np.broadcast(top, n).shape)
    for i in range(k):
        result = result * np.clip(top - i, 0, None) / (n - i)
    return result


def _check(num_samples, num_correct, k):
    num_samples, num_correct = np.asarray(num_samples), np.asarray(num_correct)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if np.any(num_samples < k):
        raise ValueError(f"every problem needs n >= k = {k} samples, got min n = {int(num_samples.min())}")
    if np.any((num_correct < 0) | (num_correct > num_samples)):
        raise ValueError("need 0 <= correct <= n for every problem")
    return num_samples, num_correct


def pass_at_k(num_samples, num_correct, k: int) -> np.ndarray:
    """Per-problem unbiased Pass@k."""
    num_samples, num_correct = _check(num_samples, num_correct, k)
    return 1.0 - _ratio_of_combinations(num_samples - num_correct, num_samples, k)


def worst_at_k(num_samples, num_correct, k: int) -> np.ndarray:
    """Per-problem unbiased Worst@k (all k samples correct)."""
    num_samples, num_correct = _check(num_samples, num_correct, k)
    return _ratio_of_combinations(num_correct, num_samples, k)


def bootstrap_mean_ci(values, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0):
    """(mean, low, high): percentile bootstrap CI of the mean over problems."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        raise ValueError("bootstrap of an empty set of values")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
    alpha = (1 - confidence) / 2
    return float(values.mean()), float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def two_way_bootstrap_mean_ci(matrix, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0):
    """(mean, low, high) of a (seeds x problems) matrix, resampling seeds and problems independently.

    The RL curves average a per-problem metric over training seeds that share one evaluation set, so both the
    seeds and the problems are samples: each bootstrap draw picks seeds and problems with replacement and takes
    the mean of the selected rows and columns (computed from draw counts, without materialising the submatrix).
    With one seed it reduces to the bootstrap over problems.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.size == 0:
        raise ValueError(f"need a non-empty (seeds x problems) matrix, got shape {matrix.shape}")
    seeds, problems = matrix.shape
    rng = np.random.default_rng(seed)
    seed_counts = np.stack([np.bincount(rng.integers(0, seeds, seeds), minlength=seeds) for _ in range(resamples)])
    problem_counts = np.stack([np.bincount(rng.integers(0, problems, problems), minlength=problems)
                               for _ in range(resamples)])
    means = np.einsum("bs,sp,bp->b", seed_counts, matrix, problem_counts) / (seeds * problems)
    alpha = (1 - confidence) / 2
    return float(matrix.mean()), float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))
