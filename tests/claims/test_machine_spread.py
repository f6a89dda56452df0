"""ead.claims.machine_spread: per claim row, the spread of its effect across runs that differ in their CPU kernels,
beside the first run's CI half-width, and whether its verdict holds in every run."""

import pandas as pd
import pytest

from ead.claims.machine_spread import machine_spread, main
from ead.tables import CLAIMS, MACHINE_SPREAD

ROW = dict(figure="none", statement="s", policy="tiny_strategy", algorithm="dapo", n=8, baseline="tau1.0",
           metric="pass@1", evaluated_with="eval_tau", step=16, standard_error=0.003, mde=0.01, num_seeds=6,
           num_units=576, smallest_effect=0.02, rule="r", scope="x")


def claims(effects: dict[str, tuple[float, float, float, str]]) -> pd.DataFrame:
    return CLAIMS.validate(pd.DataFrame([{**ROW, "claim": claim, "sampler": "ead", "effect": effect, "ci_low": low,
                                          "ci_high": high, "verdict": verdict}
                                         for claim, (effect, low, high, verdict) in effects.items()]))


def test_the_spread_is_the_range_of_effects_beside_the_first_runs_half_width_and_flips_are_not_robust():
    avx2 = claims({"P1": (-0.001, -0.008, 0.005, "inconclusive"), "P3": (-0.002, -0.009, 0.005, "inconclusive")})
    default = claims({"P1": (-0.009, -0.022, 0.004, "inconclusive"), "P3": (0.007, 0.0004, 0.013, "supported")})
    table = MACHINE_SPREAD.validate(machine_spread({"avx2": avx2, "default": default}))
    assert list(table["claim"]) == ["P1", "P3"]
    p1, p3 = table.iloc[0], table.iloc[1]
    assert p1["effect_spread"] == pytest.approx(0.008) and p1["ci_half_width"] == pytest.approx(0.0065)
    assert p1["spread_share"] == pytest.approx(0.008 / 0.0065)
    assert (p1["robust"], p1["verdicts"], p1["runs"]) == ("yes", "inconclusive,inconclusive", "avx2,default")
    assert (p3["robust"], p3["verdicts"], p3["effects"]) == ("no", "inconclusive,supported", "-0.002,0.007")


def test_runs_that_do_not_share_their_claims_or_a_single_run_are_refused(tmp_path):
    avx2 = claims({"P1": (0.0, -0.01, 0.01, "inconclusive"), "P2": (0.0, -0.01, 0.01, "inconclusive")})
    with pytest.raises(ValueError, match=r"P2\|tiny_strategy.* is missing from run\(s\) \['default'\]"):
        machine_spread({"avx2": avx2, "default": avx2[avx2["claim"] == "P1"]})
    with pytest.raises(ValueError, match="at least two runs, got 1"):
        machine_spread({"avx2": avx2})
    CLAIMS.write(avx2, tmp_path / "a.csv")
    main(["--run", "a", str(tmp_path / "a.csv"), "--run", "b", str(tmp_path / "a.csv"), "--out",
          str(tmp_path / "spread.csv")])
    assert list(MACHINE_SPREAD.read(tmp_path / "spread.csv")["effect_spread"]) == [0.0, 0.0]
