"""The workflow's figure registry and final targets: what Snakemake's ``rule all`` renders, written once here and
imported by the Snakefile (workflow/rules/common.smk), the tests and the benchmarks.

Every figure names the rule that draws it and when it is a target: an RL figure when the experiment it draws runs
(``rl.experiments`` after ``rl.run``), a claims forest plot when some claim names it, an overlay's figure when the
config has its key; the analyses' figures and Fig. 3 always.

    python -m ead.workflow --configfile configs/smoke.yaml configs/ablations/decay_scale_20.yaml   # the resolved config
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["FIGURES", "Figure", "claim_figures", "final_figures", "rl_figures"]


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


def final_figures(config: dict) -> list[str]:
    """The figures ``rule all`` renders for ``config`` (layered and resolved), in registry order."""
    return [name for name, figure in FIGURES.items() if figure.is_target(config)]


def main(argv=None) -> int:
    """Print the resolved config of configs/config.yaml plus ``--configfile`` files (and ``--config`` overrides) as
    the workflow sees it, and the figures it renders; a config error is one line naming the file, key and value."""
    from ead.settings import ConfigError, load_workflow_config

    root = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description="Print the resolved workflow config (profile + overlays).")
    parser.add_argument("--configfile", nargs="*", default=[], help="profile and overlay files, in layering order")
    parser.add_argument("--config", nargs="*", default=[], help="KEY=VALUE overrides (a__b=1 for a nested key)")
    parser.add_argument("--root", type=Path, default=root, help="the repository (its configs/ and workflow/)")
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    overrides = {key: yaml.safe_load(value) for key, value in (item.split("=", 1) for item in args.config)}
    try:  # as the workflow does (common.smk): argparse keeps the last --configfile flag only, so twice is refused
        layered = load_workflow_config(args.root, args.configfile, overrides, ["ead.workflow", *argv])
    except ConfigError as error:
        print(f"Config error: {error}", file=sys.stderr)
        return 1
    print(f"# layered: {' + '.join(layered.files)}" + (" + --config" if overrides else ""))
    print(f"# figures: {', '.join(final_figures(layered.config))}")
    print(yaml.safe_dump(layered.config, sort_keys=False, width=120), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
