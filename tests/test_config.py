"""Config validation: each bad value fails with one message naming the key and the value."""

import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ead.settings import ConfigError, validate_config
from ead.settings.layering import load_layered_config, restated_keys

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"


def load(*names):
    """Layer config files by the workflow's one rule (ead.settings.load_layered_config)."""
    return load_layered_config(*(ROOT / "configs" / name for name in names))


@pytest.mark.parametrize("profile", [("config.yaml",), ("config.yaml", "smoke.yaml"), ("config.yaml", "paper.yaml"),
                                     ("config.yaml", "full.yaml")])
def test_shipped_profiles_are_valid(profile):
    validate_config(load(*profile), SCHEMA)


def with_change(section, key, value):
    config = copy.deepcopy(load("config.yaml"))
    config[section][key] = value
    return config


@pytest.mark.parametrize(
    "config, expected",
    [
        (with_change("ead", "tau_maxx", 1.2), r"unknown key\(s\) ead\.tau_maxx"),
        (with_change("ead", "tau_max", "hot"), r"ead\.tau_max = 'hot': 'hot' is not of type 'number'"),
        (with_change("ead", "warmup", 2.5), r"ead\.warmup = 2\.5: 2\.5 is not of type 'integer'"),
        # the schedule's own checks, named under the ead block (one check, in ead.schedule)
        (with_change("ead", "tau_min", 1.5), r"ead: .*tau_min must be <= tau_max, got tau_min=1\.5 > tau_max=1\.2"),
        (with_change("ead", "d0", 0), r"ead: .*d0 must be > 0, got d0=0"),
        (with_change("ead", "d0", -5), r"ead: .*d0 must be > 0, got d0=-5"),
        (with_change("ead", "warmup", -1), r"ead: .*warmup \(c\) must be >= 0, got warmup=-1"),
        (with_change("schedule_figure", "decays", []), r"schedule_figure\.decays = \[\]"),
        (with_change("schedule_figure", "decays", [25, 50000]),
         r"schedule_figure\.decays = \[25, 50000\]: every decay rate must be <= ead\.d_max = 40000"),
        (with_change("base_eval", "n", 8), r"base_eval\.n = 8 must be >= every k in base_eval\.k = \[1, 16\]"),
        # YAML's .nan / .inf are numbers to JSON Schema; the schema's numbers are finite
        (with_change("ead", "tau_max", float("nan")), r"ead\.tau_max = nan: must be a finite number"),
        (with_change("ead", "tau_min", float("inf")), r"ead\.tau_min = inf: must be a finite number"),
        (with_change("ead", "d_max", float("-inf")), r"ead\.d_max = -inf: must be a finite number"),
        (with_change("grader", "timeout_s", 0), r"grader\.timeout_s = 0: 0 is less than or equal to the minimum of 0"),
        (with_change("grader", "last_boxed_only", "yes"), r"grader\.last_boxed_only = 'yes': 'yes' is not of type"),
        (with_change("grader", "timeout", 3), r"unknown key\(s\) grader\.timeout"),
        (with_change("base_eval", "every", 8), r"unknown key\(s\) base_eval\.every"),
        (with_change("base_eval", "greedy", True), r"unknown key\(s\) base_eval\.greedy"),
        (with_change("premises", "baseline", "tau9"), r"premises\.baseline = 'tau9' is not one of premises\.samplers"),
        (with_change("premises", "samplers", ["tau1.0", "hot"]),
         r"premises\.samplers = .*\['hot'\] not defined in rl\.samplers"),
        (with_change("premises", "policies", ["tiny9"]),
         r"premises\.policies = \['tiny9'\]: \['tiny9'\] not defined"),
        (with_change("premises", "group_sizes", [4, 32]),
         r"premises\.group_sizes = \[4, 32\]: \[32\] exceed premises\.n = 16"),
        (with_change("claims", 0, {"id": "C1", "figure": "fig04", "statement": "s", "policy": "tiny1m",
                                   "algorithm": "dapo", "n": 8, "sampler": "ead", "baseline": "tau2.0",
                                   "metric": "pass@16"}),
         r"claims\[0\] \(C1\)\.baseline: the cell .* = \('tiny1m', 'dapo', 'tau2\.0', 8\) is not in the grid"),
        (with_change("claims", 0, {"id": "C1", "figure": "fig04", "statement": "s", "policy": "tiny1m",
                                   "algorithm": "dapo", "n": 8, "sampler": "ead", "baseline": "tau1.0",
                                   "metric": "pass@32"}),
         r"claims\[0\] \(C1\)\.metric = 'pass@32': k exceeds rl\.eval\.n = 16"),
        (with_change("claims", 1, {"id": "C1", "figure": "fig04", "statement": "s", "policy": "tiny1m",
                                   "algorithm": "dapo", "n": 8, "sampler": "ead", "baseline": "tau1.0",
                                   "metric": "pass@16"}),
         r"claims\[1\] \(C1\): the id 'C1' is used twice"),
        (with_change("premises", "ead", "tau1.0"), r"premises\.ead = 'tau1\.0' is a 'fixed' sampler, not 'ead'"),
        # k is a set: a repeated k duplicated every Pass@k / Worst@k row of the evaluation tables
        (with_change("base_eval", "k", [1, 16, 16]), r"base_eval\.k = \[1, 16, 16\]: .* non-unique elements"),
        (with_change("rl", "eval", {**load("config.yaml")["rl"]["eval"], "k": [4, 4]}),
         r"rl\.eval\.k = \[4, 4\]: .* non-unique elements"),
    ],
)
def test_bad_values_name_key_and_value(config, expected):
    with pytest.raises(ConfigError, match=expected) as info:
        validate_config(config, SCHEMA)
    assert "\n" not in str(info.value)


