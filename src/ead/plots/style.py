"""Shared figure style and saving: one look for every figure, PNG and PDF written atomically."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # headless: figures are files, never windows

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from ead.io import atomic_path, setup_logging  # noqa: E402


def apply_style() -> None:
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    plt.rcParams.update({"figure.dpi": 150, "savefig.bbox": "tight", "legend.frameon": False})


def panel_per_model(table, draw_panel, **options):
    """A row of panels, one per model (``model_name``, in table order), each drawn by
    ``draw_panel(ax, rows_of_that_model, **options)``."""
    models = list(dict.fromkeys(table["model_name"]))
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 3.6), squeeze=False)
    for ax, model in zip(axes[0], models):
        draw_panel(ax, table[table["model_name"] == model], **options)
    return fig


#: Line styles and markers given to the series of a panel in turn, so that two series with equal values (one line
#: drawn exactly over the other) both stay visible: the dashes of one show through the other, and the markers differ.
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 2)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")


def series_styles(names) -> dict:
    """{name: {"ls": ..., "marker": ...}}: a distinct (line style, marker) pair per series, in order."""
    return {name: {"ls": LINESTYLES[index % len(LINESTYLES)], "marker": MARKERS[index % len(MARKERS)]}
            for index, name in enumerate(names)}


def integer_ticks(axis) -> None:
    """Whole-number ticks on an axis of counts (RL steps, N samples): no 0.5 or 1.25 steps."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


#: Smallest span of an entropy axis, in nats: differences of a few hundredths of a nat are not stretched over the
#: whole panel, where they would look like large effects.
ENTROPY_MIN_SPAN = 0.5


def bound_axis(ax, axis: str = "y", *, floor: float | None = None, ceiling: float | None = None,
               min_span: float | None = None) -> None:
    """Keep ``axis`` (``"x"`` or ``"y"``) to the values its quantity can take and to an honest scale, after drawing.

    ``floor`` / ``ceiling``: the quantity's bounds (0 for a norm or an entropy, 0 and 1 for a rate), so an all-zero
    curve is not drawn on an axis reaching below 0. ``min_span``: the axis spans at least this much, centred on the
    drawn data. A window that crosses a bound is moved inside it, keeping its span where the bounds allow.
    """
    low, high = getattr(ax, f"get_{axis}lim")()
    if min_span is not None and high - low < min_span:
        middle = (low + high) / 2
        low, high = middle - min_span / 2, middle + min_span / 2
    if floor is not None and low < floor:
        low, high = floor, high + (floor - low)
    if ceiling is not None and high > ceiling:
        low, high = low - (high - ceiling), ceiling
    if floor is not None:
        low = max(low, floor)
    getattr(ax, f"set_{axis}lim")(low, high)


def set_percent_ylim(ax, ci_high) -> None:
    """y axis in percent up to 110% of the highest CI bound (at least 5), starting a little below 0 so a line at 0
    stays visible."""
    top = max(5.0, 110 * ci_high.max())
    ax.set_ylim(-0.02 * top, top)


def save_figure(fig, png: str, pdf: str) -> None:
    """Save ``fig`` as PNG and PDF (atomic writes), then close it. Both files record the profile of the workflow run
    that drew them (``EAD_PROFILE``, :func:`ead.tables.job_profile`): a PNG text chunk ``ead-profile``, the PDF's
    Keywords ``ead-profile=<name>``."""
    from ead.tables import job_profile

    profile = job_profile()
    metadata = {
        "png": {"ead-profile": profile} if profile else {},
        "pdf": {"Keywords": f"ead-profile={profile}"} if profile else {},
    }
    for path, fmt in ((png, "png"), (pdf, "pdf")):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, metadata=metadata[fmt])
    plt.close(fig)


def run_table_figure(plot, description: str, argv=None, *, table, extra=None) -> None:
    """Command line of a figure drawn from result tables: ``--tables`` in (concatenated), ``--png`` and ``--pdf`` out.

    ``table`` is the tables' declaration in the results contract (:mod:`ead.tables`); each file is validated on read.
    ``extra`` maps more options to their declarations (e.g. ``{"role_tables": ENTROPY_BY_ROLE}``: ``--role-tables``,
    required, with zero or more files); ``plot`` receives each as a keyword argument, their tables concatenated (None
    for no file).
    """
    import argparse

    import pandas as pd

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tables", "--table", nargs="+", required=True,
                        help="result tables of the same kind (e.g. one per model), drawn together")
    for option, declaration in (extra or {}).items():
        parser.add_argument(f"--{option.replace('_', '-')}", nargs="*", required=True,
                            help=f"{declaration.name} tables (zero or more: the workflow always states them)")
    parser.add_argument("--png", required=True)
    parser.add_argument("--pdf", required=True)
    args = parser.parse_args(argv)
    log = figure_logger(plot)
    options = {option: pd.concat([declaration.read(path) for path in getattr(args, option)], ignore_index=True)
               if getattr(args, option) else None for option, declaration in (extra or {}).items()}
    save_figure(plot(pd.concat([table.read(path) for path in args.tables], ignore_index=True), **options), args.png,
                args.pdf)
    log.info("wrote %s and %s", args.png, args.pdf)


def figure_logger(plot):
    """The logger of a figure module, named after the module even when it runs as ``python -m`` (``__main__``)."""
    import sys

    spec = getattr(sys.modules.get(plot.__module__), "__spec__", None)
    return setup_logging(spec.name.rsplit(".", 1)[-1] if spec else plot.__module__)
