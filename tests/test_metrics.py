"""Pass@k / Worst@k estimators against brute-force enumeration of all k-subsets."""

import itertools

import numpy as np
import pytest

from ead.metrics import bootstrap_mean_ci, pass_at_k, worst_at_k


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
