"""The workflow's figure registry and final targets: what Snakemake's ``rule all`` renders, written once here and
imported by the Snakefile (workflow/rules/common.smk), the tests and the benchmarks.

Every figure names the rule that draws it and when it is a target: an RL figure when the experiment it draws runs
(``rl.experiments`` after ``rl.run``), a claims forest plot when some claim names it, an overlay's figure when the
config has its key; the analyses' figures and Fig. 3 always.

    python -m ead.workflow --configfile configs/smoke.yaml configs/ablations/decay_scale_20.yaml   # the resolved config
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["FIGURES", "Figure", "analysis_claims_params", "cell_eval_args", "claim_figures", "claims_params",
           "cli_args", "completeness_args", "final_figures", "json_arg", "paired_curves_args", "rerun_command",
           "rl_figures", "rl_learns_args", "rl_tables_args", "schedule_table_args"]


@dataclass(frozen=True)
class Figure:
    """One figure of the registry. ``rule``: the Snakemake rule that draws it (rl_figure, claims_figure, or the
    figure's own rule); exactly one of ``experiment`` (RL figures: the rl.experiments entry it draws),
    ``claims`` (a forest plot of the claims whose ``figure`` is this) or ``config_key`` (a figure of an overlay's
    section) says when it is a target; none of them: always."""

    rule: str
    experiment: str | None = None
    claims: str | None = None
    config_key: str | None = None

    def is_target(self, config: dict) -> bool:
        if self.experiment is not None:
            return self.experiment in config["rl"]["experiments"]
        if self.claims is not None:
            return any(claim["figure"] == self.claims for claim in config["claims"])
        if self.config_key is not None:
            return self.config_key in config
        return True


FIGURES: dict[str, Figure] = {
    "fig01_entropy_by_position": Figure("fig01_entropy_by_position"),
    "fig02_forking": Figure("fig02_forking"),
    "fig03_annealing_schedule": Figure("fig03_annealing_schedule"),
    "fig04_pass_worst_at_16": Figure("rl_figure", experiment="main"),
    "fig05_larger_model": Figure("rl_figure", experiment="larger_model"),
    "fig06_entropy_dynamics": Figure("rl_figure", experiment="main"),
    "fig07_rollout_scaling": Figure("rl_figure", experiment="rollout_scaling"),
    "fig08_rollout_n_comparison": Figure("rl_figure", experiment="rollout_scaling"),
    "fig09_majority_scaling": Figure("fig09_majority_scaling"),
    "fig10_algorithms": Figure("rl_figure", experiment="algorithms"),
    "fig11_off_policy": Figure("rl_figure", experiment="off_policy"),
    "fig12_response_length": Figure("rl_figure", experiment="main"),
    # beyond the paper (overlays): RL figures of the experiments they add, claim forest plots, their own sections
    "beyond_off_policy_cost": Figure("rl_figure", experiment="beyond"),
    "d_max_sweep": Figure("rl_figure", experiment="d_max_sweep"),
    "claims_beyond": Figure("claims_figure", claims="beyond"),
    "claims_d_max": Figure("claims_figure", claims="d_max"),
    "claims_measured": Figure("claims_figure", claims="measured"),
    "schedule_shapes": Figure("schedule_shapes_figure", config_key="schedule_shapes"),
    "inference_only": Figure("inference_only_figure", config_key="inference_only"),
}


def rl_figures() -> dict[str, str]:
    """RL figure -> the experiment it draws (rule rl_figure; one module each, ead.plots.<figure>)."""
    return {name: figure.experiment for name, figure in FIGURES.items() if figure.rule == "rl_figure"}


def claim_figures() -> list[str]:
    """The ``figure`` ids of claims drawn as forest plots (rule claims_figure: figures/claims_<id>)."""
    return [figure.claims for figure in FIGURES.values() if figure.rule == "claims_figure"]


def rerun_command(configfiles: list[str], overrides: dict) -> str:
    """The ``snakemake`` command that made a run and refreshes it: its ``--configfile`` files (relative to the
    workflow) and ``--config`` pairs, as the summary tells its reader (a smoke summary names configs/smoke.yaml)."""
    command = "snakemake --cores all"
    if configfiles:
        command += " --configfile " + " ".join(configfiles)
    if overrides:
        command += " --config " + " ".join(
            shlex.quote(f"{key}={value if isinstance(value, str) else json.dumps(value)}")
            for key, value in overrides.items())
    return command


def final_figures(config: dict) -> list[str]:
    """The figures ``rule all`` renders for ``config`` (layered and resolved), in registry order."""
    return [name for name, figure in FIGURES.items() if figure.is_target(config)]


# --- argument builders: one rule's command-line flags from the config (the rule files read no config key themselves) --

def cli_args(options: dict) -> str:
    """Render a mapping as `--key value` CLI flags (lists become repeated values), shell-quoted.

    Keys are sorted so that reordering keys in a config file does not change the params and trigger a rerun.
    """
    parts = []
    for key, value in sorted(options.items()):
        flag = f"--{key.replace('_', '-')}"
        values = value if isinstance(value, (list, tuple)) else [value]
        parts.append(" ".join([flag] + [shlex.quote(str(v)) for v in values]))
    return " ".join(parts)


def json_arg(value) -> str:
    """One shell-quoted JSON argument (keys sorted: reordering a config file reruns nothing)."""
    return shlex.quote(json.dumps(value, sort_keys=True))


def schedule_table_args(config: dict) -> str:
    """Fig. 3's schedule table: the ead block's range and the figure's own warm-up, decays and positions."""
    ead, figure = config["ead"], config["schedule_figure"]
    return cli_args({"tau_max": ead["tau_max"], "tau_min": ead["tau_min"], "warmup": figure["warmup"],
                     "decay_scale": ead["decay_scale"], "d_max": ead["d_max"], "decays": figure["decays"],
                     "max_position": figure["max_position"]})


def rl_tables_args(config: dict) -> str:
    """ead.rl.aggregate: the reported k and the bootstrap's seed (``stats.seed``)."""
    return cli_args({"k": config["rl"]["eval"]["k"], "seed": config["stats"]["seed"]})


def cell_eval_args(config: dict) -> str:
    """ead.rl.cell_eval: a cell's eval.csv at the reported k (its CIs drawn with the evaluation's seed)."""
    return cli_args({"k": config["rl"]["eval"]["k"], "seed": config["rl"]["eval"]["seed"]})


def paired_curves_args(config: dict) -> str:
    """ead.rl.paired: every sampler minus each paired baseline, with the claims' bootstrap."""
    return cli_args({"baselines": config["paired_baselines"], "k": config["rl"]["eval"]["k"],
                     "resamples": config["claims_bootstrap"], "seed": config["stats"]["seed"]})


def completeness_args(config: dict) -> str:
    """The extent every RL cell's tables must hold (ead.rl.cells): ead.rl.aggregate and ead.claims.rl refuse a cell
    that lacks a step 1..rl.steps or an evaluation step, naming its file."""
    evaluation = config["rl"]["eval"]
    own_sampler = "--own-sampler" if evaluation.get("own_sampler", False) else "--no-own-sampler"
    return f"--expect-steps {config['rl']['steps']} --eval-every {evaluation['every']} {own_sampler}"


def claims_params(config: dict) -> dict:
    """ead.claims.rl's params: the claims (after claim_defaults and rl.run), their window and bootstrap, and the
    cells' completeness."""
    return {"claims": json_arg(config["claims"]), "window": config["claims_window"],
            "resamples": config["claims_bootstrap"], "seed": config["stats"]["seed"],
            "completeness": completeness_args(config)}


def rl_learns_args(config: dict) -> str:
    """ead.claims.rl_learns (premise G4): its sampler, metric and thresholds (config ``rl_learns``), the claims'
    bootstrap and the cells' completeness (a cell cut short would pass an earlier step off as its last)."""
    return (cli_args({**config["rl_learns"], "resamples": config["claims_bootstrap"], "seed": config["stats"]["seed"]})
            + " " + completeness_args(config))


def analysis_claims_params(config: dict) -> dict:
    """ead.claims.analyses's params: the claims of Figs. 1, 2 and 9 and their bootstrap."""
    return {"claims": json_arg(config["analyses"]["claims"]), "resamples": config["claims_bootstrap"],
            "seed": config["stats"]["seed"]}


def main(argv=None) -> int:
    """Print the resolved config of configs/config.yaml plus ``--configfile`` files (and ``--config`` overrides) as
    the workflow sees it, and the figures it renders; a config error is one line naming the file, key and value."""
    from ead.settings import ConfigError, layer_config, validate_config
    from ead.settings.layering import check_configfile_flags, command_line_overrides

    root = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description="Print the resolved workflow config (profile + overlays).")
    parser.add_argument("--configfile", nargs="*", default=[], help="profile and overlay files, in layering order")
    parser.add_argument("--config", nargs="*", default=[], help="KEY=VALUE overrides (a__b=1 for a nested key)")
    parser.add_argument("--root", type=Path, default=root, help="the repository (its configs/ and workflow/)")
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    overrides = {key: yaml.safe_load(value) for key, value in (item.split("=", 1) for item in args.config)}
    layered = None
    try:
        check_configfile_flags(["ead.workflow", *argv])  # as the workflow does: argparse keeps the last flag only
        layered = layer_config(args.root / "configs" / "config.yaml", *args.configfile,
                               command_line=command_line_overrides(overrides))
        validate_config(layered.config, args.root / "workflow" / "schemas" / "config.schema.yaml")
    except ConfigError as error:
        print(f"Config error: {layered.name_source(str(error)) if layered else error}", file=sys.stderr)
        return 1
    print(f"# layered: {' + '.join(layered.files)}" + (" + --config" if overrides else ""))
    print(f"# figures: {', '.join(final_figures(layered.config))}")
    print(yaml.safe_dump(layered.config, sort_keys=False, width=120), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
