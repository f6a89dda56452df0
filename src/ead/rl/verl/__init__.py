"""The paper-scale RL backend: one grid cell = one verl 0.9.1 run (``python -m verl.trainer.main_ppo``), on GPUs
(paper and gpu_smoke profiles) or on this CPU (verl_cpu profile, ``rl.verl.device: cpu``).

* :mod:`~ead.rl.verl.overrides`: config -> Hydra overrides (the one mapping) and offline composition;
* :mod:`~ead.rl.verl.agent_loop`: the agent loop that puts the step's EAD parameters into each vLLM request;
* :mod:`~ead.rl.verl.reward`: our grader as verl's custom reward function;
* :mod:`~ead.rl.verl.convert`: verl's file logger and validation dumps -> steps.csv / eval_problems.csv / eval.csv,
  the CPU backend's tables (so ``rl_tables`` and ``rl_figure`` serve both backends);
* :mod:`~ead.rl.verl.run`: the per-cell job (Snakemake rule ``rl_cell_verl``);
* :mod:`~ead.operations.hub`: paper-profile-only hub downloads (models, NuminaMath-CoT, MATH-500).

Cells are resolved by :mod:`ead.settings.rl` (``verl_cell_settings``: the typed settings of :mod:`ead.settings.cell`
that the CPU backend reads, with the verl backend section).
See docs/paper-scale.md. Importing the package imports neither verl nor vLLM.
"""
