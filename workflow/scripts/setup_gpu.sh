#!/usr/bin/env bash
# Create (or update) the paper-scale GPU environment in .venv-gpu: verl 0.9.1 with its vLLM and FSDP extras (vLLM
# 0.24.0, CUDA torch 2.11.0, flash-attn), this package, Snakemake and its SLURM executor plugin.
#   bash workflow/scripts/setup_gpu.sh && . .venv-gpu/bin/activate
#   snakemake --configfile configs/paper.yaml --workflow-profile workflow/profiles/slurm
# Needs Python 3.11 and a CUDA 13 driver on the GPU nodes (verl's pins). verl's [vllm,fsdp] extra fixes the CUDA
# stack (torch, transformers, numpy); the package's `pipeline` extra adds the rest at constraints.txt's versions (its
# cpu-only lines left out).
set -euo pipefail
cd "$(dirname "$0")/../.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv-gpu/bin/python ]; then
  "$PYTHON" -m venv .venv-gpu
fi
pip() { .venv-gpu/bin/python -m pip --disable-pip-version-check -q "$@"; }
pip install "verl[vllm,fsdp]==0.9.1"
grep -v -- '# cpu-only' constraints.txt > .venv-gpu/constraints.txt
pip install -c .venv-gpu/constraints.txt -e ".[pipeline]" "huggingface_hub" "datasets"
.venv-gpu/bin/python -c 'import ead, torch, verl, vllm; print("setup_gpu.sh: ready in .venv-gpu: ead", ead.__version__, "torch", torch.__version__, "verl", verl.__version__, "vllm", vllm.__version__)'
