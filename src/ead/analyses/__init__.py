"""Compute jobs for the paper's analyses; each module is one job run as `python -m ead.analyses.<name>`."""
