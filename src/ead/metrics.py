"""Evaluation metrics from n graded samples per problem: unbiased Pass@k and Worst@k, with bootstrap CIs.

For a problem with n samples of which c are correct, drawing k of them without replacement:

* Pass@k  = P(at least one correct) = 1 - C(n - c, k) / C(n, k)   (Chen et al., 2021)
* Worst@k = P(all k correct)        = C(c, k) / C(n, k)

Both are unbiased for the k-sample quantities when n >= k. verl's validation reports best@k / worst@k instead:
the max / min over k of the n samples drawn *with* replacement, averaged over 1000 bootstrap resamples
(``verl.trainer.ppo.metric_utils.bootstrap_metric``), the numbers the authors' validation logged. With c of n
correct their expectation is 1 - (1 - c/n)^k and (c/n)^k (:func:`verl_best_at_k`, :func:`verl_worst_at_k`): below
the unbiased Pass@k and above Worst@k whenever 0 < c < n, since drawing with replacement repeats samples. We report
the unbiased estimators, and these next to them, labelled as verl's, to compare with numbers reported that way.
The benchmark-level value is the mean over problems; its uncertainty is a percentile bootstrap over problems.
:func:`per_problem_metric` and :func:`pass_worst_summary` read these from an evaluation table's per-problem counts.
"""

from __future__ import annotations

import itertools
import math
import re
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is made: the library (numpy and torch) imports this module
    import pandas as pd


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


def verl_best_at_k(num_samples, num_correct, k: int) -> np.ndarray:
    """Per-problem expectation of verl's bootstrap best@k (max over k samples drawn with replacement): 1 - (1-c/n)^k.
    The exact value the bootstrap's 1000 resamples estimate (tests/test_metrics.py checks it against verl's own)."""
    num_samples, num_correct = _check(num_samples, num_correct, 1)
    return 1.0 - (1.0 - num_correct / num_samples) ** k


def verl_worst_at_k(num_samples, num_correct, k: int) -> np.ndarray:
    """Per-problem expectation of verl's bootstrap worst@k (min over k samples drawn with replacement): (c/n)^k."""
    num_samples, num_correct = _check(num_samples, num_correct, 1)
    return (num_correct / num_samples) ** float(k)


def informative_at_k(num_samples, num_correct, k: int) -> np.ndarray:
    """Per-problem probability that a group of k rollouts (drawn without replacement from the n samples) is
    *informative*: 0 < correct < k, the only groups whose GRPO-style advantages are not all zero.
    Equals Pass@k - Worst@k, so it is unbiased too."""
    return pass_at_k(num_samples, num_correct, k) - worst_at_k(num_samples, num_correct, k)


def ess_fraction(log_weights: np.ndarray) -> float:
    """Effective sample size of importance weights exp(``log_weights``) as a share of their number,
    (sum w)^2 / (n sum w^2): 1 when all weights are equal (on-policy), 1/n when one sample carries all the weight.
    Per problem, over its n samples' sequence-level weights pi_1 / pi_sampler: how many of a rollout group's samples
    a sequence-level correction back to tau = 1 would effectively keep (Appendix B's off-policy cost)."""
    weights = np.exp(log_weights - log_weights.max())  # scale-free: shift for overflow
    return float(weights.sum() ** 2 / (weights.size * np.square(weights).sum()))


def mean_group_ess_fraction(sequence_log_weights, group_index) -> float:
    """Mean over rollout groups of :func:`ess_fraction` of each group's sequence log-weights: how much of a group a
    sequence-level correction back to the trained policy effectively keeps, on average (1 on policy)."""
    log_weights = np.asarray(sequence_log_weights, dtype=np.float64)
    groups = np.asarray(group_index)
    return float(np.mean([ess_fraction(log_weights[groups == group]) for group in np.unique(groups)]))


def minimum_detectable_effect(differences, *, power: float = 0.8, confidence: float = 0.95) -> float:
    """Smallest true mean of paired ``differences`` (one per unit, e.g. problem or seed) that a two-sided test at
    ``confidence`` detects with probability ``power``: (z_{1-alpha/2} + z_power) * sd / sqrt(units)."""
    from statistics import NormalDist

    differences = np.asarray(differences, dtype=np.float64)
    if differences.size < 2:
        raise ValueError(f"need at least 2 paired differences for a power estimate, got {differences.size}")
    z = NormalDist().inv_cdf
    standard_error = differences.std(ddof=1) / math.sqrt(differences.size)
    return float((z(1 - (1 - confidence) / 2) + z(power)) * standard_error)


