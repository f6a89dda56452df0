"""Paper Figure 3: the EAD annealing schedule tau_t for several decay rates d.

Reads the table written by `ead.analyses.schedule_table`.

Run:
    python -m ead.plots.fig03_annealing_schedule --table results/schedule/schedule_table.csv \
        --png figures/fig03_annealing_schedule.png --pdf figures/fig03_annealing_schedule.pdf
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from ead.plots.style import apply_style, run_table_figure
from ead.tables import SCHEDULE_TABLE


def plot(table):
    apply_style()
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    decays = sorted(table["decay_d"].unique())
    palette = sns.color_palette("rocket_r", n_colors=len(decays) + 1)[1:]
    for color, d in zip(palette, decays):
        rows = table[table["decay_d"] == d]
        ax.plot(rows["position"], rows["tau"], color=color, lw=1.8, label=f"d = {d:g}")
    first = table.iloc[0]
    ax.axhline(1.0, color="0.5", lw=0.8, ls=":")
    ax.axvline(first["warmup"], color="0.5", lw=0.8, ls="--")
    ax.annotate(f"c = {int(first['warmup'])}", xy=(first["warmup"], first["tau_min"]), xytext=(4, 4),
                textcoords="offset points", color="0.4", fontsize=8)
    scale = f", decay scale {first['decay_scale']:g}" if first["decay_scale"] != 1 else ""
    ax.set(xlabel="response token position t", ylabel=r"temperature $\tau_t$",
           title=rf"EAD schedule ($\tau_{{max}}$={first['tau_max']:g}, $\tau_{{min}}$={first['tau_min']:g}{scale})")
    ax.set_ylim(0, first["tau_max"] + 0.15)
    ax.legend(loc="upper right", fontsize=8)
    return fig


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv, table=SCHEDULE_TABLE)


if __name__ == "__main__":
    main()
