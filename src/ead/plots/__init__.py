"""Figure jobs, each reading result tables only (never recomputing): one module per figure, but the RL figures, drawn
by one job (ead.plots.rl_figure) from their registry entries (ead.workflow.FIGURES) or their own module's ``plot``."""