def test_unknown_top_level_key():
    config = load("config.yaml")
    config["eadd"] = {}
    with pytest.raises(ConfigError, match=r"unknown key\(s\) eadd"):
        validate_config(config, SCHEMA)


def with_analysis_change(section, key, value):
    """The default config with analyses.<section>.<key> (or the item `key` of the list analyses.<section>) = value."""
    config = copy.deepcopy(load("config.yaml"))
    config["analyses"][section][key] = value
    return config


def without_analysis_key(section, key):
    """The default config without analyses.<section>.<key>."""
    config = copy.deepcopy(load("config.yaml"))
    del config["analyses"][section][key]
    return config


def test_the_model_chooses_the_task_of_an_analysis():
    from ead.settings.analyses import analysis_model_settings, analysis_task

    config = load("config.yaml")
    hub = analysis_model_settings(config, "forking", "smollm2-135m-instruct")
    policy = analysis_model_settings(config, "forking", "tiny1m_sharp")
    assert analysis_task(config, "forking", "smollm2-135m-instruct") == "mmlu" and "prompt_format" not in hub
    assert hub["fork_points"] == [0, 16, 48] and "countdown" not in hub and "models" not in hub
    assert analysis_task(config, "forking", "tiny1m_sharp") == "countdown"
    assert policy["dataset"] == "countdown" and policy["prompt_format"] == "plain" and policy["split"] == "test"
    assert policy["fork_points"] == [0, 4, 8, 16] and policy["tau"] == hub["tau"]  # the block over the section
    assert "subjects" not in policy and "countdown" not in policy
    # the arithmetic policy: its task, its block (samplers included) over the majority section
    arith = analysis_model_settings(config, "majority_scaling", "tiny_arith")
    assert analysis_task(config, "majority_scaling", "tiny_arith") == "arithmetic" and arith["dataset"] == "arithmetic"
    assert arith["samples"] == 32 and arith["samplers"][0] == {"name": "ead"} and "max_solution_steps" not in arith
    assert analysis_model_settings(config, "majority_scaling", "smollm2-135m-instruct")["samplers"][0]["warmup"] == 10


@pytest.mark.parametrize(
    "config, expected",
    [
        (with_analysis_change("forking", "fork_points", [0, -25]),
         r"analyses\.forking\.fork_points = \[0, -25\]: every prefix length must be >= 0"),
        (with_analysis_change("forking", "fork_points", [0, 200]),
         r"analyses\.forking\.fork_points = \[0, 200\]: .* < analyses\.forking\.max_new_tokens = 96"),
        (with_analysis_change("forking", "continuations", 4),
         r"analyses\.forking\.continuations = 4 must be >= every K in analyses\.forking\.k = \[1, 3, 8\]"),
        (with_analysis_change("forking", "prefix_selection", "first"),
         r"analyses\.forking\.prefix_selection = 'first'"),
        (with_analysis_change("majority_scaling", "samples", 0), r"analyses\.majority_scaling\.samples = 0"),
        (with_analysis_change("majority_scaling", "samplers", [{"name": "fixed", "tau": -1}]),
         r"analyses\.majority_scaling\.samplers\[0\]: fixed schedule: tau must be > 0"),
        (with_analysis_change("majority_scaling", "samplers", [{"name": "ead", "tau_maxx": 2}]),
         r"analyses\.majority_scaling\.samplers\[0\]: Unknown parameter\(s\) \['tau_maxx'\] for schedule 'ead'"),
        (with_analysis_change("majority_scaling", "samplers", [{"name": "ead"}, {"name": "ead", "d0": 25}]),
         r"analyses\.majority_scaling\.samplers = .*a sampler is listed twice"),
        (with_analysis_change("entropy_by_position", "dataset", "aime"),
         r"analyses\.entropy_by_position\.dataset = 'aime'"),
        (with_analysis_change("entropy_by_position", "models", ["llama-3-8b-instruct"]),
         r"analyses\.entropy_by_position\.models = \['llama-3-8b-instruct'\]: unknown model\(s\) "
         r"\['llama-3-8b-instruct'\]; "
         r"known: \['smollm2-135m-instruct', 'tiny1m', 'tiny1m_sharp', 'tiny_arith'\] \(the offline model, the tiny "
         r"policies"),
        (with_analysis_change("majority_scaling", "models", []), r"analyses\.majority_scaling\.models = \[\]"),
        (with_analysis_change("forking", "subjects", []), r"analyses\.forking\.subjects = \[\]"),
        (with_analysis_change("majority_scaling", "models", ["smollm2-135m-instruct", "tiny1m"]),
         r"analyses\.majority_scaling\.models = .*'tiny1m' is a countdown policy, and Maj@N votes on answers"),
        (without_analysis_key("majority_scaling", "arithmetic"),
         r"analyses\.majority_scaling\.models = .*'tiny_arith' is a arithmetic policy and needs "
         r"analyses\.majority_scaling\.arithmetic"),
        (with_analysis_change("majority_scaling", "arithmetic",
                              {"split": "test", "samplers": [{"name": "fixed", "tau": 2}] * 2}),
         r"analyses\.majority_scaling\.arithmetic\.samplers = .*a sampler is listed twice"),
        (with_analysis_change("claims", 0, {"id": "F3", "figure": "fig09", "statement": "s",
                                            "analysis": "majority_scaling", "model": "tiny_arith", "metric": "maj@64"}),
         r"analyses\.claims\[0\] \(F3\)\.metric = 'maj@64': N must be in 1\.\.the model's samples = 32"),
        (with_analysis_change("claims", 0, {"id": "F3", "figure": "fig09", "statement": "s",
                                            "analysis": "majority_scaling", "model": "tiny_arith", "metric": "pass@8"}),
         r"analyses\.claims\[0\] \(F3\)\.metric = 'pass@8': a majority claim compares maj@N"),
        (with_analysis_change("forking", "countdown", {**load("config.yaml")["analyses"]["forking"]["countdown"],
                                                       "fork_points": [0, 64]}),
         r"analyses\.forking\.countdown\.fork_points = \[0, 64\]: every prefix length must be >= 0 and < "
         r"analyses\.forking\.countdown\.max_new_tokens = 64"),
        (with_analysis_change("forking", "countdown", {"split": "dev"}),
         r"analyses\.forking\.countdown\.split = 'dev'"),
        (with_analysis_change("entropy_by_position", "countdown", {"split": "test", "samples": 4, "epochs": 2}),
         r"unknown key\(s\) analyses\.entropy_by_position\.countdown\.epochs"),
        (with_analysis_change("claims", 0, {"id": "F1", "figure": "fig01", "statement": "s",
                                            "analysis": "entropy_by_position", "model": "tiny1m", "early": 4,
                                            "late": 64}),
         r"analyses\.claims\[0\] \(F1\): early = 4, late = 64 must satisfy 0 < early <= late < the model's "
         r"max_new_tokens = 64"),
        (with_analysis_change("claims", 0, {"id": "F2", "figure": "fig02", "statement": "s", "analysis": "forking",
                                            "model": "tiny1m", "metric": "maj@16"}),
         r"analyses\.claims\[0\] \(F2\)\.metric = 'maj@16': Maj@k needs unique answers; countdown's are not"),
        (with_analysis_change("claims", 0, {"id": "F2", "figure": "fig02", "statement": "s", "analysis": "forking",
                                            "model": "tiny1m", "metric": "pass@32"}),
         r"analyses\.claims\[0\] \(F2\)\.metric = 'pass@32': k exceeds the model's continuations = 16"),
        (with_analysis_change("claims", 0, {"id": "C1", "figure": "fig01", "statement": "s",
                                            "analysis": "entropy_by_position", "model": "qwen", "early": 4, "late": 8}),
         r"analyses\.claims\[0\] \(C1\): the id 'C1' is used twice"),
        (with_analysis_change("claims", 0, {"id": "F9", "figure": "fig01", "statement": "s",
                                            "analysis": "entropy_by_position", "model": "qwen", "early": 4, "late": 8}),
         r"analyses\.claims\[0\] \(F9\)\.model = 'qwen' is not one of analyses\.entropy_by_position\.models"),
    ],
)
def test_bad_analysis_values_name_key_and_value(config, expected):
    with pytest.raises(ConfigError, match=expected) as info:
        validate_config(config, SCHEMA)
    assert "\n" not in str(info.value)


