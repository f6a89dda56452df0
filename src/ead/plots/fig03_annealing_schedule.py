"""Paper Figure 3: the EAD annealing schedule tau_t for several decay rates d, and (with config `measured_schedule`)
each policy's schedule sized from measurement next to the hand-sized one.

Reads the table written by `ead.analyses.schedule_table` and the measured schedules of
`ead.analyses.measured_schedule` (zero or more: a second panel when there are some).

Run:
    python -m ead.plots.fig03_annealing_schedule --table results/schedule/schedule_table.csv \
        --measured results/schedule/measured_tiny1m_sharp.csv \
        --png figures/fig03_annealing_schedule.png --pdf figures/fig03_annealing_schedule.pdf
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

from ead.plots.style import apply_style, run_table_figure
from ead.tables import MEASURED_SCHEDULE, SCHEDULE_TABLE


def plot(table, measured=None):
    apply_style()
    if measured is None or measured.empty:
        fig, ax = plt.subplots(figsize=(5.5, 3.4))
    else:
        fig, (ax, right) = plt.subplots(1, 2, figsize=(11.5, 3.6))
        draw_measured(right, measured)
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
    fig.tight_layout()
    return fig


def draw_measured(ax, measured):
    """Per policy, the measured schedule (solid) and the hand-sized one (dashed) at step 0, with the response-length
    quantile the measured d0 was sized to (dotted)."""
    policies = list(dict.fromkeys(measured["policy"]))
    palette = dict(zip(policies, sns.color_palette("deep", n_colors=len(policies))))
    hand = measured[measured["schedule"] == "hand_sized"]
    first = hand.iloc[0]
    rows = hand[hand["policy"] == policies[0]].sort_values("position")
    ax.plot(rows["position"], rows["tau"], color="0.3", lw=1.4, ls="--",
            label=f"hand-sized (c = {int(first['warmup'])}, d0 = {first['d0']:g})")
    for policy in policies:
        rows = measured[(measured["policy"] == policy) & (measured["schedule"] == "measured")].sort_values("position")
        top = rows.iloc[0]
        ax.plot(rows["position"], rows["tau"], color=palette[policy], lw=1.8,
                label=f"{policy}: c = {int(top['warmup'])}, d0 = {top['d0']:.1f}")
        ax.axvline(top["length_at_quantile"], color=palette[policy], lw=0.8, ls=":")
    ax.axhline(1.0, color="0.5", lw=0.8, ls=":")
    top = measured.iloc[0]
    ax.set(xlabel="response token position t", ylabel=r"temperature $\tau_t$",
           title=f"Sized from measurement (step 0; dotted: the {top['length_quantile']:g} quantile of response length)")
    ax.title.set_fontsize(8)
    ax.set_ylim(0, top["tau_max"] + 0.15)
    ax.legend(loc="upper right", fontsize=7)
    ax.text(0.01, 0.02, top["rule"], transform=ax.transAxes, fontsize=5.5, color="0.35", wrap=True)


def main(argv=None):
    run_table_figure(plot, __doc__.splitlines()[0], argv, table=SCHEDULE_TABLE, extra={"measured": MEASURED_SCHEDULE})


if __name__ == "__main__":
    main()
