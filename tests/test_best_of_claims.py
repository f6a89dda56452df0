"""Claims against the best of several baselines (``best_of``, ead.claims.rl): the baseline is chosen on a selection
part of the evaluation problems and the paired comparison is reported on the disjoint rest (the revised paper's
"d0 = d_max still beats the best fixed temperature", configs/ablations/d_max_sweep.yaml D7-D8)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ead.claims import comparison_label
from ead.claims.rl import claim_row, selection_split
from ead.metrics import pass_at_k, two_way_bootstrap_means
from ead.settings import ConfigError, load_layered_config, validate_config
from ead.tables import CLAIMS, SETTINGS_COLUMNS, TRAIN_METRICS

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
CELL = dict(policy="p", algorithm="dapo", n=8)
FILLER = {"int": 0, "float": 0.0, "str": "x", "id": "x"}
IDS = [f"q{i}" for i in range(8)]
CANDIDATES = ["tau0.6", "tau1.0", "tau1.2"]
CLAIM = dict(id="D7", figure="d_max", statement="d0 = d_max beats the best fixed temperature", sampler="ead_cap",
             best_of=CANDIDATES, selection={"metric": "pass@4", "fraction": 0.5, "seed": 0}, metric="pass@4", **CELL)


def problems_table(correct: dict, seeds=(0, 1), step=16) -> pd.DataFrame:
    """correct[(sampler, problem_id)] -> correct draws of 8, the same in every seed; step 0 all wrong."""
    rows = [dict(**CELL, sampler=sampler, seed=seed, step=s, evaluated_with="eval_tau", problem_id=problem,
                 num_samples=8, num_correct=count if s == step else 0, greedy_correct=0.0)
            for (sampler, problem), count in correct.items() for seed in seeds for s in (0, step)]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def steps_table() -> pd.DataFrame:
    rows = [{**CELL, "sampler": "ead_cap", "seed": 0, "step": 1, **{m: 0.0 for m in TRAIN_METRICS}}]
    return pd.DataFrame(rows).assign(**{c: FILLER[k] for c, k in SETTINGS_COLUMNS.items()})


def test_the_selection_split_is_a_seeded_disjoint_cover_of_the_problems():
    select, report = selection_split(reversed(IDS), 0.5, 0)
    assert set(select).isdisjoint(report) and sorted(select + report) == IDS and len(select) == 4
    assert (select, report) == selection_split(IDS, 0.5, 0)  # the ids' order does not matter, only the seed
    assert any(selection_split(IDS, 0.5, seed)[0] != select for seed in range(1, 6))
    assert len(selection_split(IDS, 0.25, 0)[0]) == 2
    with pytest.raises(SystemExit, match="leaves a part empty"):
        selection_split(IDS[:1], 0.5, 0)


def test_the_baseline_is_the_best_candidate_on_the_selection_problems_and_the_effect_is_on_the_others():
    select, report = selection_split(IDS, 0.5, 0)
    # tau0.6 is best where the choice is made; tau1.2 is best where it is reported (and over all problems), so a
    # choice made on every problem, or on the report problems, would pick tau1.2
    correct = {}
    for problem in IDS:
        on_select = problem in select
        correct.update({("tau0.6", problem): 5 if on_select else 0, ("tau1.0", problem): 3,
                        ("tau1.2", problem): 4 if on_select else 8, ("ead_cap", problem): 6 if on_select else 2})
    table = problems_table(correct)
    row = claim_row(CLAIM, table, steps_table(), window=4, resamples=400, seed=3)
    assert row["baseline"] == "tau0.6" and row["best_of"] == "tau0.6 tau1.0 tau1.2"
    per_problem = {key: float(pass_at_k([8], [count], 4)[0]) for key, count in correct.items()}
    matrix = np.array([[per_problem[("ead_cap", q)] - per_problem[("tau0.6", q)] for q in report]] * 2)
    assert row["effect"] == pytest.approx(matrix.mean()) and row["step"] == 16
    draws = two_way_bootstrap_means(matrix, resamples=400, seed=3)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((np.quantile(draws, 0.025), np.quantile(draws, 0.975)))
    assert (row["num_seeds"], row["num_units"]) == (2, 2 * len(report))  # report problems only
    scores = {name: np.mean([per_problem[(name, q)] for q in select]) for name in CANDIDATES}
    assert row["selection"].startswith(f"best pass@4 on {len(select)} selection problems (fraction 0.5, seed 0; "
                                       "seeds [0, 1]): " + ", ".join(f"{n} {s:.4f}" for n, s in scores.items())
                                       + f" -> tau0.6; reported on the other {len(report)}")
    # the report problems decide nothing about the choice, the selection problems nothing about the effect
    moved = {**correct, **{("tau1.0", q): 8 for q in report}, **{("ead_cap", q): 0 for q in select}}
    again = claim_row(CLAIM, problems_table(moved), steps_table(), window=4, resamples=400, seed=3)
    assert again["baseline"] == "tau0.6" and again["effect"] == pytest.approx(row["effect"])
    # ties go to the first listed candidate
    tied = {**{("ead_cap", q): 4 for q in IDS}, **{(name, q): 4 for name in CANDIDATES for q in IDS}}
    for order in (CANDIDATES, CANDIDATES[::-1]):
        chosen = claim_row({**CLAIM, "best_of": order}, problems_table(tied), steps_table(), window=4, resamples=50,
                           seed=0)
        assert chosen["baseline"] == order[0] and chosen["effect"] == 0.0
    # the table declares the columns and the label names the candidates and the choice
    written = CLAIMS.read(_write(row))
    label = comparison_label(next(written.itertuples()))
    assert label == "ead_cap - best of {tau0.6, tau1.0, tau1.2} = tau0.6"


def _write(row: dict) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "claims.csv"
    CLAIMS.write(pd.DataFrame([row]), path)
    return path


def test_best_of_chooses_on_the_seeds_every_cell_ran_and_refuses_unpaired_or_ambiguous_claims():
    correct = {(name, q): 4 for name in [*CANDIDATES, "ead_cap"] for q in IDS}
    extra = problems_table({("tau1.0", q): 8 for q in IDS}, seeds=(2,))  # a seed the others lack: left out
    table = pd.concat([problems_table(correct), extra], ignore_index=True)
    row = claim_row(CLAIM, table, steps_table(), window=4, resamples=50, seed=0)
    assert row["num_seeds"] == 2 and row["baseline"] == "tau0.6"
    missing = problems_table(correct)
    missing = missing[~((missing["sampler"] == "tau1.2") & (missing["problem_id"] == "q3"))]
    with pytest.raises(SystemExit, match="tau1.2 and ead_cap were not evaluated on the same problems"):
        claim_row(CLAIM, missing, steps_table(), window=4, resamples=50, seed=0)
    with pytest.raises(SystemExit, match=r"no cell \(p, dapo, tau0.7, n8\)"):
        claim_row({**CLAIM, "best_of": ["tau0.7", "tau1.0"]}, table, steps_table(), window=4, resamples=50, seed=0)
    with pytest.raises(SystemExit, match="chooses its baseline .*baseline = 'tau1.0'"):
        claim_row({**CLAIM, "baseline": "tau1.0"}, table, steps_table(), window=4, resamples=50, seed=0)
    with pytest.raises(SystemExit, match="'entropy' is a training metric"):
        claim_row({**CLAIM, "metric": "entropy"}, table, steps_table(), window=4, resamples=50, seed=0)


D_MAX = ROOT / "configs" / "ablations" / "d_max_sweep.yaml"
D7 = {"id": "D7", "figure": "d_max", "statement": "s", "sampler": "ead_tis_dmax25",
      "best_of": ["tau0.6", "tau1.0", "tau1.2"], "selection": {"metric": "pass@16", "fraction": 0.5, "seed": 0},
      "metric": "pass@16"}


@pytest.mark.parametrize(("change", "message"), [
    ({"selection": None}, r"claims\[0\] \(D7\): a best_of claim declares its selection rule"),
    ({"baseline": "tau1.0"}, r"claims\[0\] \(D7\): .*exactly one of the three"),
    ({"best_of": ["tau1.0", "tau2.0"]},
     r"claims\[0\] \(D7\)\.best_of: the cell .*'tau2\.0'.* is not in the grid"),
    ({"best_of": ["tau1.0", "ead_tis_dmax25"]}, r"contains the claim's own sampler 'ead_tis_dmax25'"),
    ({"best_of": ["tau1.0", "tau1.0"]}, r"name two or more distinct candidate samplers"),
    ({"selection": {"metric": "entropy", "fraction": 0.5, "seed": 0}},
     r"claims\[0\] \(D7\)\.selection\.metric = 'entropy': a best_of claim chooses and compares on the evaluation"),
    ({"selection": {"metric": "pass@16", "fraction": 1.0, "seed": 0}}, r"selection\.fraction = 1\.0"),
])
def test_a_malformed_best_of_claim_is_refused_naming_the_key(change, message):
    claim = {key: value for key, value in {**D7, **change}.items() if value is not None}
    config = load_layered_config(ROOT / "configs" / "config.yaml", D_MAX, command_line={"claims": [claim]})
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)


def test_selection_without_best_of_is_refused_and_the_overlay_claims_validate():
    claim = {**{k: v for k, v in D7.items() if k != "best_of"}, "baseline": "tau1.0"}
    config = load_layered_config(ROOT / "configs" / "config.yaml", D_MAX, command_line={"claims": [claim]})
    with pytest.raises(ConfigError, match=r"\(D7\)\.selection: only a best_of claim"):
        validate_config(config, SCHEMA)
    config = load_layered_config(ROOT / "configs" / "config.yaml", D_MAX)
    validate_config(config, SCHEMA)
    shipped = {claim["id"]: claim for claim in config["claims"]}
    assert shipped["D7"]["best_of"] == ["tau0.6", "tau1.0", "tau1.2"] and shipped["D7"]["sampler"] == "ead_tis_dmax25"
    assert config["rl"]["samplers"]["ead_tis_dmax25"]["d_max"] == config["ead"]["d0"]  # d0 = d_max: no growth
    # rl.run keeps a best_of claim whose candidates all run, and leaves it out when one does not
    kept = load_layered_config(ROOT / "configs" / "config.yaml", D_MAX,
                               command_line={"rl": {"run": ["d_max_sweep", "d_max_fixed"]}})
    assert {"D7", "D8"} <= {claim["id"] for claim in kept["claims"]}
    dropped = load_layered_config(ROOT / "configs" / "config.yaml", D_MAX,
                                  command_line={"rl": {"run": ["d_max_sweep"]}})
    assert not {"D7", "D8"} & {claim["id"] for claim in dropped["claims"]}


def test_rl_run_keeps_a_threshold_claim_whose_one_cell_runs():
    """A threshold claim has no baseline cell: rl.run used to read its missing baseline as a cell that does not run."""
    beyond = ROOT / "configs" / "ablations" / "beyond_the_paper.yaml"
    config = load_layered_config(ROOT / "configs" / "config.yaml", beyond, command_line={"rl": {"run": ["beyond"]}})
    assert "B27" in {claim["id"] for claim in config["claims"]}