def test_analysis_engine_must_be_known():
    config = copy.deepcopy(load("config.yaml"))
    config["analyses"]["engine"] = "vLLM"
    with pytest.raises(ConfigError, match=r"analyses\.engine = 'vLLM'"):
        validate_config(config, SCHEMA)


def test_analyses_section_is_required():
    config = load("config.yaml")
    del config["analyses"]
    with pytest.raises(ConfigError, match=r"analyses: the section is required"):
        validate_config(config, SCHEMA)


# --- profiles and their layering --------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["smoke.yaml", "paper.yaml", "full.yaml"])
def test_profiles_state_only_what_differs_from_the_default(profile):
    base = yaml.safe_load((ROOT / "configs" / "config.yaml").read_text())
    delta = yaml.safe_load((ROOT / "configs" / profile).read_text())
    assert restated_keys(base, delta) == []
    assert restated_keys({"a": {"b": 1, "c": [1]}}, {"a": {"b": 2, "c": [1]}, "d": 3}) == ["a.c"]


def test_layering_merges_mappings_and_replaces_everything_else(tmp_path):
    (tmp_path / "base.yaml").write_text("a: {b: 1, c: [1, 2], d: {e: 1}}\nlist: [1, 2]\nx: {y: 1}\n")
    (tmp_path / "delta.yaml").write_text("a: {c: [3], d: {f: 2}}\nlist: [9]\nx: 5\nnew: {k: v}\n")
    layered = load_layered_config(tmp_path / "base.yaml", tmp_path / "delta.yaml")
    assert layered == {"a": {"b": 1, "c": [3], "d": {"e": 1, "f": 2}}, "list": [9], "x": 5, "new": {"k": "v"},
                       "claims": []}


def test_layering_includes_extends_lists_and_remembers_each_values_file(tmp_path):
    """include: layers a shared file first; key+: extends a list; every leaf knows the file that set it last."""
    from ead.settings import layer_config

    (tmp_path / "layers").mkdir()
    (tmp_path / "base.yaml").write_text("a: {b: 1, c: [1, 2]}\nclaims: [{id: C1}]\n")
    (tmp_path / "layers" / "shared.yaml").write_text("a: {b: 2}\n")
    (tmp_path / "profile.yaml").write_text("include: [layers/shared.yaml]\na: {c+: [3]}\nclaims+: [{id: C2}]\n")
    layered = layer_config(tmp_path / "base.yaml", tmp_path / "profile.yaml")
    assert layered.config == {"a": {"b": 2, "c": [1, 2, 3]}, "claims": [{"id": "C1"}, {"id": "C2"}]}
    assert layered.source_of("a.b").endswith("layers/shared.yaml")
    assert layered.source_of("a.c").endswith("profile.yaml") and layered.source_of("claims[1]").endswith("profile.yaml")
    assert layered.name_source("a.b = 2: bad").endswith("shared.yaml: a.b = 2: bad")
    (tmp_path / "loop.yaml").write_text("include: [loop.yaml]\n")
    with pytest.raises(ConfigError, match=r"loop\.yaml: includes itself"):
        layer_config(tmp_path / "base.yaml", tmp_path / "loop.yaml")
    (tmp_path / "bad.yaml").write_text("a: {b+: [3]}\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: a\.b\+ extends a list with a list; a\.b is int"):
        layer_config(tmp_path / "base.yaml", tmp_path / "bad.yaml")


