"""One source of defaults: every job CLI the workflow calls takes its settings from the config, so a default it still
has (for direct use) must equal the shipped config's value; library defaults that restate the config must too."""

import argparse
import dataclasses
import importlib
import json
import re
from pathlib import Path

import pytest

from ead.models.tiny_policy import TinyPolicyShape
from ead.schedule import AnnealedSchedule
from ead.settings.layering import load_layered_config
from ead.workflow import rl_figures

ROOT = Path(__file__).resolve().parents[1]
CONFIG = load_layered_config(ROOT / "configs" / "config.yaml")
RL_FIGURES = list(rl_figures())  # the one registry (ead.workflow.FIGURES): rule rl_figure runs ead.plots.<figure>
#: Options that are not experiment settings: their defaults are behaviour no config key chooses.
NOT_CONFIG = {
    ("ead.analyses.entropy_by_position", "prompt_format"), ("ead.analyses.forking", "prompt_format"),
    ("ead.analyses.majority_scaling", "prompt_format"),  # chat template, what every hub-model job uses
    # every row: the benchmarks have no split; a tiny policy's job gets analyses.<section>.countdown.split
    ("ead.analyses.entropy_by_position", "split"), ("ead.analyses.forking", "split"),
    ("ead.analyses.majority_scaling", "split"),
}


def _config(path: str):
    value = CONFIG
    for key in path.split("."):
        value = value[key]
    return value


#: (job module, option) -> the config key whose value its default must equal.
CONFIG_KEYS = {
    ("ead.data.build", "cache_dir"): "cache_dir",
    **{("ead.data.build", key): f"data.countdown.{key}" for key in CONFIG["data"]["countdown"]},
    **{("ead.data.build", key): f"data.arithmetic.{key}" for key in ("p_balanced", "max_value")},
    **{(f"ead.analyses.{job}", key): f"analyses.{key}" for job in ("entropy_by_position", "forking", "majority_scaling")
       for key in ("engine", "dtype")},
    **{(f"ead.analyses.{job}", "vllm_options"): "analyses.vllm"
       for job in ("entropy_by_position", "forking", "majority_scaling")},
    **{(f"ead.analyses.{job}", key): f"analyses.{section}.{key}"
       for job, section in (("entropy_by_position", "entropy"), ("forking", "forking"),
                            ("majority_scaling", "majority")) for key in ("question_seed", "seed", "batch_size")},
    ("ead.analyses.entropy_by_position", "tau"): "analyses.entropy.tau",
    ("ead.analyses.forking", "tau"): "analyses.forking.tau",
    ("ead.analyses.forking", "prefix_selection"): "analyses.forking.prefix_selection",
}


def workflow_jobs() -> list[str]:
    """Every module the workflow's rules run (`python -m ead....`)."""
    modules = set()
    for rules in (ROOT / "workflow" / "rules").glob("*.smk"):
        modules |= set(re.findall(r"python -m (ead[\w.{}]+)", rules.read_text()))
    expanded = {m for m in modules if "{" not in m}
    assert {m for m in modules if "{" in m} == {"ead.plots.{wildcards.figure}"}
    return sorted(expanded | {f"ead.plots.{figure}" for figure in RL_FIGURES})


class _Parsed(Exception):
    pass


def job_parser(module: str) -> argparse.ArgumentParser:
    """The argument parser a job's main() builds (captured when it parses, before the job runs)."""

    def capture(self, *args, **kwargs):
        raise _Parsed(self)

    imported = importlib.import_module(module)
    if hasattr(imported, "main"):
        entry = imported.main
    else:  # RL figures: `python -m` calls ead.plots.rl_curves.run with the module's plot
        from ead.plots.rl_curves import run

        def entry(argv):
            run(imported.plot, module, argv)
    original = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = capture
    try:
        entry([])
    except _Parsed as parsed:
        return parsed.args[0]
    finally:
        argparse.ArgumentParser.parse_args = original
    raise AssertionError(f"{module}.main did not parse its arguments")


def defaults(parser: argparse.ArgumentParser) -> dict:
    """dest -> default of every optional argument that has one (subcommands included)."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.update(defaults(sub))
        elif not action.required and action.default is not None and action.default is not argparse.SUPPRESS \
                and not isinstance(action, (argparse._HelpAction, argparse._StoreTrueAction)):
            found[action.dest] = action.default
    return found


def test_the_workflow_runs_these_jobs():
    jobs = workflow_jobs()
    assert {"ead.evaluation", "ead.rl.train", "ead.models.sft", "ead.analyses.forking", "ead.rl.verl.run"} <= set(jobs)


@pytest.mark.parametrize("module", workflow_jobs())
def test_no_job_default_differs_from_the_shipped_config(module):
    for dest, default in defaults(job_parser(module)).items():
        key = (module, dest)
        if key in NOT_CONFIG:
            continue
        assert key in CONFIG_KEYS, f"{module} --{dest.replace('_', '-')} has a default ({default!r}) that no config " \
                                   "key backs: make it required or map it to its config key here"
        expected = _config(CONFIG_KEYS[key])
        if dest == "vllm_options":
            default = json.loads(default)
        assert default == expected, f"{module} --{dest}: default {default!r} != {CONFIG_KEYS[key]} = {expected!r}"


def test_library_defaults_equal_the_config():
    """AnnealedSchedule() is the config's `ead` block; TinyPolicyShape() is the tiny1m policy's shape."""
    schedule = {field.name: field.default for field in dataclasses.fields(AnnealedSchedule)}
    assert schedule == CONFIG["ead"]
    shape = {field.name: field.default for field in dataclasses.fields(TinyPolicyShape)}
    assert shape == CONFIG["policies"]["tiny1m"]["shape"]


def test_no_hidden_constants_tis_cap_and_d_max_come_from_the_config():
    from ead.analyses.schedule_table import schedule_table
    from ead.settings.rl import Cell, cell_settings

    config = load_layered_config(ROOT / "configs" / "config.yaml")
    config["rl"]["tis_cap"] = 3.0
    assert cell_settings(config, Cell("tiny1m", "dapo", "ead", 8, 0)).training.tis_cap == 3.0  # no own tis_cap
    assert cell_settings(config, Cell("tiny1m", "dapo", "ead_tis", 8, 0)).training.tis_cap == 2.0  # the sampler's own
    table = schedule_table(1.2, 0.1, 10, 1, 100, [25, 100], 8)
    assert set(table["effective_decay"]) == {25.0, 100.0}
    with pytest.raises(ValueError, match="d_max must be >= d0"):
        schedule_table(1.2, 0.1, 10, 1, 50, [25, 100], 8)
