"""The workflow's figure registry and final targets: what Snakemake's ``rule all`` renders, written once here and
imported by the Snakefile (workflow/rules/common.smk), the tests and the benchmarks.

Every figure names the rule that draws it and when it is a target: an RL figure when the experiment it draws runs
(``rl.experiments`` after ``rl.run``), a claims forest plot when some claim names it, an overlay's figure when the
config has its key, an analysis' figure when the analysis lists a model; Fig. 3 always. An RL figure of
metric-vs-step panels also says what its panels draw (:class:`CurvePanels`), so those figures are entries here over
one plotting function (ead.plots.rl_figure), not one module each.

    python -m ead.workflow --configfile configs/smoke.yaml configs/ablations/decay_scale_20.yaml   # the resolved config
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["FIGURES", "CurvePanels", "Figure", "claim_figures", "final_figures", "report_refusal", "rl_figures",
           "workflow_profile_refusal"]


@dataclass(frozen=True)
class CurvePanels:
    """The panels of an RL figure of curves over training steps (drawn by ead.plots.rl_figure): one row per metric of
    ``metrics`` read from the ``curves`` table (``eval``: ead.rl.aggregate's evaluation curves, ``train``: its training
    curves), one column per value of ``facet`` in the experiment (``policy``, ``algorithm`` or ``n``), one line per
    sampler; under them one row per metric of ``paired_metrics``, each sampler minus ``baseline`` (ead.rl.paired).
    ``{k}`` in a metric or the ``title`` is the k drawn; ``{ci}`` in the title becomes what the bands are."""

    curves: str
    metrics: tuple[str, ...]
    facet: str
    title: str
    paired_metrics: tuple[str, ...] = ()
    baseline: str = "tau1.0"


@dataclass(frozen=True)
class Figure:
    """One figure of the registry. ``rule``: the Snakemake rule that draws it (rl_figure, claims_figure, or the
    figure's own rule); exactly one of ``experiment`` (RL figures: the rl.experiments entry it draws),
    ``claims`` (a forest plot of the claims whose ``figure`` is this), ``config_key`` (a figure of an overlay's
    section), ``analysis`` (a sampling analysis' figure: when ``analyses.<analysis>.models`` lists a model) or
    ``breakdown`` (a figure of the grid's breakdown: when the config has ``rl.breakdown``) says when it is a target;
    none of them: always. ``panels``: what an RL figure of curves draws (any other
    RL figure is drawn by its own module, ead.plots.<figure>)."""

    rule: str
    experiment: str | None = None
    claims: str | None = None
    config_key: str | None = None
    analysis: str | None = None
    panels: CurvePanels | None = None
    breakdown: bool = False

    def is_target(self, config: dict) -> bool:
        if self.breakdown:
            return bool(config["rl"].get("breakdown"))
        if self.experiment is not None:
            return self.experiment in config["rl"]["experiments"]
        if self.claims is not None:
            return any(claim["figure"] == self.claims for claim in config["claims"])
        if self.config_key is not None:
            return self.config_key in config
        if self.analysis is not None:
            return bool(config["analyses"][self.analysis]["models"])
        return True


FIGURES: dict[str, Figure] = {
    "fig01_entropy_by_position": Figure("fig01_entropy_by_position", analysis="entropy_by_position"),
    "fig02_forking": Figure("fig02_forking", analysis="forking"),
    "fig03_annealing_schedule": Figure("fig03_annealing_schedule"),
    # Fig. 4 keeps the paper's k = 16 in its file name whatever k a profile evaluates: the title says the k drawn
    "fig04_pass_worst_at_16": Figure("rl_figure", experiment="main", panels=CurvePanels(
        "eval", ("pass@{k}", "worst@{k}"), "policy",
        "Pass@k / Worst@k at k = {k} on held-out problems during RL ({ci}; bottom: paired difference to tau 1.0)",
        paired_metrics=("pass@{k}",))),
    "fig05_larger_model": Figure("rl_figure", experiment="larger_model", panels=CurvePanels(
        "eval", ("pass@{k}",), "policy", "Pass@{k} on the larger policy ({ci})")),
    "fig06_entropy_dynamics": Figure("rl_figure", experiment="main", panels=CurvePanels(
        "train", ("entropy",), "policy", "Policy entropy on its own rollouts during RL ({ci})")),
    "fig07_rollout_scaling": Figure("rl_figure", experiment="rollout_scaling", panels=CurvePanels(
        "eval", ("pass@{k}",), "n", "Rollout scaling: Pass@{k} during RL ({ci}; bottom: paired difference to tau 1.0)",
        paired_metrics=("pass@{k}",))),
    "fig08_rollout_n_comparison": Figure("rl_figure", experiment="rollout_scaling"),
    "fig09_majority_scaling": Figure("fig09_majority_scaling", analysis="majority_scaling"),
    "fig10_algorithms": Figure("rl_figure", experiment="algorithms", panels=CurvePanels(
        "eval", ("pass@{k}", "worst@{k}"), "algorithm", "Other RL algorithms: Pass@{k} / Worst@{k} ({ci})")),
    "fig11_off_policy": Figure("rl_figure", experiment="off_policy"),
    "fig12_response_length": Figure("rl_figure", experiment="main", panels=CurvePanels(
        "train", ("response_length",), "policy", "Rollout response length during RL ({ci})")),
    # beyond the paper (overlays): RL figures of the experiments they add, claim forest plots, their own sections
    "beyond_off_policy_cost": Figure("rl_figure", experiment="beyond"),
    "d_max_sweep": Figure("rl_figure", experiment="d_max_sweep"),
    # the positive control (overlay positive_control.yaml): Fig. 4's curves on the strategy task
    "positive_control": Figure("rl_figure", experiment="positive_control", panels=CurvePanels(
        "eval", ("pass@1", "pass@{k}"), "policy",
        "Positive control (strategy task): Pass@1 / Pass@{k} during RL ({ci}; bottom: paired difference to tau 1.0)",
        paired_metrics=("pass@1", "pass@{k}"))),
    "claims_beyond": Figure("claims_figure", claims="beyond"),
    "claims_d_max": Figure("claims_figure", claims="d_max"),
    "claims_measured": Figure("claims_figure", claims="measured"),
    # the mechanism map (overlay mechanism_map.yaml): its claims, a panel per policy (rarity across, fragility down),
    # each comparison beside its pre-registered effect
    "claims_mechanism_map": Figure("claims_figure", claims="mechanism_map"),
    # the chain behind the cells (rl.breakdown: the positive control, the mechanism map): informative groups by
    # phase, the evaluation's samples by first mistake over training
    "rl_chain": Figure("rl_chain_figure", breakdown=True),
    "schedule_shapes": Figure("schedule_shapes_figure", config_key="schedule_shapes"),
    "inference_only": Figure("inference_only_figure", config_key="inference_only"),
}


def rl_figures() -> dict[str, str]:
    """RL figure -> the experiment it draws (rule rl_figure, python -m ead.plots.rl_figure)."""
    return {name: figure.experiment for name, figure in FIGURES.items() if figure.rule == "rl_figure"}


def claim_figures() -> list[str]:
    """The ``figure`` ids of claims drawn as forest plots (rule claims_figure: figures/claims_<id>)."""
    return [figure.claims for figure in FIGURES.values() if figure.rule == "claims_figure"]


def final_figures(config: dict) -> list[str]:
    """The figures ``rule all`` renders for ``config`` (layered and resolved), in registry order."""
    return [name for name, figure in FIGURES.items() if figure.is_target(config)]


def workflow_profile_refusal(argv: list[str], basedir: str | Path) -> str | None:
    """Why the ``--workflow-profile`` of a Snakemake command line is wrong, or None: Snakemake silently ignores one
    whose directory does not exist (a misspelt ``workflow/profiles/slurmm`` runs the paper profile's jobs locally, and
    drops ``profiles/default`` too), so the workflow refuses it, naming the profiles there are."""
    values = [arg.split("=", 1)[1] for arg in argv if arg.startswith("--workflow-profile=")]
    values += [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--workflow-profile"]
    basedir = Path(basedir)
    for value in values:
        if value == "none":
            continue
        if not any((root / value / "config.yaml").is_file() for root in (Path.cwd(), basedir)):
            known = sorted(str(path.parent.relative_to(basedir))
                           for pattern in ("profiles/*/config.yaml", "workflow/profiles/*/config.yaml")
                           for path in basedir.glob(pattern))
            return (f"--workflow-profile {value}: no such profile (no {value}/config.yaml), and Snakemake would "
                    f"ignore it silently; the workflow's profiles are {', '.join(known)} (or none)")
    return None


def report_requested(argv: list[str]) -> bool:
    """Whether a Snakemake command line builds the HTML report from finished outputs (``--report FILE``), rather than
    after the run it starts (``--report-after-run``)."""
    flags = [arg.split("=", 1)[0] for arg in argv if arg.startswith("--report")]
    return "--report" in flags and "--report-after-run" not in flags


def report_refusal(basedir: str | Path, output_root: str, targets: list[str], profile: str) -> str | None:
    """Why ``snakemake --report`` cannot build this profile's report, or None when it can: Snakemake stops at the
    first report file missing ("marked for report but does not exist") without saying that the report is one
    profile's finished run, and the one most newcomers made (smoke) is not the profile a plain command reports."""
    basedir = Path(basedir)
    missing = [target for target in targets if not (basedir / output_root / target).exists()]
    if not missing:
        return None
    made = []  # other profiles' runs here, with the --configfile that reports each
    if profile != "default" and (basedir / "figures").is_dir():
        made.append("the default profile's (no --configfile)")
    for run in sorted((basedir / "runs").glob("*/figures")):
        name = run.parent.name
        if name == profile:
            continue
        for config in (f"configs/{name}.yaml", f"configs/ablations/{name}.yaml"):
            if (basedir / config).exists():
                made.append(f"{name}'s (--configfile {config})")
                break
    where = "results/ and figures/" if output_root == "." else f"{output_root}/"
    return (f"snakemake --report: the {profile} profile's run is not finished in {where} ({len(missing)} of its "
            f"{len(targets)} final outputs missing, first {missing[0]}); the report shows one profile's finished run: "
            f"run that profile first (the same command with --cores all instead of --report)"
            + (f", or report a run made here: {'; '.join(made)}" if made else ""))


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
