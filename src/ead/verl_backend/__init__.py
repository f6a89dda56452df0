"""The paper-scale RL backend: one grid cell = one verl 0.9.1 run (``python -m verl.trainer.main_ppo``) on GPUs.

* :mod:`~ead.verl_backend.overrides`: config -> Hydra overrides (the one mapping) and offline composition;
* :mod:`~ead.verl_backend.agent_loop`: the agent loop that puts the step's EAD parameters into each vLLM request;
* :mod:`~ead.verl_backend.reward`: our grader as verl's custom reward function;
* :mod:`~ead.verl_backend.convert`: verl's file logger and validation dumps -> steps.csv / eval.csv;
* :mod:`~ead.verl_backend.run`: the per-cell job (Snakemake rule ``rl_cell_verl``);
* :mod:`~ead.verl_backend.hub`: paper-profile-only hub downloads (models, NuminaMath-CoT, MATH-500).

See docs/paper_scale.md. Importing the package imports neither verl nor vLLM.
"""