def test_rl_run_narrows_the_grid_and_its_claims_and_figures():
    from ead.settings.rl import expand_grid
    from ead.workflow import final_figures

    config = load_layered_config(ROOT / "configs" / "config.yaml", command_line={"rl": {"run": ["decomposition"]}})
    validate_config(config, SCHEMA)
    assert list(config["rl"]["experiments"]) == ["decomposition"]
    assert {c.sampler for c in expand_grid(config["rl"])} == {"tau1.0", "ead_tis", "anneal_only", "hot_only"}
    assert {c["id"] for c in config["claims"]} == {"C2", "C3", "C13", "C14", "C15", "C16", "C17", "C2-curve",
                                                   "C15-curve"}  # on its cells
    assert not any(name.startswith(("fig04", "fig05", "fig10")) for name in final_figures(config))
    with pytest.raises(ConfigError, match=r"rl\.run = \['mian'\]: \['mian'\] not in rl\.experiments"):
        load_layered_config(ROOT / "configs" / "config.yaml", command_line={"rl": {"run": ["mian"]}})


CLAIM_X1 = "{id: X1, figure: fig04, statement: x, sampler: SAMPLER, baseline: tau1.0, metric: pass@4}"


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


def test_a_list_replaced_and_extended_in_one_file_is_refused_in_either_order(tmp_path):
    from ead.settings import layer_config

    for text in ("claims+: [{id: X2}]\nclaims: [{id: X3}]\n", "claims: [{id: X3}]\nclaims+: [{id: X2}]\n",
                 "premises: {samplers: [ead], samplers+: [tau1.2]}\n"):
        overlay = tmp_path / "both.yaml"
        overlay.write_text(text)
        with pytest.raises(ConfigError, match=rf"^{re.escape(str(overlay))}: (claims|premises\.samplers) and "
                                              r"\1\+ are both given"):
            layer_config(ROOT / "configs" / "config.yaml", overlay)


def test_a_file_included_twice_is_layered_once_where_first_reached(tmp_path):
    """An overlay including layers/verl.yaml over verl_cpu.yaml (built on it) keeps the CPU profile's values; a
    diamond (two includes sharing a layer) layers the shared file once."""
    from ead.settings import layer_config

    overlay = tmp_path / "gpu_layer.yaml"
    overlay.write_text(f"include: [{ROOT / 'configs' / 'layers' / 'verl.yaml'}]\nrl: {{steps: 3}}\n")
    plain = layer_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "verl_cpu.yaml")
    layered = layer_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "verl_cpu.yaml", overlay)
    assert layered.config["rl"]["verl"] == plain.config["rl"]["verl"]
    assert layered.config["rl"]["verl"]["device"] == "cpu" and layered.config["rl"]["steps"] == 3
    assert layered.files.count("configs/layers/verl.yaml") == 1
    (tmp_path / "shared.yaml").write_text("ead: {tau_max: 1.1}\n")
    (tmp_path / "left.yaml").write_text("include: [shared.yaml]\nrl: {steps: 5}\n")
    (tmp_path / "right.yaml").write_text("include: [shared.yaml]\nead: {tau_max: 1.3}\n")
    (tmp_path / "top.yaml").write_text("include: [left.yaml, right.yaml]\nprofile: diamond\n")
    layered = layer_config(ROOT / "configs" / "config.yaml", tmp_path / "top.yaml")
    validate_config(layered.config, SCHEMA)
    assert [Path(name).name for name in layered.files] == ["config.yaml", "shared.yaml", "left.yaml", "right.yaml",
                                                           "top.yaml"]
    assert layered.config["ead"]["tau_max"] == 1.3 and layered.source_of("ead.tau_max").endswith("right.yaml")


@pytest.mark.parametrize(("text", "message"), [
    ("rl:\n  run: main\n", r"OVERLAY: rl\.run = 'main' must be a list of experiment names"),
    ("rl:\n  run: []\n", r"OVERLAY: rl\.run = \[\]: selects no experiment"),
    ("claim_defaults: {n: 4}\n", r"configs/config\.yaml, OVERLAY: claims\[1\] \(C2\)\.sampler: the cell .* 4\) "
                                  r"is not in the grid"),
    ("rl:\n  eval: {k: [1, 8]}\n", r"configs/smoke\.yaml, OVERLAY: rl\.eval\.n = 4 must be >= every k in "
                                     r"rl\.eval\.k = \[1, 8\]"),
    ("claim_defaults: [policy, x]\n", r"OVERLAY: claim_defaults = \['policy', 'x'\] must be a mapping"),
    ("claims: [C1]\n", r"OVERLAY: claims\[0\] = 'C1' must be a mapping"),
])
def test_a_config_error_names_the_file_that_set_the_value_and_both_files_of_a_conflict(tmp_path, text, message,
                                                                                        monkeypatch, capsys):
    """What the workflow and `python -m ead.workflow` print (its main, in-process): one line, the files first, and
    no exception escapes."""
    from ead.workflow import main

    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(text)
    profile = [] if "claim_defaults: {n" in text else ["configs/smoke.yaml"]
    monkeypatch.chdir(ROOT)
    assert main(["--configfile", *profile, str(overlay)]) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert re.match("Config error: " + message.replace("OVERLAY", re.escape(str(overlay))), error), error


