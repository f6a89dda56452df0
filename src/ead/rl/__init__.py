"""RL training: verl's losses composed (losses.py), the CPU backend (train.py), the GPU backend for the paper profile
(verl/), a cell's evaluation summary (cell_eval.py), aggregation of either backend's tables (aggregate.py) and the
claims (compare.py). Cells are resolved by :mod:`ead.settings.rl`."""
