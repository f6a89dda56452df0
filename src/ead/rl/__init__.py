"""RL training: the grid (grid.py), verl's losses composed (losses.py), the CPU backend (train.py), the GPU
backend for the paper profile (verl/), aggregation of either backend's tables (aggregate.py)."""
