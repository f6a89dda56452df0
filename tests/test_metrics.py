"""The estimators (ead.metrics): Pass@k / Worst@k against brute-force enumeration of all k-subsets, Maj@N, vote
groups, informative@k, power, the bootstraps, and entropy."""

import itertools
import math

import numpy as np
import pytest
import torch

# --- Majority voting and Maj@N ----------------------------------------------------------------------------
from ead.metrics import (  # noqa: E402
    bootstrap_mean_ci,
    bootstrap_ratio_ci,
    entropy_from_log_probs,
    group_correctness,
    informative_at_k,
    maj_at_n_brute_force,
    maj_at_n_curve,
    majority_vote,
    minimum_detectable_effect,
    pass_at_k,
    two_way_bootstrap_mean_ci,
    verl_best_at_k,
    verl_worst_at_k,
    vote_groups,
    worst_at_k,
)


def brute_force(outcomes, k):
    subsets = list(itertools.combinations(outcomes, k))
    return np.mean([any(s) for s in subsets]), np.mean([all(s) for s in subsets])


@pytest.mark.parametrize("n", [1, 4, 7, 10])
def test_matches_enumeration_of_every_subset(n):
    for c in range(n + 1):
        outcomes = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            best, worst = brute_force(outcomes, k)
            assert pass_at_k([n], [c], k)[0] == pytest.approx(best, abs=1e-12)
            assert worst_at_k([n], [c], k)[0] == pytest.approx(worst, abs=1e-12)


