"""Result-table rows as the README's generated result blocks print them (tools/main_finding.py,
tools/positive_control.py): rates in points, and a claims table's rows picked and ordered by claim id."""

from __future__ import annotations

import pandas as pd


def points(value: float) -> str:
    """A rate or a difference of rates in points, signed, one decimal."""
    return f"{100 * value:+.1f}"


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
