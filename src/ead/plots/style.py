"""Shared figure style and saving: one look for every figure, PNG and PDF written atomically."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # headless: figures are files, never windows

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from ead.io import atomic_path  # noqa: E402

def apply_style() -> None:
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    plt.rcParams.update({"figure.dpi": 150, "savefig.bbox": "tight", "legend.frameon": False})


def save_figure(fig, png: str, pdf: str) -> None:
    """Save ``fig`` as PNG and PDF (atomic writes), then close it."""
    for path, fmt in ((png, "png"), (pdf, "pdf")):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt)
    plt.close(fig)
