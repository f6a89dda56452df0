"""The rules of the claims on the RL grid (ead.settings.claims): best-of and threshold claims, curves, paired
baselines, own-sampler claims, the breakdown, metrics whose k the evaluation cannot serve and predictions, each
refused naming its key."""

import copy
import json
import re
from pathlib import Path

import pytest

from ead.settings import ConfigError, load_layered_config, validate_config
from ead.settings.claims import check_claims, check_rl_learns, claim_evaluation, claim_over
from ead.settings.rl import expand_grid
from tests.conftest import (
    CONFIG,
    SCHEMA,
    load,
)
from tests.settings.test_rl_checks import with_rl

ROOT = Path(__file__).resolve().parents[2]
D_MAX_OVERLAY = ROOT / "configs" / "ablations" / "d_max_sweep.yaml"
DEFAULT = ROOT / "configs" / "config.yaml"
POSITIVE_CONTROL = ROOT / "configs" / "ablations" / "positive_control.yaml"
FIXED_POOL = ROOT / "configs" / "ablations" / "fixed_pool.yaml"


CLAIM_X1 = "{id: X1, figure: fig04, statement: x, sampler: SAMPLER, baseline: tau1.0, metric: pass@4}"


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
    with pytest.raises(ConfigError, match=message):
        load_layered_config(ROOT / "configs" / "config.yaml", D_MAX_OVERLAY, command_line={"claims": [claim]})


def test_a_claims_seeds_must_be_seeds_the_grid_runs_for_both_cells():
    config = load_layered_config(ROOT / "configs" / "config.yaml", POSITIVE_CONTROL)
    claim = next(claim for claim in config["claims"] if "baseline" in claim and claim.get("metric") == "pass@1")
    ran = sorted({cell.seed for cell in expand_grid(config["rl"]) if cell.policy == claim["policy"]
                  and cell.sampler == claim["sampler"]})
    check_claims({**config, "claims": [{**claim, "seeds": ran[:2]}]})  # seeds the grid runs: accepted
    with pytest.raises(ConfigError, match=rf"claims\[0\] \({re.escape(claim['id'])}\)\.seeds: \[99\] are not seeds "
                                          r"of the cell .* in the grid of rl\.experiments"):
        check_claims({**config, "claims": [{**claim, "seeds": [ran[0], 99]}]})


def test_selection_without_best_of_is_refused_and_the_overlay_claims_validate():
    claim = {**{k: v for k, v in D7.items() if k != "best_of"}, "baseline": "tau1.0"}
    with pytest.raises(ConfigError, match=r"\(D7\)\.selection: only a best_of claim"):
        load_layered_config(ROOT / "configs" / "config.yaml", D_MAX_OVERLAY, command_line={"claims": [claim]})
    config = load_layered_config(ROOT / "configs" / "config.yaml", D_MAX_OVERLAY)
    validate_config(config, SCHEMA)
    shipped = {claim["id"]: claim for claim in config["claims"]}
    assert shipped["D7"]["best_of"] == ["tau0.6", "tau1.0", "tau1.2"] and shipped["D7"]["sampler"] == "ead_tis_dmax25"
    assert config["rl"]["samplers"]["ead_tis_dmax25"]["d_max"] == config["ead"]["d0"]  # d0 = d_max: no growth
    # rl.run keeps a best_of claim whose candidates all run, and leaves it out when one does not
    kept = load_layered_config(ROOT / "configs" / "config.yaml", D_MAX_OVERLAY,
                               command_line={"rl": {"run": ["d_max_sweep", "d_max_fixed"]}})
    assert {"D7", "D8"} <= {claim["id"] for claim in kept["claims"]}
    dropped = load_layered_config(ROOT / "configs" / "config.yaml", D_MAX_OVERLAY,
                                  command_line={"rl": {"run": ["d_max_sweep"]}})
    assert not {"D7", "D8"} & {claim["id"] for claim in dropped["claims"]}


def test_rl_run_keeps_a_threshold_claim_whose_one_cell_runs():
    """A threshold claim has no baseline cell: rl.run used to read its missing baseline as a cell that does not run."""
    beyond = ROOT / "configs" / "ablations" / "beyond_the_paper.yaml"
    config = load_layered_config(ROOT / "configs" / "config.yaml", beyond, command_line={"rl": {"run": ["beyond"]}})
    assert "B27" in {claim["id"] for claim in config["claims"]}


