"""The README's first picture: Fig. 3 (the EAD schedule at the default profile's settings), committed so that a reader
sees it on a fresh clone and on the repository's page before running anything.

It draws what rule ``fig03_annealing_schedule`` draws, with the same code (``ead.analyses.schedule_table`` from the
default config's ``ead`` and ``schedule_figure`` sections, then ``ead.plots.fig03_annealing_schedule.plot``), into
``docs/img/annealing_schedule.png``. The PNG records the sha256 of the table it was drawn from in its metadata;
``tests/repository/test_readme_picture.py`` recomputes the table from the current code and config and compares, so a
change to the schedule or its config that leaves the picture stale fails until this is rerun.

Run:
    python tools/readme_picture.py
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "img" / "annealing_schedule.png"
#: The PNG text key holding the drawn table's digest.
DIGEST_KEY = "schedule_table_sha256"


def current_table():
    """The schedule table the default profile's rule schedule_table writes, from the current code and config."""
    from ead.analyses.schedule_table import schedule_table
    from ead.settings import load_workflow_config
    from ead.settings.arguments import schedule_table_settings

    return schedule_table(**schedule_table_settings(load_workflow_config(ROOT, [], {}, ["snakemake"]).config))


def table_digest(table) -> str:
    """The sha256 of the table as CSV (floats at full precision)."""
    return hashlib.sha256(table.to_csv(index=False).encode()).hexdigest()


def main(argv=None):
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    from ead.io import atomic_path
    from ead.plots.fig03_annealing_schedule import plot

    table = current_table()
    figure = plot(table)
    with atomic_path(PICTURE) as path:
        figure.savefig(path, dpi=110, format="png", metadata={DIGEST_KEY: table_digest(table), "Software": None})
    print(f"wrote {PICTURE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
