"""Claims and their verdicts, computed, never typed. Every verdict comes from one decision rule,
:func:`ead.verdicts.decide` (supported, contradicted, inconclusive, negligible; re-exported here with ``combine``).
The jobs that compute the claims (``python -m ead.claims.<job>``):

* :mod:`ead.claims.analyses`: the claims F1-F3 on the sampling analyses' samples (Figs. 1, 2, 9);
* :mod:`ead.claims.rl`: the paper's RL claims as paired comparisons of the grid's cells: the claims table;
* :mod:`ead.claims.rl_learns`: premise G4, "RL learns here", with its own verdict rule (thresholds on the mean and
  the CI's lower bound).

The claims read the analyses' and the grid's tables and helpers; they sit a layer above them (src/ead/__init__.py).
"""

from __future__ import annotations

from ead.verdicts import VERDICTS, Verdict, combine, decide

__all__ = ["VERDICTS", "Verdict", "combine", "comparison_label", "decide"]


def comparison_label(row) -> str:
    """"sampler - baseline" of a claims-table row (:data:`ead.tables.CLAIMS`), each side prefixed by its algorithm
    when the two cells' algorithms differ (a ``baseline_algorithm`` claim); a ``best_of`` row's baseline names its
    candidates and the one chosen ("best of {tau0.6, tau1.0} = tau1.0")."""
    baseline = row.baseline
    best_of = getattr(row, "best_of", None)
    if isinstance(best_of, str) and best_of:
        baseline = f"best of {{{', '.join(best_of.split())}}} = {row.baseline}"
    baseline_algorithm = getattr(row, "baseline_algorithm", None)
    if isinstance(baseline_algorithm, str) and baseline_algorithm and baseline_algorithm != row.algorithm:
        return f"{row.algorithm}/{row.sampler} - {baseline_algorithm}/{baseline}"
    return f"{row.sampler} - {baseline}"
