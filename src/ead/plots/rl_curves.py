"""Shared drawing for the RL training figures (4-8, 10-12): metric-vs-step curves with CI bands, one line per sampler.

Every RL figure reads the aggregated curves (`ead.rl.aggregate`) and an experiment spec (the cells of one
`rl.experiments` entry); the figures of curves are :func:`facet_curves` over their registry panels
(`ead.plots.rl_figure`, their command line). A figure with paired panels also gets the paired-difference table
(`ead.rl.paired`) and draws, under the curves, each sampler minus a baseline with the CI the claims use
(:func:`draw_paired`).
"""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ead.plots.style import ENTROPY_MIN_SPAN, apply_style, bound_axis, integer_ticks, series_styles

SAMPLER_LABELS = {"tau0.6": r"$\tau$ = 0.6", "tau1.0": r"$\tau$ = 1.0", "tau1.2": r"$\tau$ = 1.2", "ead": "EAD",
                  "ead_tis": "EAD + TIS", "ead_tmin0.8": r"EAD ($\tau_{min}$ = 0.8)",
                  "ead_aggressive": "aggressive EAD", "ead_aggressive_tis": "aggressive EAD + TIS",
                  # the schedule shapes of configs/ablations/beyond_the_paper.yaml, named as the authors' ablation
                  "linear_tis": "linear + TIS", "two_stage_tis": "two-stage + TIS",
                  "ead_mean_tis": "EAD's mean tau (mean-matched) + TIS",
                  # the authors' own definitions, growing with d_s (ead.schedule EADLinear, EADTwoStage, EADMeanMatched)
                  "ead_linear_tis": r"linear to $\tau_{min}$ at $D$ + TIS",
                  "ead_two_stage_tis": r"two-stage, switch at $D/2$ + TIS",
                  "ead_mean_matched_tis": "mean-matched (negexp's mean over [0, D]) + TIS",
                  # the off-policy treatments (docs/revisions.md)
                  "ead_seq_tis": "EAD + sequence TIS", "ead_annealed": r"EAD trained at $\tau_t$ (no weight)"}
METRIC_LABELS = {"entropy": r"entropy at $\tau$ = 1 (nats/token)", "response_length": "response length (tokens)",
                 "pg_clipfrac": "clip fraction", "grad_norm": "gradient norm", "reward_mean": "train reward",
                 "greedy_accuracy": "greedy accuracy"}
#: Metrics that are shares (of problems, tokens or sequences): their axes stay within [0, 1]. Pass@k, Worst@k and verl's
#: best@k / worst@k are shares too (:func:`metric_bounds`).
RATE_METRICS = {"pg_clipfrac", "greedy_accuracy", "tis_capped_fraction", "loss_token_fraction", "tis_ess_fraction",
                "sequence_ess_fraction", "tis_capped_sequence_fraction"}
RATE_KINDS = ("pass", "worst", "verl_best", "verl_worst")
#: Metrics that cannot be negative (norms, lengths, entropies, importance weights, timings): their axes start at 0 or
#: above. The mean reward and the log-ratio can be negative; the KL estimate per token can too.
NON_NEGATIVE_METRICS = {"grad_norm", "grad_norm_max", "entropy", "response_length", "tis_weight_mean",
                        "tis_weight_max", "rollout_s", "grade_s", "update_s", "wall_time_s"}
#: Smallest span of a metric's axis, where seed noise would otherwise fill the panel.
MIN_SPANS = {"entropy": ENTROPY_MIN_SPAN}


def sampler_label(name: str) -> str:
    return SAMPLER_LABELS.get(name, name)


def metric_label(metric: str) -> str:
    if metric in METRIC_LABELS:
        return METRIC_LABELS[metric]
    kind, _, k = metric.partition("@")
    return f"{kind.capitalize()}@{k}"


def metric_bounds(metric: str) -> tuple[float | None, float | None]:
    """(floor, ceiling) of the values ``metric`` can take; None where it has no bound."""
    if metric in RATE_METRICS or metric.partition("@")[0] in RATE_KINDS:
        return 0.0, 1.0
    if metric in NON_NEGATIVE_METRICS:
        return 0.0, None
    return None, None


def bound_metric_axis(ax, metric: str) -> None:
    """The y axis of a panel of ``metric`` within the values it can take, spanning at least its MIN_SPANS entry."""
    floor, ceiling = metric_bounds(metric)
    bound_axis(ax, "y", floor=floor, ceiling=ceiling, min_span=MIN_SPANS.get(metric))


