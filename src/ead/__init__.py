"""Exploratory Annealed Decoding (EAD): schedules, samplers, data, rewards, metrics, RL backends, plots."""

__version__ = "0.1.0"
