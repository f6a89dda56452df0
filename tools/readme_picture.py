"""The README's first picture: Fig. 3 (the EAD schedule at the default profile's settings), committed so that a reader
sees it on a fresh clone and on the repository's page before running anything.

It draws what rule ``fig03_annealing_schedule`` draws, with the same code (``ead.analyses.schedule_table`` from the
default config's ``ead`` and ``schedule_figure`` sections, then ``ead.plots.fig03_annealing_schedule.plot``), into
``docs/img/annealing_schedule.png``. The PNG records the sha256 of the table it was drawn from in its metadata;
``tests/repository/test_readme_picture.py`` recomputes the table from the current code and config and compares, so a
change to the schedule or its config that leaves the picture stale fails until this is rerun. The table is computed
as the rule's job computes it, at the default profile's declared CPU level (``numerics.cpu_level``, ead.numerics), in
a child process: numpy's own SIMD ``exp`` rounds the last bit differently on an AVX-512 CPU, so an unpinned process
there would see another table.

Run:
    python tools/readme_picture.py
"""

from __future__ import annotations

import argparse
import hashlib
import io
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PICTURE = ROOT / "docs" / "img" / "annealing_schedule.png"
#: The PNG text key holding the drawn table's digest.
DIGEST_KEY = "schedule_table_sha256"


def _table_here():
    """The schedule table computed in this process, at whatever level its environment pins."""
    from ead.analyses.schedule_table import schedule_table
    from ead.settings.arguments import schedule_table_settings

    return schedule_table(**schedule_table_settings(_default_config()))


def _default_config() -> dict:
    from ead.settings import load_workflow_config

    return load_workflow_config(ROOT, [], {}, ["snakemake"]).config


def current_table():
    """The schedule table the default profile's rule schedule_table writes, from the current code and config, computed
    in a child process at the config's declared CPU level (module docstring)."""
    import pandas as pd

    from ead.numerics import child_environment

    level = _default_config()["numerics"]["cpu_level"]
    child = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--print-table"], capture_output=True,
                           text=True, env=child_environment(level))
    if child.returncode != 0:
        raise RuntimeError(f"the schedule table's child process failed:\n{child.stderr[-2000:]}")
    return pd.read_csv(io.StringIO(child.stdout))  # pandas parses floats exactly (round trip) by default


def table_digest(table) -> str:
    """The sha256 of the table as CSV (floats at full precision)."""
    return hashlib.sha256(table.to_csv(index=False).encode()).hexdigest()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print-table", action="store_true", help=argparse.SUPPRESS)  # current_table()'s child
    if parser.parse_args(argv).print_table:
        print(_table_here().to_csv(index=False), end="")
        return
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