@pytest.mark.parametrize("run", [None, "[main]"])
def test_a_misspelt_claim_is_refused_whether_or_not_rl_run_selects_experiments(tmp_path, run):
    """A claim no experiment can make (sampler ead_tiss) is an error in both cases; under rl.run, only a well-formed
    claim on an experiment that does not run is left out."""
    from ead.settings import layer_config

    overlay = tmp_path / "claims.yaml"
    selection = f"rl:\n  run: {run}\n" if run else ""
    overlay.write_text(f"{selection}claims+:\n  - {CLAIM_X1.replace('SAMPLER', 'ead_tiss')}\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(overlay))}.*\(X1\)\.sampler: the cell .*'ead_tiss'.* is "
                                          r"not in the grid of rl\.experiments"):
        layered = layer_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml", overlay)
        try:
            validate_config(layered.config, SCHEMA)
        except ConfigError as error:
            raise ConfigError(layered.name_source(str(error))) from None
    if run:  # a well-formed claim on an experiment left out (C7: off_policy) is left out, not refused
        overlay.write_text(f"{selection}claims+:\n  - {CLAIM_X1.replace('SAMPLER', 'ead_tis')}\n")  # as C2
        layered = layer_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml", overlay)
        validate_config(layered.config, SCHEMA)
        assert "C7" not in {claim["id"] for claim in layered.config["claims"]}
        assert "X1" in {claim["id"] for claim in layered.config["claims"]}


def test_a_claim_whose_k_exceeds_the_samples_says_how_to_run_it():
    """An overlay refused over the smoke profile says what to do, not only what is wrong."""
    with pytest.raises(ConfigError, match=r"k exceeds rl\.eval\.n = 4 samples; evaluate more samples per problem "
                                          r"\(e\.g\. --config rl__eval__n=16 rl__eval__k='\[1, 16\]'\)"):
        load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml",
                            ROOT / "configs" / "ablations" / "d_max_sweep.yaml")
    validate_config(load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml",
                                        ROOT / "configs" / "ablations" / "d_max_sweep.yaml",
                                        command_line={"rl": {"eval": {"n": 16, "k": [1, 16]}}}), SCHEMA)


def test_config_refuses_a_curve_claim_that_has_no_curve():
    from pathlib import Path

    from ead.settings.layering import layer_config

    config = layer_config(Path(__file__).resolve().parents[2] / "configs" / "config.yaml").config
    check_claims(config)
    claims = config["claims"]
    for bad, message in ((dict(metric="entropy"), "is a training metric"),
                         (dict(evaluated_with="own_sampler"), "exists at the last step only")):
        config["claims"] = [{**claims[0], "over": "curve", **bad}]
        with pytest.raises(ConfigError, match=message):
            check_claims(config)
    config["claims"] = claims
    check_rl_learns(config)
    for bad, message in ((dict(sampler="tau9"), "not defined in rl.samplers"), (dict(metric="entropy"), "not pass@k"),
                         (dict(min_ci_low=0.1), "exceeds rl_learns.min_effect")):
        with pytest.raises(ConfigError, match=message):
            check_rl_learns({**config, "rl_learns": {**config["rl_learns"], **bad}})


def test_a_paired_baseline_must_be_a_sampler():
    config = load_layered_config(ROOT / "configs" / "config.yaml")
    config["paired_baselines"] = ["tau1.0", "tau9"]
    with pytest.raises(ConfigError, match=r"paired_baselines\[1\] = 'tau9' is not a sampler of rl.samplers"):
        validate_config(config, SCHEMA)


def test_an_own_sampler_claim_needs_the_own_sampler_evaluation_and_an_evaluation_metric():
    own = [claim for claim in CONFIG["claims"] if claim.get("evaluated_with") == "own_sampler"]
    assert own and CONFIG["rl"]["eval"]["own_sampler"]
    config = with_rl(("eval", "own_sampler"), False)
    with pytest.raises(ConfigError, match=rf"claims\[\d+\] \({own[0]['id']}\)\.evaluated_with = 'own_sampler' needs "
                                          r"rl\.eval\.own_sampler: true"):
        validate_config(config, SCHEMA)
    config = json.loads(json.dumps(CONFIG))
    config["claims"] = [{**own[0], "metric": "entropy"}]
    with pytest.raises(ConfigError, match=r"'entropy' is a training metric"):
        validate_config(config, SCHEMA)


