"""Figure jobs: one module per paper figure, each reading result tables only (never recomputing)."""
