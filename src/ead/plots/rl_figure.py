"""The job of rule rl_figure: one RL figure of the registry (ead.workflow.FIGURES) from the aggregated curves
(ead.rl.aggregate) and the paired differences (ead.rl.paired).

A figure of curves over training steps (Figs. 4-7, 10 and 12) is a registry entry whose ``panels``
(:class:`ead.workflow.CurvePanels`) say what differs between them, all drawn by :func:`draw_panels`; a figure of its own
kind (Fig. 8's bars, Fig. 11's mixed panels, the overlays' off-policy cost and d_max sweep) by the ``plot`` of its
module, named in :data:`OWN_PLOTS`.

Run:
    python -m ead.plots.rl_figure --figure fig04_pass_worst_at_16 --eval-curves results/rl/eval_curves.csv \
        --train-curves results/rl/train_curves.csv --paired-curves results/rl/paired_curves.csv \
        --experiment '<rl.experiments.main as JSON>' --k 16 \
        --png figures/fig04_pass_worst_at_16.png --pdf figures/fig04_pass_worst_at_16.pdf
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from ead.io import setup_logging
from ead.plots import beyond_off_policy_cost, d_max_sweep, fig08_rollout_n_comparison, fig11_off_policy
from ead.plots.rl_curves import evaluated_k, facet_curves
from ead.plots.style import save_figure
from ead.tables import EVAL_CURVES, PAIRED_CURVES, TRAIN_CURVES
from ead.workflow import FIGURES, CurvePanels, rl_figures

#: facet -> the experiment's list of its values (one column each)
FACET_VALUES = {"policy": "policies", "algorithm": "algorithms", "n": "n"}


def facet_values(experiment: dict, facet: str) -> list:
    """The columns of a figure faceted by ``facet``: the experiment's values, in its order (rollout numbers sorted)."""
    values = experiment[FACET_VALUES[facet]]
    return sorted(values) if facet == "n" else values


def draw_panels(panels: CurvePanels, eval_curves: pd.DataFrame, train_curves: pd.DataFrame, experiment: dict, k: int,
                paired_curves: pd.DataFrame | None = None):
    """The figure ``panels`` describe, from the curves of ``experiment``'s cells at the reported ``k``."""
    if panels.curves == "eval":
        k = evaluated_k(eval_curves, k)  # the title names the k of the data drawn
    curves = eval_curves if panels.curves == "eval" else train_curves
    with_k = [metric.replace("{k}", str(k)) for metric in panels.metrics]
    paired_metrics = [metric.replace("{k}", str(k)) for metric in panels.paired_metrics]
    return facet_curves(curves, experiment, with_k, panels.facet, facet_values(experiment, panels.facet),
                        panels.title.replace("{k}", str(k)), paired=paired_curves, paired_metrics=paired_metrics,
                        baseline=panels.baseline)


@dataclass(frozen=True)
class OwnPlot:
    """An RL figure of its own kind: its plot function, called ``plot(eval_curves, train_curves, experiment, k)``,
    and whether it draws paired differences too (then called with ``paired_curves=``)."""

    plot: Callable
    reads_paired_curves: bool = False


#: The RL figures of the registry without ``panels`` -> how each is drawn.
OWN_PLOTS = {
    "fig08_rollout_n_comparison": OwnPlot(fig08_rollout_n_comparison.plot),
    "fig11_off_policy": OwnPlot(fig11_off_policy.plot),
    "beyond_off_policy_cost": OwnPlot(beyond_off_policy_cost.plot),
    "d_max_sweep": OwnPlot(d_max_sweep.plot, reads_paired_curves=True),
}


def own_plot(name: str) -> OwnPlot:
    """The :data:`OWN_PLOTS` entry of the RL figure ``name``, which has no registry panels; refused naming both places
    when it has neither."""
    if name not in OWN_PLOTS:
        raise ValueError(f"RL figure {name!r} has no panels in ead.workflow.FIGURES and no entry in "
                         f"ead.plots.rl_figure.OWN_PLOTS: give it one or the other")
    return OWN_PLOTS[name]


def figure_plot(name: str):
    """How the RL figure ``name`` is drawn: its registry panels, or its entry in :data:`OWN_PLOTS`."""
    panels = FIGURES[name].panels
    if panels is not None:
        return lambda *args, **kwargs: draw_panels(panels, *args, **kwargs)
    return own_plot(name).plot


def reads_paired_curves(name: str) -> bool:
    """Whether the RL figure ``name`` draws paired differences (ead.rl.paired)."""
    panels = FIGURES[name].panels
    if panels is not None:
        return bool(panels.paired_metrics)
    return own_plot(name).reads_paired_curves


def plot_figure(name: str, eval_curves: pd.DataFrame, train_curves: pd.DataFrame, experiment: dict, k: int,
                paired_curves: pd.DataFrame | None = None):
    """The RL figure ``name`` of the registry (a matplotlib figure), drawn from the curves of ``experiment``'s cells."""
    extra = {"paired_curves": paired_curves} if reads_paired_curves(name) else {}
    return figure_plot(name)(eval_curves, train_curves, experiment, k, **extra)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figure", required=True, choices=sorted(rl_figures()), help="the registry's figure name")
    parser.add_argument("--eval-curves", required=True)
    parser.add_argument("--train-curves", required=True)
    parser.add_argument("--paired-curves", required=True, help="paired differences (ead.rl.paired)")
    parser.add_argument("--experiment", required=True, help="the rl.experiments entry (JSON)")
    parser.add_argument("--k", type=int, required=True, help="the k of Pass@k / Worst@k to plot")
    parser.add_argument("--png", required=True)
    parser.add_argument("--pdf", required=True)
    args = parser.parse_args(argv)
    log = setup_logging(args.figure)
    paired = PAIRED_CURVES.read(args.paired_curves) if reads_paired_curves(args.figure) else None
    try:
        fig = plot_figure(args.figure, EVAL_CURVES.read(args.eval_curves), TRAIN_CURVES.read(args.train_curves),
                          json.loads(args.experiment), args.k, paired)
    except ValueError as error:  # e.g. a cell the experiment names is not in the curves: say which files were read
        files = ", ".join(path for path in (args.eval_curves, args.train_curves,
                                            args.paired_curves if paired is not None else None) if path)
        raise SystemExit(f"{args.figure} from {files}: {error}") from None
    save_figure(fig, args.png, args.pdf)
    log.info("wrote %s and %s", args.png, args.pdf)


if __name__ == "__main__":
    main()