def test_the_config_printer_refuses_what_the_workflow_refuses(tmp_path):
    """A repeated --configfile (Snakemake keeps only the last list) and an empty overlay (Snakemake refuses it
    without naming it) are refused by the printer too, naming the flag or the file."""
    from ead.workflow import main

    overlay = tmp_path / "steps.yaml"
    overlay.write_text("rl: {steps: 4}\n")
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing set yet\n")
    assert main(["--configfile", "configs/smoke.yaml", "--configfile", str(overlay)]) == 1
    assert main(["--configfile", "configs/smoke.yaml", str(empty)]) == 1
    assert main(["--configfile", "configs/smoke.yaml", str(overlay)]) == 0


def test_the_printer_and_the_workflow_give_the_same_error_for_a_repeated_flag_and_an_empty_overlay(tmp_path, capsys):
    from ead.workflow import main

    empty = tmp_path / "empty.yaml"
    empty.write_text("\n")
    main(["--configfile", "configs/smoke.yaml", str(empty)])
    assert capsys.readouterr().err.strip() == f"Config error: config file {empty}: is empty; a profile or overlay " \
                                               "sets at least one key"
    main(["--configfile", "configs/smoke.yaml", "--configfile", str(empty)])
    assert capsys.readouterr().err.startswith("Config error: --configfile given 2 times")


def test_paper_experiments_change_policies_and_seeds_and_keep_the_defaults_grid():
    default, paper = load("config.yaml")["rl"]["experiments"], load("config.yaml", "paper.yaml")["rl"]["experiments"]
    assert set(paper) == set(default)
    for name, experiment in paper.items():
        assert experiment["samplers"] == default[name]["samplers"] and experiment["n"] == default[name]["n"], name
        assert experiment["seeds"] == [0], name
    assert paper["algorithms"]["algorithms"] == ["grpo", "clip_cov", "kl_cov"]


def test_an_experiment_a_profile_leaves_alone_is_checked_against_the_backends_policies():
    """One check for both backends: the verl backend's policies are paper_models, so an experiment that keeps
    config.yaml's tiny policies under `rl.backend: verl` is refused by name."""
    config = load("config.yaml", "paper.yaml")
    config["rl"]["experiments"]["main"]["policies"] = ["tiny1m"]
    with pytest.raises(ConfigError, match=r"rl\.experiments\.main\.policies = \['tiny1m'\]: not in paper_models"):
        validate_config(config, SCHEMA)


def test_a_sampler_is_one_schedule_document_checked_by_the_registry_on_either_backend():
    config = copy.deepcopy(load("config.yaml"))
    config["rl"]["samplers"]["half"] = {"name": "two_stage", "tau_early": 1.5, "switch": 8}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half: two_stage schedule: missing parameter\(s\) "
                                          r"\['tau_late'\]"):
        validate_config(config, SCHEMA)
    config["rl"]["samplers"]["half"] = {"name": "fixed", "tau": 1.0, "switch": 8}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half: Unknown parameter\(s\) \['switch'\] for schedule "
                                          r"'fixed'; known: \['tau'\]"):
        validate_config(config, SCHEMA)
    config["rl"]["samplers"]["half"] = {"name": "ead", "tau_max": "hot"}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half: ead schedule: tau_max must be a number, got 'hot'"):
        validate_config(config, SCHEMA)
    config["rl"]["samplers"]["half"] = {"name": "cosine"}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half: Unsupported schedule 'cosine'\. Supported"):
        validate_config(config, SCHEMA)
    config["rl"]["samplers"]["half"] = {"kind": "ead"}  # the old dialect is refused by the schema, naming the key
    with pytest.raises(ConfigError, match=r"rl\.samplers\.half"):
        validate_config(config, SCHEMA)
    paper = copy.deepcopy(load("config.yaml", "paper.yaml"))
    paper["rl"]["experiments"]["main"]["samplers"].append("hot_early")
    validate_config(paper, SCHEMA)  # the vLLM processor samples two_stage too (ead.samplers.vllm_processors)
    paper["rl"]["samplers"]["hot_early"].pop("switch")
    with pytest.raises(ConfigError, match=r"rl\.samplers\.hot_early: two_stage schedule: missing parameter"):
        validate_config(paper, SCHEMA)


def test_schedule_shape_samplers_and_per_sampler_training_temperature():
    from ead.settings.rl import Cell, cell_settings, sampler_schedule

    config = copy.deepcopy(load("config.yaml"))
    samplers = config["rl"]["samplers"]
    samplers["lin"] = {"name": "linear", "tau_max": 1.2, "tau_min": 0.1, "length": 32, "tis": "token"}
    samplers["mean"] = {"name": "ead_mean", "length": 32, "tau_max": 1.5}
    samplers["tau1.2_at1"] = {"name": "fixed", "tau": 1.2, "trains_at": "one", "tis": "token"}
    validate_config(config, SCHEMA)
    assert sampler_schedule(config, "lin") == {"name": "linear", "tau_max": 1.2, "tau_min": 0.1, "length": 32}
    assert sampler_schedule(config, "mean") == {"name": "ead_mean", **config["ead"], "tau_max": 1.5, "length": 32}
    cell = Cell("tiny1m_sharp", "dapo", "tau1.2_at1", 8, 0)
    assert cell_settings(config, cell).training.trains_at == "one"  # its own, over rl.fixed_tau_trains_at
    assert cell_settings(config, Cell("tiny1m_sharp", "dapo", "tau1.2", 8, 0)).training.trains_at == "behaviour"
    samplers["lin"]["tau_min"] = 2.0
    with pytest.raises(ConfigError, match=r"rl\.samplers\.lin: linear schedule: need 0 < tau_min <= tau_max"):
        validate_config(config, SCHEMA)
    samplers["lin"] = {"name": "ead", "length": 32}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.lin: Unknown parameter\(s\) \['length'\] for schedule 'ead'"):
        validate_config(config, SCHEMA)
    samplers["lin"] = {"name": "ead", "trains_at": "one"}
    with pytest.raises(ConfigError, match=r"rl\.samplers\.lin\.trains_at = 'one': only a fixed-tau sampler"):
        validate_config(config, SCHEMA)
    paper = copy.deepcopy(load("config.yaml", "paper.yaml"))
    paper["rl"]["samplers"]["mean"] = samplers["mean"]
    paper["rl"]["experiments"]["main"]["samplers"].append("mean")
    validate_config(paper, SCHEMA)  # on verl too: the vLLM processor samples every registered schedule


