"""Operations: how the reproduction runs at paper scale and on a site's cluster, beside the research code it serves.

* :mod:`ead.operations.hub`: the paper profile's hub downloads (``python -m ead.operations.hub``);
* :mod:`ead.operations.slurm_profile`: a site's SLURM workflow profile derived from ours
  (``python -m ead.operations.slurm_profile``); it knows the workflow's rules, so the package sits on the settings'
  layer.

Nothing is imported here, so running one tool does not load the other's dependencies.
"""
