"""Runs of the workflow, the trainer or the cluster end to end: the smoke workflow and the overlays at smoke size, the
SLURM local cluster, the profiles' Snakemake dry runs, the smoke DAG snapshot, the DAG runtime check, the vLLM suite's
wrapper and the library installed as docs/use-ead.md says."""
