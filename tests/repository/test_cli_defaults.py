"""One source of defaults: every job CLI the workflow calls takes its settings from the config, so a default it still
has (for direct use) must equal the shipped config's value; library defaults that restate the config must too."""

import argparse
import dataclasses
import importlib
import re
from pathlib import Path

import pytest

from ead.models.tiny_policy import TinyPolicyShape
from ead.schedule import AnnealedSchedule
from ead.settings import load_layered_config
from ead.settings.analyses import ANALYSES
from ead.settings.trl import CELL_MODULES

ROOT = Path(__file__).resolve().parents[2]
CONFIG = load_layered_config(ROOT / "configs" / "config.yaml")
#: Options that are not experiment settings: their defaults are behaviour no config key chooses.
NOT_CONFIG = {
    ("ead.analyses.entropy_by_position", "prompt_format"), ("ead.analyses.forking", "prompt_format"),
    ("ead.analyses.majority_scaling", "prompt_format"),  # chat template, what every hub-model job uses
    # every row: the benchmarks have no split; a tiny policy's job gets analyses.<section>.countdown.split
    ("ead.analyses.entropy_by_position", "split"), ("ead.analyses.forking", "split"),
    ("ead.analyses.majority_scaling", "split"),
}


def workflow_jobs() -> list[str]:
    """Every module the workflow's rules run (`python -m ead....`)."""
    modules = set()
    for rules in (ROOT / "workflow" / "rules").glob("*.smk"):
        modules |= set(re.findall(r"python -m (ead[\w.{}]+)", rules.read_text()))
    expanded = {m for m in modules if "{" not in m}
    assert {m for m in modules if "{" in m} == {"ead.analyses.{wildcards.analysis}"}  # one rule per analysis
    # the CPU backend's cell rule runs the module of rl.trainer (ead.settings.trl.CELL_MODULES)
    assert "python -m {SWITCHES.rl_cell_module}" in (ROOT / "workflow" / "rules" / "rl_cpu.smk").read_text()
    return sorted(expanded | {f"ead.analyses.{analysis}" for analysis in ANALYSES} | set(CELL_MODULES.values()))


class _Parsed(Exception):
    pass


def job_parser(module: str) -> argparse.ArgumentParser:
    """The argument parser a job's main() builds (captured when it parses, before the job runs)."""

    def capture(self, *args, **kwargs):
        raise _Parsed(self)

    entry = importlib.import_module(module).main
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
def test_no_job_flag_restates_a_config_value(module):
    """The workflow passes every experiment setting, so a job flag with a default could only restate (and drift
    from) a config value: every default left is behaviour no config key chooses (NOT_CONFIG)."""
    restating = {f"--{dest.replace('_', '-')} (default {default!r})" for dest, default in
                 defaults(job_parser(module)).items() if (module, dest) not in NOT_CONFIG}
    assert not restating, f"{module}: make these flags required (the workflow passes them): {sorted(restating)}"


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
