"""EAD in TRL's ``GRPOTrainer`` (the ``trl`` extra): :mod:`~ead.rl.trl.grpo` holds ``EADGRPOTrainer``.

Importing the package imports nothing of TRL; importing :mod:`ead.rl.trl.grpo` checks that the installed TRL is a
release the integration was run with (docs/use-ead.md, "TRL").
"""
