"""RL training: the grid (grid.py), verl's losses composed (losses.py), the CPU backend (train.py), aggregation."""
