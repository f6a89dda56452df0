#!/usr/bin/env bash
# Create (or update) the paper-scale GPU environment in .venv-gpu: verl 0.9.1 with its vLLM and FSDP extras (vLLM
# 0.24.0, CUDA torch 2.11.0, flash-attn), this package, Snakemake and its SLURM executor plugin.
#   bash workflow/scripts/setup_gpu.sh && . .venv-gpu/bin/activate
#   snakemake --configfile configs/paper.yaml --workflow-profile workflow/profiles/slurm
# Needs Python 3.11 and a CUDA 13 driver on the GPU nodes (verl's pins). The package is installed with --no-deps
# because pyproject.toml pins the CPU torch build for the default profile; its other dependencies are installed
# here from pyproject.toml (everything but torch), so the two environments share one list.
set -euo pipefail
cd "$(dirname "$0")/../.."

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv-gpu/bin/python ]; then
  "$PYTHON" -m venv .venv-gpu
fi
pip() { .venv-gpu/bin/python -m pip --disable-pip-version-check -q "$@"; }
pip install "verl[vllm,fsdp]==0.9.1"
mapfile -t deps < <(.venv-gpu/bin/python - <<'PY'
import tomllib
for dep in tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]:
    if not dep.replace(" ", "").startswith(("torch=", "torch>", "torch<", "torch;")) and dep.strip() != "torch":
        print(dep)
PY
)
pip install "${deps[@]}" "huggingface_hub" "datasets"
pip install --no-deps -e .
.venv-gpu/bin/python -c 'import ead, torch, verl, vllm; print("setup_gpu.sh: ready in .venv-gpu: ead", ead.__version__, "torch", torch.__version__, "verl", verl.__version__, "vllm", vllm.__version__)'