def test_known_values_and_vectorisation():
    n, c = np.array([16, 16, 32, 20]), np.array([0, 16, 1, 2])
    # last problem: 1 - C(18, 16) / C(20, 16) = 1 - 153 / 4845
    np.testing.assert_allclose(pass_at_k(n, c, 16), [0.0, 1.0, 0.5, 1.0 - 153 / 4845], atol=1e-12)
    np.testing.assert_allclose(worst_at_k(n, c, 16), [0.0, 1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(pass_at_k(n, c, 1), c / n)  # Pass@1 is the accuracy
    np.testing.assert_allclose(worst_at_k(n, c, 1), c / n)


def test_rejects_too_few_samples_and_bad_counts():
    with pytest.raises(ValueError, match=r"n >= k = 16 .* min n = 8"):
        pass_at_k([8, 16], [1, 1], 16)
    with pytest.raises(ValueError, match="0 <= correct <= n"):
        worst_at_k([16], [17], 4)


def test_bootstrap_interval_covers_the_mean_and_shrinks_with_more_problems():
    rng = np.random.default_rng(1)
    small, large = rng.random(50), rng.random(5000)
    mean, low, high = bootstrap_mean_ci(small, resamples=2000)
    assert low < mean < high and mean == pytest.approx(small.mean())
    _, low_l, high_l = bootstrap_mean_ci(large, resamples=2000)
    assert (high_l - low_l) < (high - low) / 5
    # the standard error of a mean of uniforms is sqrt(1/12 / n); the 95% width is about 3.92 of them
    assert (high_l - low_l) == pytest.approx(3.92 * np.sqrt(1 / 12 / 5000), rel=0.15)


def _brute_force_majority(groups, correct, n):
    """Independent brute force: every n-subset, Counter.most_common in sample order, representative's score."""
    from collections import Counter

    representative = {}
    for g, c in zip(groups, correct):
        if g >= 0:
            representative.setdefault(g, c)
    values = []
    for subset in itertools.combinations(range(len(groups)), n):
        votes = Counter(groups[i] for i in subset if groups[i] >= 0)
        values.append(representative[votes.most_common(1)[0][0]] if votes else 0.0)
    return float(np.mean(values))


@pytest.mark.parametrize("seed", range(6))
def test_maj_at_n_matches_brute_force_over_every_subset(seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        m = int(rng.integers(1, 9))
        groups = rng.integers(-1, int(rng.integers(1, 4)), size=m)  # -1 = no answer
        correct = (rng.random(m) < 0.5).astype(float)
        curve = maj_at_n_curve(groups, correct)
        expected = [_brute_force_majority(groups.tolist(), correct.tolist(), n) for n in range(1, m + 1)]
        np.testing.assert_allclose(curve, expected, atol=1e-12)
        assert maj_at_n_brute_force(groups, correct, m) == pytest.approx(expected[-1])


@pytest.mark.parametrize("seed", range(4))
def test_maj_at_n_scores_fractional_groups_like_brute_force(seed):
    """A group scored 0.5 counts half a win in every subset it wins, in the exact curve as in brute force."""
    rng = np.random.default_rng(100 + seed)
    for _ in range(20):
        m = int(rng.integers(1, 8))
        groups = rng.integers(-1, int(rng.integers(1, 4)), size=m)
        correct = rng.choice([0.0, 0.25, 0.5, 1.0], size=m)
        expected = [maj_at_n_brute_force(groups, correct, n) for n in range(1, m + 1)]
        np.testing.assert_allclose(maj_at_n_curve(groups, correct), expected, atol=1e-12)
    # one group of two votes scored 0.5 wins every subset: half a win, not a full one
    np.testing.assert_allclose(maj_at_n_curve([0, 0], [0.5, 0.5]), [0.5, 0.5])


def test_maj_at_n_rejects_non_finite_scores():
    with pytest.raises(ValueError, match="finite scores"):
        maj_at_n_curve([0, 1], [1.0, float("nan")])


def test_maj_at_n_known_values():
    # a unanimous correct answer wins every subset
    np.testing.assert_allclose(maj_at_n_curve([0, 0, 0, 0], [1, 1, 1, 1]), [1, 1, 1, 1])
    # unanswered samples cast no vote; a subset with no vote is wrong
    np.testing.assert_allclose(maj_at_n_curve([-1, -1, 0], [0, 0, 1]), [1 / 3, 2 / 3, 1])
    # Maj@1 is the mean accuracy
    groups, correct = [0, 1, 1, 2, 0, 1], [1, 0, 0, 0, 1, 0]
    assert maj_at_n_curve(groups, correct)[0] == pytest.approx(np.mean(correct))
    # the wrong majority (group 1, 3 votes of 6) beats the right minority in the full set
    assert maj_at_n_curve(groups, correct)[-1] == 0.0


def test_ties_go_to_the_earliest_sample_deterministically():
    correct_of = {0: 1.0, 1: 0.0}
    assert majority_vote([1, 0, 0, 1], correct_of) == (1, 0.0)
    assert majority_vote([0, 1, 1, 0], correct_of) == (0, 1.0)
    assert majority_vote([-1, -1], correct_of) == (-1, 0.0)
    # a 1-1 tie in the full set: the winner is the first sample's answer, every time
    assert maj_at_n_curve([0, 1], [1, 0])[-1] == 1.0
    assert maj_at_n_curve([1, 0], [0, 1])[-1] == 0.0
    groups, correct = [2, 0, 1, 0, 1, 2], [0, 1, 0, 1, 0, 0]
    np.testing.assert_array_equal(maj_at_n_curve(groups, correct), maj_at_n_curve(groups, correct))


def test_vote_groups_merge_equivalent_keys_in_order_of_first_appearance():
    def equivalent(a, b):
        return float(eval(a)) == float(eval(b))  # test-only stand-in for math-verify equivalence

    keys = ["1/2", None, "0.5", "3", "2/4", "3.0", None, "7"]
    np.testing.assert_array_equal(vote_groups(keys, equivalent), [0, -1, 0, 1, 0, 1, -1, 2])
    # without an equivalence only identical keys vote together
    np.testing.assert_array_equal(vote_groups(["B", "A", "B", None]), [0, 1, 0, -1])
    # three spellings of one half outvote two of another answer
    groups = vote_groups(["0.5", "3", "1/2", "3", "2/4"], equivalent)
    assert majority_vote(groups, group_correctness(groups, [1, 0, 1, 0, 1])) == (0, 1.0)


def test_vote_groups_with_math_verify_equivalence():
    from ead.rewards import same_answer

    np.testing.assert_array_equal(vote_groups(["1/2", "0.5", "\\frac{1}{2}", "2", None], same_answer),
                                  [0, 0, 0, 1, -1])


# --- informative groups, power, ratio CIs ---------------------------------------------------------------------------
def test_informative_at_k_matches_enumeration_of_groups():
    for n in (4, 8):
        for c in range(n + 1):
            outcomes = [1] * c + [0] * (n - c)
            for k in (1, 2, n):
                groups = list(itertools.combinations(outcomes, k))
                expected = np.mean([0 < sum(group) < k for group in groups])
                assert informative_at_k([n], [c], k)[0] == pytest.approx(expected, abs=1e-12)


def test_minimum_detectable_effect_gives_80_percent_power_by_simulation():
    rng = np.random.default_rng(0)
    sd, units = 0.3, 200
    mde = minimum_detectable_effect(rng.normal(0.0, sd, size=units))  # estimated from one sample's own spread
    # at a true effect equal to the MDE, a two-sided 5% z-test rejects in ~80% of repetitions
    rejections = []
    for _ in range(2000):
        sample = rng.normal(mde, sd, size=units)
        rejections.append(abs(sample.mean() / (sample.std(ddof=1) / np.sqrt(units))) > 1.959964)
    assert np.mean(rejections) == pytest.approx(0.8, abs=0.05)
    with pytest.raises(ValueError, match="at least 2"):
        minimum_detectable_effect([0.1])


def test_bootstrap_ratio_ci_is_the_pooled_ratio_with_a_bootstrap_over_units():
    numerators, denominators = np.array([1, 0, 3, 2]), np.array([2, 1, 4, 3])
    ratio, low, high = bootstrap_ratio_ci(numerators, denominators, resamples=2000, seed=1)
    assert ratio == pytest.approx(6 / 10) and low < ratio < high
    rng = np.random.default_rng(1)
    draws = rng.integers(0, 4, size=(2000, 4))
    ratios = numerators[draws].sum(1) / denominators[draws].sum(1)
    assert (low, high) == pytest.approx((np.quantile(ratios, 0.025), np.quantile(ratios, 0.975)))
    with pytest.raises(ValueError, match="positive total"):
        bootstrap_ratio_ci([0, 0], [0, 0])


@pytest.mark.parametrize("n, c, k", [(16, 3, 4), (16, 9, 16), (8, 1, 8), (32, 31, 2)])
def test_verl_bootstrap_best_and_worst_are_the_expectation_of_verls_own_bootstrap(n, c, k):
    """verl_best@k / verl_worst@k are what verl's bootstrap_metric (max / min over k draws with replacement, 1000
    resamples) estimates; they sit below / above the unbiased Pass@k / Worst@k whenever 0 < c < n."""
    from verl.trainer.ppo.metric_utils import bootstrap_metric

    outcomes = [1.0] * c + [0.0] * (n - c)
    (best, _), (worst, _) = bootstrap_metric(outcomes, k, [np.max, np.min], n_bootstrap=4000, seed=1)
    expected_best, expected_worst = verl_best_at_k([n], [c], k)[0], verl_worst_at_k([n], [c], k)[0]
    assert expected_best == pytest.approx(1 - (1 - c / n) ** k) and expected_worst == pytest.approx((c / n) ** k)
    for estimate, expected in ((best, expected_best), (worst, expected_worst)):  # 4 binomial sd (+ one draw)
        assert abs(estimate - expected) <= 4 * np.sqrt(expected * (1 - expected) / 4000) + 1 / 4000
    assert expected_best < pass_at_k([n], [c], k)[0] and expected_worst > worst_at_k([n], [c], k)[0]
    assert verl_best_at_k([n], [0], k)[0] == 0.0 and verl_worst_at_k([n], [n], k)[0] == 1.0


def test_mean_group_ess_fraction_averages_each_groups_share():
    from ead.metrics import ess_fraction, mean_group_ess_fraction

    log_weights = np.array([0.0, 0.0, 0.0, 1.0, 0.0, -50.0])
    groups = np.array([0, 0, 0, 1, 1, 1])
    group_one = (np.e + 1) ** 2 / (3 * (np.e ** 2 + 1))  # the -50 sample carries ~no weight
    assert ess_fraction(log_weights[:3]) == 1.0
    assert mean_group_ess_fraction(log_weights, groups) == pytest.approx((1.0 + group_one) / 2)
    assert mean_group_ess_fraction(np.zeros(4), np.array([3, 3, 7, 7])) == 1.0


# --- aggregation --------------------------------------------------------------------------------------------------
def test_two_way_bootstrap_matches_explicit_resampling():
    matrix = np.random.default_rng(0).random((3, 7))
    mean, low, high = two_way_bootstrap_mean_ci(matrix, resamples=200, seed=4)
    rng = np.random.default_rng(4)
    seed_draws = [rng.integers(0, 3, 3) for _ in range(200)]
    problem_draws = [rng.integers(0, 7, 7) for _ in range(200)]
    means = [matrix[np.ix_(s, p)].mean() for s, p in zip(seed_draws, problem_draws)]
    assert mean == pytest.approx(matrix.mean())
    assert (low, high) == pytest.approx((np.quantile(means, 0.025), np.quantile(means, 0.975)))


def test_entropy_of_a_known_distribution():
    uniform = torch.log(torch.full((1, 8), 1 / 8))
    point = torch.log_softmax(torch.tensor([[0.0, -1e4, -1e4]]), -1)
    two = torch.log(torch.tensor([[0.25, 0.75]]))
    assert entropy_from_log_probs(uniform).item() == pytest.approx(math.log(8))
    assert entropy_from_log_probs(point).item() == pytest.approx(0.0, abs=1e-6)
    assert entropy_from_log_probs(two).item() == pytest.approx(-(0.25 * math.log(0.25) + 0.75 * math.log(0.75)))