def bootstrap_ratio_ci(numerators, denominators, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0):
    """(ratio, low, high): sum(numerators) / sum(denominators) over units, with a percentile bootstrap over units
    (e.g. the share of failures of one kind, resampling problems)."""
    numerators, denominators = np.asarray(numerators, dtype=np.float64), np.asarray(denominators, dtype=np.float64)
    if numerators.shape != denominators.shape or numerators.size == 0 or denominators.sum() <= 0:
        raise ValueError(f"need matching non-empty numerators and denominators with a positive total, got shapes "
                         f"{numerators.shape} / {denominators.shape}, total {denominators.sum()}")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, numerators.size, size=(resamples, numerators.size))
    totals = denominators[draws].sum(axis=1)
    ratios = numerators[draws].sum(axis=1)[totals > 0] / totals[totals > 0]
    alpha = (1 - confidence) / 2
    return (float(numerators.sum() / denominators.sum()), float(np.quantile(ratios, alpha)),
            float(np.quantile(ratios, 1 - alpha)))


def bootstrap_means(values, *, resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap distribution of the mean of ``values`` (units drawn with replacement)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        raise ValueError("bootstrap of an empty set of values")
    rng = np.random.default_rng(seed)
    return values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)


def bootstrap_mean_ci(values, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0):
    """(mean, low, high): percentile bootstrap CI of the mean over problems."""
    means = bootstrap_means(values, resamples=resamples, seed=seed)
    alpha = (1 - confidence) / 2
    mean = float(np.asarray(values, dtype=np.float64).mean())
    return mean, float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def two_way_bootstrap_means(matrix, *, resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap distribution of the mean of a (seeds x problems) matrix, resampling seeds and problems independently
    (each draw picks seeds and problems with replacement; computed from draw counts, without materialising the
    submatrix). With one seed it reduces to the bootstrap over problems."""
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.size == 0:
        raise ValueError(f"need a non-empty (seeds x problems) matrix, got shape {matrix.shape}")
    seeds, problems = matrix.shape
    rng = np.random.default_rng(seed)
    seed_counts = np.stack([np.bincount(rng.integers(0, seeds, seeds), minlength=seeds) for _ in range(resamples)])
    problem_counts = np.stack([np.bincount(rng.integers(0, problems, problems), minlength=problems)
                               for _ in range(resamples)])
    return np.einsum("bs,sp,bp->b", seed_counts, matrix, problem_counts) / (seeds * problems)


def two_way_bootstrap_mean_ci(matrix, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0):
    """(mean, low, high) of a (seeds x problems) matrix, resampling seeds and problems independently.

    The RL curves average a per-problem metric over training seeds that share one evaluation set, so both the
    seeds and the problems are samples (see :func:`two_way_bootstrap_means`).
    """
    means = two_way_bootstrap_means(matrix, resamples=resamples, seed=seed)
    alpha = (1 - confidence) / 2
    mean = float(np.asarray(matrix, dtype=np.float64).mean())
    return mean, float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


# ---------------------------------------------------------------------------------------------------------
# Per-problem counts -> metrics: what the evaluation tables (ead.tables: num_samples, num_correct, greedy_correct per
# problem) give, by metric name.
# ---------------------------------------------------------------------------------------------------------

#: Evaluation metrics from per-problem counts: the unbiased estimators, and verl's bootstrap best@k / worst@k
#: (with replacement) under their own names, so no table or figure mixes the two.
COUNT_METRIC = re.compile(r"(pass|worst|verl_best|verl_worst)@(\d+)")
_COUNT_ESTIMATORS = {"pass": pass_at_k, "worst": worst_at_k, "verl_best": verl_best_at_k,
                     "verl_worst": verl_worst_at_k}


def per_problem_metric(problems: pd.DataFrame, metric: str) -> np.ndarray:
    """Per-problem value of greedy_accuracy, pass@k, worst@k, verl_best@k or verl_worst@k."""
    if metric == "greedy_accuracy":
        return problems["greedy_correct"].to_numpy(dtype=float)
    match = COUNT_METRIC.fullmatch(metric)
    if not match:
        raise ValueError(f"unknown evaluation metric {metric!r}")
    estimator = _COUNT_ESTIMATORS[match[1]]
    return estimator(problems["num_samples"].to_numpy(), problems["num_correct"].to_numpy(), int(match[2]))


def pass_worst_summary(per_problem: pd.DataFrame, ks: list[int], *, seed: int) -> pd.DataFrame:
    """One row per metric (greedy_accuracy if graded, pass@k, worst@k): mean over problems and a 95% bootstrap CI.

    Greedy accuracy is reported when ``greedy_correct`` has values; a column of NaN (the verl backend, which
    validates with one sampling setting) means "not graded".
    """
    import pandas as pd

    rows = []
    if "greedy_correct" in per_problem.columns and per_problem["greedy_correct"].notna().any():
        rows.append(("greedy_accuracy", per_problem["greedy_correct"].to_numpy(dtype=float)))
    counts = per_problem["num_samples"].to_numpy(), per_problem["num_correct"].to_numpy()
    for k in ks:
        rows.append((f"pass@{k}", pass_at_k(*counts, k)))
        rows.append((f"worst@{k}", worst_at_k(*counts, k)))
    return pd.DataFrame([
        dict(zip(("metric", "value", "ci_low", "ci_high"), (name, *bootstrap_mean_ci(values, seed=seed))))
        for name, values in rows
    ])


# ---------------------------------------------------------------------------------------------------------
# Majority voting (Maj@N): one home for the voting rule and the Maj@N estimator, used by the forking (Maj@K)
# and inference-scaling (Maj@N) analyses.
#
# Voting rule:
# * A sample votes with its normalised answer key (``rewards.Grade.predicted``); a sample without an answer
#   (key None) casts no vote.
# * Equivalent keys are one vote: distinct keys are taken in order of first appearance and each joins the first
#   earlier group whose representative (first key) it is equivalent to (exact equality always; for math tasks
#   ``equivalent = rewards.same_answer``, so "0.5" and "1/2" vote together), otherwise it starts a new group.
# * The vote of a subset of samples goes to the group with the most members in it. A tie goes to the tied
#   group whose earliest sample (lowest sample index) in the subset comes first: the rule of
#   ``collections.Counter.most_common`` over the subset in sample order. Samples are i.i.d., so this is a
#   deterministic rule that favours no answer systematically.
# * The vote is correct if the winning group's representative sample is graded correct. A subset in which no
#   sample has an answer scores 0 (wrong).
#
# Maj@N of a question with M samples is the mean vote correctness over all C(M, N) subsets of N samples drawn
# without replacement, computed exactly by counting (below), not by random draws; the benchmark value is the
# mean over questions with a percentile bootstrap CI over questions (bootstrap_mean_ci).
# ---------------------------------------------------------------------------------------------------------


def vote_groups(keys, equivalent=None) -> np.ndarray:
    """Group id per sample (-1 = no vote) for answer ``keys`` (str or None); see the voting rule above.

    ``equivalent(a, b) -> bool`` merges different keys (e.g. ``ead.rewards.same_answer``); None = exact match.
    Group ids are numbered in order of first appearance.
    """
    representatives: list[str] = []
    group_of_key: dict[str, int] = {}
    groups = np.full(len(keys), -1, dtype=np.int64)
    for i, key in enumerate(keys):
        if key is None or (isinstance(key, float) and np.isnan(key)):
            continue
        key = str(key)
        if key not in group_of_key:
            match = next((g for g, rep in enumerate(representatives)
                          if equivalent is not None and equivalent(rep, key)), None)
            if match is None:
                match = len(representatives)
                representatives.append(key)
            group_of_key[key] = match
        groups[i] = group_of_key[key]
    return groups


def group_correctness(groups, correct) -> dict[int, float]:
    """Correctness of each vote group = the score of its representative (first) sample."""
    result = {}
    for g, score in zip(np.asarray(groups).tolist(), np.asarray(correct, dtype=np.float64).tolist()):
        if g >= 0 and g not in result:
            result[g] = score
    return result


def majority_vote(groups, group_correct: dict[int, float]) -> tuple[int, float]:
    """(winning group, its correctness) for one subset of samples, given their group ids in sample order.

    ``group_correct`` maps group id -> correctness (:func:`group_correctness` of all the question's samples).
    Returns (-1, 0.0) when no sample votes. This is the definition the Maj@N estimator counts exactly.
    """
    counts: dict[int, int] = {}
    for g in np.asarray(groups).tolist():  # insertion order = order of first appearance in the subset
        if g >= 0:
            counts[g] = counts.get(g, 0) + 1
    if not counts:
        return -1, 0.0
    winner = max(counts, key=counts.get)  # max() keeps the first of equal counts
    return winner, float(group_correct[winner])


def maj_at_n_curve(groups, correct) -> np.ndarray:
    """Exact Maj@N of one question for every N = 1..M: array of length M (index N - 1).

    Counts, for each group g, the N-subsets it wins. Condition on g's earliest sample j in the subset and on
    g's count c there: g's other c - 1 members come from its members after j; every other group h has fewer
    than c members, or exactly c all after j (else h wins the tie); unvoted samples are free. The number of
    such subsets of every size is a coefficient of a product of polynomials in z (one per group).

    A subset scores its winning group's score (the first sample's ``correct``), so fractional scores
    (e.g. 0.5) count fractionally, exactly as :func:`maj_at_n_brute_force` scores them.
    """
    groups = np.asarray(groups, dtype=np.int64)
    correct = np.asarray(correct, dtype=np.float64)
    m = groups.size
    if m == 0:
        raise ValueError("Maj@N needs at least one sample")
    if correct.shape != groups.shape:
        raise ValueError(f"groups and correct differ in shape: {groups.shape} vs {correct.shape}")
    if not np.all(np.isfinite(correct)):
        raise ValueError(f"correct must hold finite scores, got {correct[~np.isfinite(correct)][:3].tolist()}")
    binom = np.array([[math.comb(a, b) for b in range(m + 1)] for a in range(m + 1)], dtype=np.float64)
    unvoted = np.array([binom[int((groups < 0).sum()), x] for x in range(m + 1)])
    ids = sorted(set(groups[groups >= 0].tolist()))
    positions = {g: np.flatnonzero(groups == g) for g in ids}
    group_correct = group_correctness(groups, correct)
    wins = np.zeros(m + 1)  # wins[N] = summed vote score over the N-subsets (a count when scores are 0/1)
    for g in ids:
        score = group_correct[g]
        if score == 0.0:
            continue
        for j in positions[g]:
            after_g = int((positions[g] > j).sum())
            for c in range(1, after_g + 2):
                poly = unvoted.copy()
                for h in ids:
                    if h == g:
                        continue
                    m_h = positions[h].size
                    factor = np.zeros(c + 1)
                    factor[:c] = binom[m_h, :c]
                    factor[c] = binom[int((positions[h] > j).sum()), c]
                    poly = np.convolve(poly, factor)[: m + 1]
                ways_g = binom[after_g, c - 1]
                # subsets of size N: g contributes c, the rest N - c
                for n in range(c, m + 1):
                    if n - c < poly.size:
                        # weighted by the group's score, as the brute force scores a subset: a 0.5 group is half a win
                        wins[n] += score * ways_g * poly[n - c]
    totals = np.array([binom[m, n] for n in range(1, m + 1)])
    return wins[1:] / totals


def maj_at_n_brute_force(groups, correct, n: int) -> float:
    """Maj@N of one question by enumerating every N-subset (exponential; for tests and tiny cases)."""
    groups = np.asarray(groups)
    group_correct = group_correctness(groups, correct)
    subsets = itertools.combinations(range(groups.size), n)
    return float(np.mean([majority_vote(groups[list(s)], group_correct)[1] for s in subsets]))


def entropy_from_log_probs(log_probs):
    """Entropy (nats) of each distribution along the last axis of a torch tensor of log-probabilities over the full
    vocabulary (a token of probability 0, log-probability -inf, adds 0). Below both the schedules (entropy-aware
    temperatures) and the samplers, which share it."""
    probabilities = log_probs.exp()
    return -(probabilities * log_probs).where(probabilities > 0, 0.0).sum(-1)


#: z_(1 - 0.05/2) + z_(0.8): a paired effect's minimum detectable effect is POWER_Z x its standard error (two-sided
#: 5% test, 80% power).
POWER_Z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