def evaluated_k(curves: pd.DataFrame, k: int) -> int:
    """``k`` after checking the curves hold Pass@k: a figure names the k of the data it draws (a figure file keeps the
    paper's k in its name, e.g. fig04_pass_worst_at_16, whatever k a profile evaluates)."""
    ks = sorted({int(metric.partition("@")[2]) for metric in curves["metric"].unique() if metric.startswith("pass@")})
    if k not in ks:
        raise ValueError(f"the curves hold Pass@k for k in {ks}, not k = {k}: draw one of those (--k)")
    return k


def sampler_colors(samplers: list[str]) -> dict[str, tuple]:
    """Fixed-tau baselines in greys/blues, EAD variants in warm colours, stable across figures; with more than 8
    samplers (the beyond-the-paper comparisons) one qualitative palette, since shades of two hues stop separating."""
    if len(samplers) > 8:
        return dict(zip(samplers, sns.color_palette("tab20", n_colors=len(samplers))))
    fixed = [s for s in samplers if s.startswith("tau")]
    other = [s for s in samplers if not s.startswith("tau")]
    colors = dict(zip(fixed, sns.color_palette("crest", n_colors=max(len(fixed), 1))))
    colors.update(zip(other, sns.color_palette("flare", n_colors=max(len(other), 1))))
    return colors


def select(curves: pd.DataFrame, experiment: dict, metric: str, **fixed) -> pd.DataFrame:
    """Rows of one metric for the experiment's cells (policies, algorithms, samplers, n), narrowed by ``fixed``.

    Evaluation curves are drawn at the declared evaluation temperature (every cell alike) unless ``fixed`` asks for
    ``evaluated_with="own_sampler"`` (each cell's last-step evaluation with its own sampler).
    """
    if "evaluated_with" in curves.columns:
        fixed = {"evaluated_with": "eval_tau", **fixed}
    rows = curves[(curves["metric"] == metric) & curves["policy"].isin(experiment["policies"])
                  & curves["algorithm"].isin(experiment["algorithms"]) & curves["sampler"].isin(experiment["samplers"])
                  & curves["n"].isin(experiment["n"])]
    for column, value in fixed.items():
        rows = rows[rows[column] == value]
    if rows.empty:
        raise ValueError(f"no rows for metric {metric!r} and cells {experiment} {fixed}; was the grid aggregated?")
    # the experiment is a grid, and every cell is evaluated: a cell without evaluation rows means a table that lost
    # some, not a smaller figure (a training metric may exist for some samplers only: TIS statistics)
    if "evaluated_with" not in curves.columns:
        return rows
    wanted = [[fixed[column]] if column in fixed else list(experiment[key])
              for column, key in (("policy", "policies"), ("algorithm", "algorithms"), ("sampler", "samplers"),
                                  ("n", "n"))]
    present = set(zip(rows["policy"], rows["algorithm"], rows["sampler"], rows["n"]))
    missing = [cell for cell in itertools.product(*wanted) if cell not in present]
    if missing:
        shown = ", ".join("/".join(map(str, cell)) for cell in missing[:4]) + (" ..." if len(missing) > 4 else "")
        raise ValueError(f"no rows for metric {metric!r} {fixed} of {len(missing)} of the experiment's cells "
                         f"(policy/algorithm/sampler/n: {shown}): the table lacks part of the grid; delete it and "
                         "rerun snakemake to rebuild it")
    return rows


def ci_wording(rows: pd.DataFrame) -> str:
    """What a title says about the bands of the ``rows`` drawn (curves, paired differences): a 95% CI only where a
    band is drawn (a one-seed training metric has no spread: its band has no width)."""
    seeds = int(rows["num_seeds"].max()) if "num_seeds" in rows and len(rows) else 0
    banded = has_band(rows)
    if seeds == 1:
        return "one seed, 95% CI over problems" if banded else "one seed: no CI band"
    return "mean of seeds, 95% CI" if banded else "mean of seeds"


def draw_curves(ax, rows: pd.DataFrame, samplers: list[str]) -> None:
    """One line per sampler (mean over seeds) with its 95% CI band; each sampler its own line style and marker (equal
    curves stay visible), whole-number step ticks, and a y axis within the values the metric can take
    (:func:`bound_metric_axis`)."""
    colors, styles = sampler_colors(samplers), series_styles(samplers)
    for sampler in samplers:
        line = rows[rows["sampler"] == sampler].sort_values("step")
        if line.empty:
            continue
        # not clipped: a curve on the axis' floor (a rate of 0) is drawn whole, not half hidden under the frame
        ax.plot(line["step"], line["value"], ms=3.5, lw=1.6, color=colors[sampler], label=sampler_label(sampler),
                mfc="none", clip_on=False, **styles[sampler])
        ax.fill_between(line["step"], line["ci_low"], line["ci_high"], color=colors[sampler], alpha=0.18, lw=0)
    integer_ticks(ax.xaxis)
    metrics = rows["metric"].unique()
    if len(metrics) == 1:  # every caller draws one metric per panel (select)
        bound_metric_axis(ax, metrics[0])