def test_a_sharpened_policy_copies_a_trained_one_and_is_nothing_else():
    config = copy.deepcopy(load("config.yaml"))
    config["policies"]["sharp"] = {"sharpen": {"policy": "tiny1m", "temperature": 0.5}}
    validate_config(config, SCHEMA)
    config["policies"]["sharper"] = {"sharpen": {"policy": "sharp", "temperature": 0.5}}
    with pytest.raises(ConfigError, match=r"policies\.sharper\.sharpen\.policy = 'sharp' is not a trained policy"):
        validate_config(config, SCHEMA)
    del config["policies"]["sharper"]
    config["policies"]["sharp"]["shape"] = config["policies"]["tiny1m"]["shape"]  # trained and copied at once
    with pytest.raises(ConfigError, match=r"policies\.sharp"):
        validate_config(config, SCHEMA)
    config["policies"]["sharp"] = {"sharpen": {"policy": "tiny1m", "temperature": 1.5}}  # that would flatten
    with pytest.raises(ConfigError, match=r"policies\.sharp\.sharpen\.temperature"):
        validate_config(config, SCHEMA)

def test_sft_reference_is_random_or_canonical_and_canonical_needs_countdown():
    from ead.settings.policies import sft_settings

    config = copy.deepcopy(load("config.yaml", "ablations/testbed_canonical.yaml"))
    validate_config(config, SCHEMA)
    assert sft_settings(config, "tiny1m_canon")["reference"] == "canonical"
    assert sft_settings(config, "tiny1m")["reference"] == "random"  # unless stated
    config["policies"]["tiny1m_canon"]["sft"]["reference"] = "canonicl"
    with pytest.raises(ConfigError, match=r"policies\.tiny1m_canon\.sft\.reference = 'canonicl': 'canonicl' is not "
                                          r"one of \['random', 'canonical', 'largest_first'\]"):
        validate_config(config, SCHEMA)
    config["policies"]["tiny1m_canon"]["sft"]["reference"] = "canonical"
    config["policies"]["tiny1m_canon"]["task"] = "arithmetic"
    with pytest.raises(ConfigError, match=r"policies\.tiny1m_canon\.sft\.reference = 'canonical' needs task "
                                          r"countdown \(its task is 'arithmetic'\)"):
        validate_config(config, SCHEMA)


# --- Overrides: overlays and --config (docs/operations.md, "Changing an experiment") ---

def test_command_line_overrides_restore_yaml_types_and_nest_dunder_keys():
    from ead.settings.layering import command_line_overrides

    # what Snakemake's --config parser hands over: nested scalars as strings (YAML BaseLoader), top-level ones typed
    raw = {"ead": {"tau_max": "1.5", "warmup": "3"}, "rl__eval__k": "[1, 8]", "rl__steps": 4, "profile": "x",
           "grader": {"last_boxed_only": "true"}}
    assert command_line_overrides(raw) == {"ead": {"tau_max": 1.5, "warmup": 3},
                                           "rl": {"eval": {"k": [1, 8]}, "steps": 4},
                                           "profile": "x", "grader": {"last_boxed_only": True}}


def test_command_line_overrides_merge_into_the_config_key_by_key():
    from ead.settings.layering import command_line_overrides

    before = load("config.yaml")["ead"]
    config = load_layered_config(ROOT / "configs" / "config.yaml", command_line=command_line_overrides(
        {"ead": {"tau_max": "1.5"}, "ead__tau_min": 0.2}))
    assert config["ead"] == {**before, "tau_max": 1.5, "tau_min": 0.2}
    validate_config(config, SCHEMA)


def test_an_empty_mapping_in_an_overlay_is_an_error_naming_the_key(tmp_path):
    (tmp_path / "x.yaml").write_text("rl: {experiments: {}}\n")
    with pytest.raises(ConfigError, match=r"x\.yaml: rl\.experiments = \{\} cannot take effect"):
        load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml", tmp_path / "x.yaml")
    with pytest.raises(ConfigError, match=r"--config: rl\.experiments\.main = \{\} cannot take effect"):
        load_layered_config(ROOT / "configs" / "config.yaml", command_line={"rl": {"experiments": {"main": {}}}})
    (tmp_path / "new.yaml").write_text("new: {}\n")
    load_layered_config(ROOT / "configs" / "config.yaml", tmp_path / "new.yaml")


def test_a_repeated_configfile_flag_is_an_error():
    from ead.settings.layering import check_configfile_flags

    check_configfile_flags(["snakemake", "--configfile", "a.yaml", "b.yaml", "--cores", "all"])
    with pytest.raises(ConfigError, match="--configfile given 2 times"):
        check_configfile_flags(["snakemake", "--configfile", "a.yaml", "--configfile", "b.yaml"])


@pytest.mark.parametrize("argv", [
    ["--configfile=configs/smoke.yaml", "--configfile=configs/ablations/decay_scale_20.yaml"],
    ["--configfile=configs/smoke.yaml", "--configfile", "configs/ablations/decay_scale_20.yaml"],
    ["--configfiles", "a.yaml", "--configfile=b.yaml"],
    ["--configfiles=a.yaml", "--configfiles=b.yaml"],
    ["--configf", "a.yaml", "--configfile", "b.yaml"],  # argparse accepts a unique prefix
])
def test_every_spelling_of_the_configfile_flag_is_counted(argv):
    """`--configfile=F` used to pass uncounted, so Snakemake silently dropped the first overlay."""
    from ead.settings.layering import check_configfile_flags

    with pytest.raises(ConfigError, match="--configfile given 2 times"):
        check_configfile_flags(["snakemake", "-n", *argv])