def test_the_breakdown_is_asked_for_by_the_positive_control_and_its_keys_are_checked():
    from ead.settings.arguments import breakdown_args
    from ead.settings.rl import breakdown_runs

    assert not breakdown_runs(CONFIG)  # the default profile makes none
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "ablations" /
                                 "positive_control.yaml")
    validate_config(config, SCHEMA)
    assert breakdown_runs(config)
    args = breakdown_args(config)
    assert ("--group-by key --metric pass@1 --phases 4 --resamples 1000 --seed 1234 --train-metrics "
            "informative_group_fraction solved_group_fraction first_token_entropy --expect-steps 16 --eval-every 4 "
            "--own-sampler") == args
    for change, message in (
            ({"phases": 17}, r"rl\.breakdown\.phases = 17 exceeds rl\.steps = 16"),
            ({"train_metrics": ["reward"]}, r"rl\.breakdown\.train_metrics: \['reward'\] are not steps\.csv"),
            ({"metric": "pass@32"}, r"rl\.breakdown\.metric = 'pass@32': k exceeds rl\.eval\.n = 16"),
            ({"metric": "maj@4"}, r"rl\.breakdown\.metric = 'maj@4': not pass@k"),
            ({"phases": 0}, r"rl\.breakdown\.phases")):
        wrong = copy.deepcopy(config)
        wrong["rl"]["breakdown"].update(change)
        with pytest.raises(ConfigError, match=message):
            validate_config(wrong, SCHEMA)
    wrong = copy.deepcopy(config)
    del wrong["rl"]["breakdown"]["group_by"]
    with pytest.raises(ConfigError, match="group_by"):
        validate_config(wrong, SCHEMA)


@pytest.mark.parametrize(("section", "key"), [("rl_learns", "rl_learns.metric"), ("breakdown", "rl.breakdown.metric")])
def test_every_metric_whose_k_exceeds_the_evaluations_samples_gets_the_same_refusal_and_fix(section, key):
    """One home for "k <= rl.eval.n" (ead.settings.claims.check_metric_k): rl_learns and rl.breakdown are refused as the
    claims are, with the --config pairs that fix it."""
    from ead.settings.claims import check_breakdown, check_metric_k, check_rl_learns

    config = load_layered_config(ROOT / "configs" / "config.yaml")
    n = config["rl"]["eval"]["n"]
    if section == "rl_learns":
        config["rl_learns"]["metric"], check = f"pass@{2 * n}", check_rl_learns
    else:
        config["rl"]["breakdown"] = {**(config["rl"].get("breakdown") or {"phases": 1, "train_metrics": []}),
                                     "metric": f"pass@{2 * n}"}
        check = check_breakdown
    with pytest.raises(ConfigError, match=rf"{re.escape(key)} = 'pass@{2 * n}': k exceeds rl.eval.n = {n} samples; .*"
                                          rf"--config rl__eval__n={2 * n} ") as refused:
        check(config)
    assert refused.value.suggested_overrides == {"rl__eval__n": str(2 * n), "rl__eval__k": f"[1, {2 * n}]"}
    assert check_metric_k(config, key, "greedy_accuracy") is False and check_metric_k(config, key, "worst@1") is True


@pytest.mark.parametrize(("prediction", "message"), [
    ({"verdict": "likely", "effect": 0.02}, r"claims\.0\.prediction\.verdict = 'likely'"),
    ({"verdict": "supported"}, r"claims\.0\.prediction: 'effect' is a required property"),
    ({"verdict": "negligible", "effect": 0.0, "why": "x"}, r"unknown key\(s\) claims\.0\.prediction\.why"),
])
def test_a_malformed_prediction_is_refused_naming_the_key(prediction, message):
    config = copy.deepcopy(load("config.yaml"))
    config["claims"][0]["prediction"] = prediction
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)
    config["claims"][0]["prediction"] = {"verdict": "negligible", "effect": -0.005}
    validate_config(config, SCHEMA)


def test_an_rl_claim_reads_the_last_step_at_the_declared_temperature_unless_it_says_otherwise():
    """The two defaults of an RL claim, written once (ead.settings.claims) for the config checks and ead.claims.rl."""
    assert (claim_over({}), claim_evaluation({})) == ("last", "eval_tau")
    assert (claim_over({"over": "curve"}), claim_evaluation({"evaluated_with": "own_sampler"})) == ("curve",
                                                                                                    "own_sampler")