def has_band(rows: pd.DataFrame) -> bool:
    """Whether any drawn CI band has width (a one-seed training metric, or identical values, give none)."""
    return bool(((rows["ci_high"] - rows["ci_low"]) > 0).any())


def select_paired(paired: pd.DataFrame, experiment: dict, metric: str, baseline: str, **fixed) -> pd.DataFrame:
    """Rows of one metric's paired differences against ``baseline`` for the experiment's cells, narrowed by ``fixed``
    (at the declared evaluation temperature unless ``fixed`` says otherwise)."""
    fixed = {"evaluated_with": "eval_tau", **fixed}
    rows = paired[(paired["metric"] == metric) & (paired["baseline"] == baseline)
                  & paired["policy"].isin(experiment["policies"]) & paired["algorithm"].isin(experiment["algorithms"])
                  & paired["sampler"].isin(experiment["samplers"]) & paired["n"].isin(experiment["n"])]
    for column, value in fixed.items():
        rows = rows[rows[column] == value]
    if rows.empty:
        raise ValueError(f"no paired differences of {metric!r} against {baseline!r} for cells {experiment} {fixed}; "
                         f"is {baseline!r} in paired_baselines and in the experiment?")
    return rows


def draw_paired(ax, rows: pd.DataFrame, samplers: list[str], colors: dict | None = None,
                linestyles: dict | None = None) -> None:
    """One line per sampler: its paired difference to the baseline over training, with the 95% CI band, and 0."""
    colors = colors or sampler_colors(samplers)
    styles = series_styles(samplers)
    for sampler, linestyle in (linestyles or {}).items():
        if sampler in styles:
            styles[sampler]["ls"] = linestyle
    ax.axhline(0.0, color="0.6", lw=0.8)  # thin solid grey: callers may give the samplers dashed styles
    for sampler in samplers:
        line = rows[rows["sampler"] == sampler].sort_values("step")
        if line.empty:
            continue
        ax.plot(line["step"], line["effect"], ms=3.5, lw=1.6, color=colors[sampler], label=sampler_label(sampler),
                mfc="none", **styles[sampler])
        ax.fill_between(line["step"], line["ci_low"], line["ci_high"], color=colors[sampler], alpha=0.18, lw=0)
    integer_ticks(ax.xaxis)


def facet_curves(curves: pd.DataFrame, experiment: dict, metrics: list[str], facet: str, facet_values: list,
                 title: str, *, paired: pd.DataFrame | None = None, paired_metrics: list[str] = (),
                 baseline: str = "tau1.0", **fixed):
    """Grid of panels: one row per metric, one column per value of ``facet``; lines are the samplers. With ``paired``
    (the paired-curves table), one more row per ``paired_metrics`` entry: each sampler minus ``baseline``, paired.
    ``{ci}`` in ``title`` becomes what the drawn bands are, curves and paired differences (:func:`ci_wording`); a
    paired row's label names a 95% CI only where that row draws a band."""
    apply_style()
    rows_total = len(metrics) + len(paired_metrics)
    fig, axes = plt.subplots(rows_total, len(facet_values), figsize=(3.6 * len(facet_values), 2.8 * rows_total),
                             squeeze=False, sharex=True)
    drawn, drawn_paired = [], []
    for row, metric in enumerate([*metrics, *paired_metrics]):
        is_paired = row >= len(metrics)
        if is_paired:
            differences = [select_paired(paired, experiment, metric, baseline, **{facet: value}, **fixed)
                           for value in facet_values]
            drawn_paired += differences
            band = "95% CI" if has_band(pd.concat(differences)) else "no CI band"
        for column, value in enumerate(facet_values):
            ax = axes[row][column]
            if is_paired:
                draw_paired(ax, differences[column], experiment["samplers"])
                ax.set_ylabel(f"{metric_label(metric)} $-$ {sampler_label(baseline)}\n(paired, {band})"
                              if column == 0 else "")
            else:
                drawn.append(select(curves, experiment, metric, **{facet: value}, **fixed))
                draw_curves(ax, drawn[-1], experiment["samplers"])
                ax.set_ylabel(metric_label(metric) if column == 0 else "")
            if row == 0:
                ax.set_title(f"{facet} = {value}" if facet == "n" else str(value))
            if row == rows_total - 1:
                ax.set_xlabel("RL step")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(labels), 6),
               fontsize=8)
    fig.suptitle(title.replace("{ci}", ci_wording(pd.concat([*drawn, *drawn_paired]))), y=1.07, fontsize=10)
    fig.tight_layout()
    return fig

