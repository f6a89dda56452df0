"""Result-table rows as the generated result blocks of docs/findings.md print them (tools/main_finding.py,
tools/positive_control.py): rates in points, a claims table's rows picked and ordered by claim id, and the run's
fingerprint quoted beside them."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ead.fingerprint import run_digest
from ead.tables import FINGERPRINT


def points(value: float) -> str:
    """A rate or a difference of rates in points, signed, one decimal."""
    return f"{100 * value:+.1f}"


def block_parser(description: str, *, results: str, report: str, block: str) -> argparse.ArgumentParser:
    """The arguments every result-block generator takes: the run's ``--results`` directory, the commit and date it
    was made at (and ``--claims-commit``, if its claims were recomputed later), the report ``--out`` and the
    ``--doc`` / ``--block`` it is published into (tools/doc_blocks.py)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--results", type=Path, required=True, help=f"{results} results/ directory")
    parser.add_argument("--commit", required=True, help="the commit the run was made at")
    parser.add_argument("--date", required=True, help="the run's date (YYYY-MM-DD)")
    parser.add_argument("--claims-commit", help="the commit its claims were recomputed at from the same cells, if "
                                                "they were (e.g. after a change to the decision rule)")
    parser.add_argument("--out", type=Path, required=True, help=f"the report (benchmarks/results/{report})")
    parser.add_argument("--doc", type=Path, help="Markdown file holding the block")
    parser.add_argument("--block", default=block, help="the block's name in --doc")
    return parser


def run_origin(commit: str, date: str, claims_commit: str | None = None) -> str:
    """Where a block's run came from: its fresh clone's commit and date, and the later commit its claims were
    recomputed at from the same cells, if they were (a change to the decision rule needs no new cell)."""
    again = "" if not claims_commit else f", its claims recomputed from the same cells at commit `{claims_commit}`"
    return f"a fresh clone at commit `{commit}`, run {date}{again}"


def size(value: float) -> str:
    """An unsigned size (an MDE, a smallest effect) in points, one decimal; empty where there is none."""
    return "" if pd.isna(value) else f"{100 * value:.1f}"


def interval(row) -> str:
    """A row's ``effect [ci_low, ci_high]`` in points."""
    return f"{points(row.effect)} [{points(row.ci_low)}, {points(row.ci_high)}]"


def claims_in_order(claims: pd.DataFrame, ids: tuple[str, ...], what: str) -> pd.DataFrame:
    """The rows of ``claims`` whose claim is in ``ids``, in ``ids``' order (a claim's rows by policy); a missing id is
    an error naming ``what`` they are."""
    rows = claims[claims["claim"].isin(ids)].copy()
    missing = sorted(set(ids) - set(rows["claim"]))
    if missing:
        raise ValueError(f"claims table lacks {what} rows {missing}")
    rows["order"] = rows["claim"].map(ids.index)
    return rows.sort_values(["order", "policy"])


def fingerprint_sentence(results: Path) -> str:
    """The run's fingerprint as a block quotes it: its digest (``ead.fingerprint.run_digest`` of
    ``results/fingerprint.csv``), its CPU level and how many files it covers; another run with the same digest holds
    the same numbers, bit for bit (docs/operations.md, "Reproducibility: what is bitwise, what is not")."""
    fingerprint = FINGERPRINT.read(Path(results) / "fingerprint.csv")
    levels = sorted(set(fingerprint["cpu_level"]))
    return (f"Fingerprint `{run_digest(fingerprint)}` (CPU level {', '.join(levels)}; `results/fingerprint.csv`, "
            f"{len(fingerprint)} files: a run with this digest holds these numbers bit for bit).")