def test_one_configfile_flag_in_any_spelling_passes():
    from ead.settings.layering import check_configfile_flags

    for argv in (["--configfile=a.yaml"], ["--configfiles", "a.yaml", "b.yaml"], ["--config", "x=1", "--configf=a"],
                 ["--config=a=1", "--configfile", "a.yaml"]):
        check_configfile_flags(["snakemake", *argv])


#: Ablations meant for some profiles only, and the error that names why over the others: beyond_the_paper trains the
#: tiny CPU policies with CPU-only schedules and claims Pass@16 (smoke evaluates 4 samples).
REFUSED_ABLATIONS = {("beyond_the_paper.yaml", "paper.yaml"): r"rl\.algorithms\.dapo_fork20\.forking_token_fraction: "
                                                             r"forking-token training is a loss option of the CPU",
                     ("beyond_the_paper.yaml", "smoke.yaml"): r"claims\[3\] \(B1\)\.metric = 'pass@16': k exceeds",
                     # the d_max sweep is mapped to the CPU testbed's 16 steps and its tiny policy (the paper profile
                     # would need its own caps for 500 steps and its hub models); at smoke size its claims are on
                     # Pass@16 (tests/test_overlays_at_smoke_size.py layers a smoke-sized version)
                     ("d_max_sweep.yaml", "smoke.yaml"): r"claims\[3\] \(D1\)\.metric = 'pass@16': k exceeds",
                     ("d_max_sweep.yaml", "paper.yaml"):
                         r"rl\.experiments\.d_max_sweep\.policies = \['tiny1m_sharp'\]: not in paper_models",
                     # likewise the measured schedule's RL experiment (its claims on Pass@16; the CPU trainer only)
                     ("measured_schedule.yaml", "smoke.yaml"): r"claims\[4\] \(M2\)\.metric = 'pass@16': k exceeds",
                     ("measured_schedule.yaml", "paper.yaml"): r"rl\.experiments\.measured\.policies = "
                                                               r"\['tiny1m_sharp'\]: not in paper_models",
                     # the positive control's claims read Pass@16; its task is the CPU trainer's strategy task
                     ("positive_control.yaml", "smoke.yaml"): r"\(P5\)\.metric = 'pass@16': k exceeds",
                     ("positive_control.yaml", "paper.yaml"): r"rl\.task = 'strategy': the verl backend trains on",
                     # the authors' revised recipe is the paper profile's (its claims name the hub models)
                     **{("revised_recipe.yaml", *profile): r"\(R1\)\.sampler: the cell .*'qwen2\.5-math-1\.5b'.* "
                        r"is not in the grid" for profile in [(), ("smoke.yaml",), ("full.yaml",)]}}


@pytest.mark.parametrize("ablation", sorted(p.name for p in (ROOT / "configs" / "ablations").glob("*.yaml")))
@pytest.mark.parametrize("profile", [[], ["smoke.yaml"], ["paper.yaml"], ["full.yaml"]])
def test_shipped_ablations_layer_over_every_profile(ablation, profile):
    delta = yaml.safe_load((ROOT / "configs" / "ablations" / ablation).read_text())
    config = load("config.yaml", *profile, f"ablations/{ablation}")
    refused = REFUSED_ABLATIONS.get((ablation, *profile))
    if refused:
        with pytest.raises(ConfigError, match=refused):
            validate_config(config, SCHEMA)
        return
    validate_config(config, SCHEMA)
    base = load("config.yaml")
    assert restated_keys(base, delta) == []  # an ablation states only what it changes
    assert len(list((ROOT / "configs" / "ablations").glob("*.yaml"))) >= 2


def test_a_yaml_syntax_error_in_a_config_file_names_the_file_and_line(tmp_path):
    """Snakemake's own message ("Config file is not valid JSON or YAML") names neither."""
    from ead.settings.files import main, read_config_file

    broken = tmp_path / "overlay.yaml"
    broken.write_text("rl:\n  steps: 4\n  eval: {k: [1, 2}\n")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(broken))}:3:\d+: YAML syntax error"):
        read_config_file(broken)
    not_a_mapping = tmp_path / "list.yaml"
    not_a_mapping.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(not_a_mapping))}: must hold a mapping"):
        read_config_file(not_a_mapping)
    smoke = ROOT / "configs" / "smoke.yaml"
    assert read_config_file(smoke) == yaml.safe_load(smoke.read_text())
    assert main([str(ROOT / "configs" / "smoke.yaml")]) == 0
    assert main([str(ROOT / "configs" / "smoke.yaml"), str(broken)]) == 1


@pytest.mark.parametrize(("text", "message"), [
    ("ead:\n  tau_max: 1.2\nrl:\n  steps: 4\nead:\n  c: 10\n", r":5:1: key 'ead' is given twice \(first at line 1\)"),
    ("rl: {steps: 4, steps: 8}\n", r":1:16: key 'steps' is given twice \(first at line 1\)"),
])
def test_a_key_given_twice_in_one_file_is_refused_naming_file_and_line(tmp_path, text, message):
    """YAML keeps the last of two equal keys silently: a second ``ead:`` block would replace the first."""
    from ead.settings.files import read_config_file

    overlay = tmp_path / "twice.yaml"
    overlay.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(str(overlay)) + message):
        read_config_file(overlay)


# --- nothing silently wrong in the config -----------------------------------------------------------------------

