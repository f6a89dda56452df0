"""The d_max sweep overlay end to end at smoke size: its cells train, the paired curves, claims and both figures come
out of the DAG (configs/smoke.yaml + configs/ablations/d_max_sweep.yaml + a smoke-sized delta: Pass@4 claims, since
smoke evaluates 4 samples, 2 seeds, one cap and two fixed temperatures), including the d0 = d_max claim against the
best fixed temperature chosen on half the evaluation problems (D7). How the figure draws several caps is
tests/plots/test_d_max_sweep.py's; here every new cell costs a training job, so the delta trains only the cells the
DAG's checks need (6 new cells instead of the overlay's 12 at this size).

The measured schedule's overlay likewise (its entropy analysis sizes c and d0, and its cells sample with them), and
the mechanism map (configs/ablations/mechanism_map.yaml) on two of its six policies, one per execution, in its own
profile: SFT, the premise probe by key, every sampler's cells, the chain table, the claims with their pre-registered
predictions, the map figure, and the block tools/mechanism_map.py renders from them."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ead.claims import VERDICTS
from ead.tables import CLAIMS, EVAL_BY_GROUP, PAIRED_CURVES, PREMISES, PREMISES_BY_GROUP, SIGNAL_BY_PHASE
from tests.conftest import copy_workflow

ROOT = Path(__file__).resolve().parents[2]
SMOKE_DELTA = {  # layered into the smoke profile's own run (runs/smoke), which the session's smoke run completed
    "rl": {"experiments": {"d_max_sweep": {"seeds": [0, 1], "samplers": ["tau1.0", "ead_tis", "ead_tis_dmax25"]},
                           "d_max_fixed": {"seeds": [0, 1], "samplers": ["tau1.0", "tau1.2"]}}},
    "claims": [  # replaces the profile's and the overlay's claims (claims+ would extend them)
        {"id": "D1", "figure": "d_max",
         "statement": "Capping d_s at d_max = 25 lowers Pass@4 below the uncapped schedule",
         "policy": "tiny1m_sharp", "algorithm": "dapo", "n": 8, "sampler": "ead_tis_dmax25", "baseline": "ead_tis",
         "metric": "pass@4", "direction": "less"},
        {"id": "D4", "figure": "d_max",
         "statement": "Capping d_s at d_max = 25 lowers Pass@1 below the uncapped schedule",
         "policy": "tiny1m_sharp", "algorithm": "dapo", "n": 8, "sampler": "ead_tis_dmax25", "baseline": "ead_tis",
         "metric": "pass@1", "direction": "less"},
        {"id": "D7", "figure": "d_max",
         "statement": "EAD + TIS with d0 = d_max = 25 raises Pass@4 over the best fixed temperature",
         "policy": "tiny1m_sharp", "algorithm": "dapo", "n": 8, "sampler": "ead_tis_dmax25",
         "best_of": ["tau1.0", "tau1.2"], "selection": {"metric": "pass@4", "fraction": 0.5, "seed": 0},
         "metric": "pass@4"},
    ],
}


@pytest.mark.slow
def test_d_max_sweep_runs_at_smoke_size(smoke_run_copy):
    workdir = smoke_run_copy
    (workdir / "smoke_dmax.yaml").write_text(yaml.safe_dump(SMOKE_DELTA))
    targets = ["figures/d_max_sweep.png", "figures/claims_d_max.png", "results/claims.csv"]
    # layered on the session's finished smoke run, as a user layers it on a default run: only what it adds runs
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "configs/smoke.yaml",
                             "configs/ablations/d_max_sweep.yaml", "smoke_dmax.yaml", "--config",
                             f"cache_dir={ROOT / '.cache' / 'wheels'}", "--", *targets], cwd=workdir,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule tiny_policy_sft:" not in result.stdout + result.stderr  # the smoke run's policies, reused
    out = workdir / "runs" / "smoke"
    for target in targets:
        assert (out / target).stat().st_size > 0
    claims = CLAIMS.read(out / "results" / "claims.csv")
    rows = claims[claims["figure"] == "d_max"].set_index("claim")
    assert list(rows.index) == ["D1", "D4", "D7"] and set(rows["num_seeds"]) == {2}
    assert rows["verdict"].isin(VERDICTS).all() and rows["mde"].notna().all()
    assert (rows["smallest_effect"] == 0.02).all()  # claim_defaults' bound, filled into claims the delta replaced
    paired = PAIRED_CURVES.read(out / "results" / "rl" / "paired_curves.csv")
    capped = paired[(paired["baseline"] == "ead_tis") & paired["sampler"].str.startswith("ead_tis_dmax")]
    assert set(capped["sampler"]) == {"ead_tis_dmax25"}
    last = capped[(capped["sampler"] == "ead_tis_dmax25") & (capped["metric"] == "pass@4")
                  & (capped["step"] == capped["step"].max())].iloc[0]
    assert last["effect"] == pytest.approx(rows.loc["D1", "effect"])  # the figure's last point is the claim
    # D7: the chosen fixed temperature is one of the two, chosen on 2 of smoke's 4 evaluation problems and reported
    # on the other 2 (x 2 seeds)
    best = rows.loc["D7"]
    assert best["baseline"] in ("tau1.0", "tau1.2") and best["best_of"] == "tau1.0 tau1.2"
    assert best["num_units"] == 4 and "on 2 selection problems" in best["selection"]
    assert best["selection"].endswith(f"-> {best['baseline']}; reported on the other 2")


MEASURED_DELTA = {
    "measured_schedule": {"policies": ["tiny1m"], "window": 4},  # smoke's entropy analysis covers tiny1m only
    "premises": {"policies": ["tiny1m"]},  # the probe's measured sampler needs its policy sized
    "rl": {"experiments": {"measured": {"policies": ["tiny1m"], "seeds": [0, 1]}}},
    "claims": [  # replaces the profile's and the overlay's claims (claims+ would extend them)
        {"id": "M1", "figure": "measured",
         "statement": "EAD + TIS with the measured schedule raises Pass@4 over tau 1.0",
         "policy": "tiny1m", "algorithm": "dapo", "n": 8, "sampler": "ead_measured_tis", "baseline": "tau1.0",
         "metric": "pass@4"}],
}


@pytest.mark.slow
def test_measured_schedule_sizes_c_and_d0_and_its_cells_sample_with_them(smoke_run_copy):
    import json

    from ead.analyses.measured_schedule import read_measured_schedule
    from ead.tables import STEPS

    workdir = smoke_run_copy
    (workdir / "smoke_ms.yaml").write_text(yaml.safe_dump(MEASURED_DELTA))
    targets = ["figures/fig03_annealing_schedule.png", "figures/claims_measured.png", "results/premises/tiny1m.csv"]
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "configs/smoke.yaml",
                             "configs/ablations/measured_schedule.yaml", "smoke_ms.yaml", "--config",
                             f"cache_dir={ROOT / '.cache' / 'wheels'}", "--", *targets], cwd=workdir,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule tiny_policy_sft:" not in result.stdout + result.stderr  # the smoke run's policies, reused
    out = workdir / "runs" / "smoke"
    measured = read_measured_schedule(out / "results" / "schedule" / "measured_tiny1m.csv")
    steps = STEPS.read(out / "results" / "rl" / "tiny1m" / "dapo" / "ead_measured_tis" / "n8" / "seed0" / "steps.csv")
    schedule = json.loads(steps["schedule_params"].iloc[0])
    assert (schedule["warmup"], schedule["d0"]) == (measured["warmup"], pytest.approx(measured["d0"]))
    hand = STEPS.read(out / "results" / "rl" / "tiny1m" / "dapo" / "ead_tis" / "n8" / "seed0" / "steps.csv")
    assert json.loads(hand["schedule_params"].iloc[0])["d0"] == 25  # the hand-sized cell keeps the ead block's
    claims = CLAIMS.read(out / "results" / "claims.csv")
    assert claims[claims["claim"] == "M1"]["num_seeds"].iloc[0] == 2
    # the premise probe samples the measured schedule too, paired against tau 1.0, and records its c and d0
    probe = PREMISES.read(out / "results" / "premises" / "tiny1m.csv")
    rows = probe[(probe["sampler"] == "ead_measured_tis") & (probe["metric"] == "pass@1")]
    assert sorted(rows["step"]) == [1, 2] and rows["diff"].notna().all()
    probed = json.loads(probe["schedules"].iloc[0])
    assert (probed["ead_measured_tis"]["warmup"], probed["ead_measured_tis"]["d0"]) == (
        measured["warmup"], pytest.approx(measured["d0"]))
    assert probed["ead"]["d0"] == 25


#: The map's rarity level both policies share, one per execution (the primary claim's policy is map_p05_fragile).
MAP_POLICIES = ["map_p05_exact", "map_p05_fragile"]


def map_smoke_delta(overlay: dict) -> dict:
    """The mechanism map at smoke size: two of its policies, SFT and data as smoke sizes them, 2 seeds, the breakdown
    over smoke's 2 steps; the overlay's own claims of those policies, predictions included."""
    return {
        "data": {"strategy": {"n_train": 300, "n_val": 16, "n_test": 16}},
        "policies": {policy: {"sft": {"steps": 3, "batch_size": 16, "checkpoint_every": 2}} for policy in MAP_POLICIES},
        "premises": {"policies": MAP_POLICIES},
        "rl": {"run": ["mechanism_map"], "breakdown": {"phases": 2},
               "experiments": {"mechanism_map": {"policies": MAP_POLICIES, "seeds": [0, 1]}}},
        "claims": [claim for claim in overlay["claims"] if claim["policy"] in MAP_POLICIES],
    }


@pytest.mark.slow
def test_the_mechanism_map_runs_at_smoke_size_with_its_predictions_chain_and_block(tmp_path):
    workdir = copy_workflow(tmp_path)
    overlay = yaml.safe_load((workdir / "configs" / "ablations" / "mechanism_map.yaml").read_text())
    delta = map_smoke_delta(overlay)
    (workdir / "smoke_map.yaml").write_text(yaml.safe_dump(delta))
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "configs/smoke.yaml",
                             "configs/ablations/mechanism_map.yaml", "smoke_map.yaml", "--config",
                             f"cache_dir={ROOT / '.cache' / 'wheels'}"], cwd=workdir, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    out = workdir / "runs" / "mechanism_map"
    for figure in ("claims_mechanism_map.png", "claims_mechanism_map.pdf", "rl_chain.png", "rl_chain.pdf"):
        assert (out / "figures" / figure).stat().st_size > 0

    # the claims: the overlay's, each with the prediction it declared, a verdict of the four, G4 of its policy
    claims = CLAIMS.read(out / "results" / "claims.csv").set_index("claim")
    declared = {claim["id"]: claim for claim in delta["claims"]}
    assert sorted(claims.index) == sorted(declared) and len(declared) == 3 * len(MAP_POLICIES)
    for claim_id, claim in declared.items():
        row = claims.loc[claim_id]
        assert (row["sampler"], row["baseline"], row["over"]) == (claim["sampler"], claim["baseline"], "curve")
        assert row["predicted_verdict"] == claim["prediction"]["verdict"]
        assert row["predicted_effect"] == pytest.approx(claim["prediction"]["effect"])
    assert claims["verdict"].isin(VERDICTS).all() and (claims["num_seeds"] == 2).all()
    assert (claims["smallest_effect"] == 0.02).all() and claims["rl_learns"].isin(VERDICTS).all()

    # the chain: each policy x sampler's training signal by phase (smoke's two steps, two phases), over both seeds
    signal = SIGNAL_BY_PHASE.read(out / "results" / "rl" / "signal_by_phase.csv")
    samplers = overlay["rl"]["experiments"]["mechanism_map"]["samplers"]
    metrics = overlay["rl"]["breakdown"]["train_metrics"]
    assert sorted(set(zip(signal["policy"], signal["sampler"], signal["metric"], signal["phase"]))) == sorted(
        (policy, sampler, metric, phase) for policy in MAP_POLICIES for sampler in samplers for metric in metrics
        for phase in (1, 2))
    assert (signal["num_seeds"] == 2).all()
    # ... and where each cell's samples fail, by key and evaluated step: a wrong strategy at the fork, or the key's
    # strategy carried out wrong (every cell's eval_failures.csv, through the breakdown)
    groups = EVAL_BY_GROUP.read(out / "results" / "rl" / "eval_by_group.csv")
    for metric in ("failure:strategy", "failure:execution"):
        rows = groups[groups["metric"] == metric]
        assert sorted(set(zip(rows["policy"], rows["sampler"], rows["step"]))) == sorted(
            (policy, sampler, step) for policy in MAP_POLICIES for sampler in samplers for step in (0, 1, 2))
        assert "(all)" in set(rows["group"]) <= {"+", "-", "*", "/", "(all)"}  # by key (smoke: 4 problems) and over all
        assert rows["value"].between(0, 1).all()
    # the probe by key, on every policy of the map: the strategy task's keys, every probed sampler
    for policy in MAP_POLICIES:
        by_key = PREMISES_BY_GROUP.read(out / "results" / "premises" / f"{policy}_by_key.csv")
        assert set(by_key["group_by"]) == {"key"} and set(by_key["sampler"]) >= set(overlay["premises"]["samplers"])

    # the block of docs/rl-learns.md, rendered by its program from this run's tables
    report = tmp_path / "mechanism_map.md"
    rendered = subprocess.run([sys.executable, str(ROOT / "tools" / "mechanism_map.py"), "--results",
                               str(out / "results"), "--commit", "0000000", "--date", "2026-01-01", "--out",
                               str(report)], capture_output=True, text=True)
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    text = report.read_text()
    assert all(f"| {policy} |" in text for policy in MAP_POLICIES)
    met = sum(claims.loc[claim_id, "verdict"] == claim["prediction"]["verdict"] for claim_id, claim in declared.items())
    assert f"{met} of {len(declared)} verdicts as pre-registered" in text
    assert "Primary, M-p05-fragile-b" in text
    chain = subprocess.run([sys.executable, str(ROOT / "tools" / "mechanism_map.py"), "--chain", "--results",
                            str(out / "results"), "--commit", "0000000", "--date", "2026-01-01", "--out",
                            str(tmp_path / "chain.md")], capture_output=True, text=True)
    assert chain.returncode == 0, chain.stdout + chain.stderr
    chain_rows = [line for line in (tmp_path / "chain.md").read_text().splitlines() if line.startswith("| map_")]
    assert len(chain_rows) == len(MAP_POLICIES) * len(samplers)