@pytest.mark.parametrize(("override", "message"), [
    ({"rl": {"experiments": {"main": {"seeds": [0, 0]}}}},
     r"rl\.experiments\.main\.seeds = \[0, 0\]: 0 is listed twice"),
    ({"rl": {"experiments": {"main": {"samplers": ["tau1.0", "tau1.0", "ead_tis"]}}}},
     r"rl\.experiments\.main\.samplers = .*'tau1\.0' is listed twice"),
    # (the schema's uniqueItems already says it for these)
    ({"analyses": {"entropy_by_position": {"models": ["tiny1m", "tiny1m"]}}},
     r"analyses\.entropy_by_position\.models = .*non-unique elements"),
    ({"premises": {"samplers": ["tau1.0", "ead", "ead"]}}, r"premises\.samplers = .*'ead' is listed twice"),
    ({"paired_baselines": ["tau1.0", "tau1.0"]}, r"paired_baselines = .*non-unique elements"),
])
def test_a_repeated_value_in_a_list_that_is_a_set_is_refused_naming_the_key(override, message):
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml",
                                 command_line=override)
    with pytest.raises(ConfigError, match=message):
        validate_config(config, SCHEMA)


def test_a_config_error_names_the_file_that_set_the_value(tmp_path):
    """The workflow's message (and `python -m ead.workflow`'s) starts with the profile or overlay that set the key."""
    overlay = tmp_path / "hot.yaml"
    overlay.write_text("ead:\n  tau_max: hot\n")
    second = tmp_path / "second.yaml"
    second.write_text("rl:\n  steps: 4\n")
    for files in ([overlay, second], [second, overlay]):
        result = subprocess.run([sys.executable, "-m", "ead.workflow", "--configfile", "configs/smoke.yaml",
                                 *map(str, files)], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 1
        assert result.stderr.strip() == f"Config error: {overlay}: ead.tau_max = 'hot': 'hot' is not of type 'number'"
    result = subprocess.run([sys.executable, "-m", "ead.workflow", "--configfile", "configs/smoke.yaml", "--config",
                             "rl__experiments__main__seeds=[0, 0]"], cwd=ROOT, capture_output=True, text=True)
    assert result.stderr.startswith("Config error: --config: rl.experiments.main.seeds = [0, 0]: 0 is listed twice")


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_the_default_workflow_profile_reruns_incomplete_jobs_and_can_be_turned_off():
    """profiles/default/config.yaml is loaded by Snakemake itself (so an interrupted run's incomplete outputs are rerun
    by the next plain command); `--workflow-profile none` still works."""
    assert yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text()) == {
        "rerun-incomplete": True, "show-failed-logs": True}
    for extra, loaded in (([], True), (["--workflow-profile", "none"], False)):
        result = subprocess.run([sys.executable, "-m", "snakemake", "results/data/countdown.parquet", "-n", "--cores",
                                 "1", *extra, "--configfile", "configs/smoke.yaml"], cwd=ROOT,
                                capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-2000:]
        assert ("Using workflow specific profile profiles/default" in result.stdout + result.stderr) is loaded


#: Every workflow profile a run may use: the one Snakemake loads by itself, and those that replace it.
WORKFLOW_PROFILES = [ROOT / "profiles" / "default", ROOT / "workflow" / "profiles" / "slurm",
                     ROOT / "workflow" / "profiles" / "slurm_local"]


@pytest.mark.parametrize("profile", WORKFLOW_PROFILES, ids=lambda path: path.name)
def test_every_workflow_profile_prints_a_failed_jobs_log_on_the_console(profile):
    """A job's error (a TableError naming file, column and line) is in its log only; Snakemake's console would show
    the job's command line and "check log file(s)" instead."""
    from snakemake.cli import get_argument_parser

    assert yaml.safe_load((profile / "config.yaml").read_text())["show-failed-logs"] is True
    assert "--show-failed-logs" in get_argument_parser()._option_string_actions  # a key this Snakemake knows


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_the_default_profile_shows_a_failed_jobs_error_on_the_console(tmp_path):
    """A one-rule workflow beside a copy of profiles/default: the error its job writes to its log reaches the console.
    The shell command prints the message through printf, so the command line Snakemake echoes does not hold it."""
    (tmp_path / "Snakefile").write_text(
        'rule fail:\n'
        '    output: "never.txt"\n'
        '    log: "fail.log"\n'
        """    shell: "printf 'Table error: something %s' specific > {log}; exit 1"\n""")
    (tmp_path / "profiles" / "default").mkdir(parents=True)
    (tmp_path / "profiles" / "default" / "config.yaml").write_bytes(
        (ROOT / "profiles" / "default" / "config.yaml").read_bytes())
    environment = {name: value for name, value in os.environ.items() if name != "SNAKEMAKE_PROFILE"}
    for extra, shown in (([], True), (["--workflow-profile", "none"], False)):
        result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", *extra], cwd=tmp_path,
                                capture_output=True, text=True, env=environment, timeout=120)
        assert result.returncode == 1, result.stdout + result.stderr
        console = result.stdout + result.stderr
        assert "Error in rule fail" in console
        assert ("Table error: something specific" in console) is shown, console


def test_a_claim_whose_k_exceeds_the_samples_says_how_to_run_it():
    """An overlay refused over the smoke profile says what to do, not only what is wrong."""
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml",
                                 ROOT / "configs" / "ablations" / "d_max_sweep.yaml")
    with pytest.raises(ConfigError, match=r"k exceeds rl\.eval\.n = 4 samples; evaluate more samples per problem "
                                          r"\(e\.g\. --config rl__eval__n=16 rl__eval__k='\[1, 16\]'\)"):
        validate_config(config, SCHEMA)
    validate_config(load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml",
                                        ROOT / "configs" / "ablations" / "d_max_sweep.yaml",
                                        command_line={"rl": {"eval": {"n": 16, "k": [1, 16]}}}), SCHEMA)
