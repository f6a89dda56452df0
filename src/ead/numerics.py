"""Which CPU kernels a job's arithmetic runs on: declared once, so the same commit gives the same bits on every x86
machine that supports the declared level.

On x86, torch chooses at run time the widest instruction set the CPU offers, in three places: ATen's vectorised
kernels (softmax, log-softmax, reductions, elementwise maths; ``ATEN_CPU_CAPABILITY``), MKL's GEMM behind every
matmul and linear layer (``MKL_CBWR``, Intel's Conditional Numerical Reproducibility branch) and oneDNN
(``ONEDNN_MAX_CPU_ISA``); numpy does the same for its SIMD loops (``NPY_DISABLE_CPU_FEATURES``). Kernels of other
widths add in another order and round differently, so an AVX-512 machine and an AVX2 machine train different
weights from the same seed, and every RL number after the SFT moves. The workflow sets all four from one config key,
``numerics.cpu_level`` (:func:`job_environment`, applied by ``workflow/rules/common.smk`` before any job starts), and
every torch job checks, when it pins its thread count (:func:`pin_job`), that torch does run at that level: a CPU
without it is refused, naming the key, rather than computing other numbers.

Levels (:data:`CPU_LEVELS`):

* ``avx2`` (the default): AVX2 + FMA kernels, which every x86-64 CPU since 2013 (Intel Haswell, AMD Zen) has;
* ``default``: no vector extension beyond what every x86-64 CPU has (ATen's scalar-width kernels, MKL's COMPATIBLE
  branch): any x86-64 CPU, slower;
* ``avx512``: AVX-512 kernels, on AVX-512 machines only;
* ``native``: nothing pinned, torch's own choice: fastest on each machine, but numbers move between CPUs.

The thread count is part of the declaration too (``numerics.threads``, each torch job's): a reduction over millions
of elements splits across threads and adds in another order, so 1 and 2 threads can differ in the last bit.
What this leaves machine-dependent, and what a user on another CPU should expect: docs/operations.md,
"Reproducibility: what is bitwise, what is not".

Run (what a job's environment holds at a level):
    python -m ead.numerics --level avx2
"""

from __future__ import annotations

import argparse
import numbers
import os
from typing import Mapping

__all__ = ["CPU_LEVELS", "LEVEL_ENV", "CpuLevelError", "child_environment", "job_cpu_level", "job_environment",
           "missing_features", "pin_job", "running_cpu_level"]

#: The environment variable through which the workflow tells every job its declared level.
LEVEL_ENV = "EAD_CPU_LEVEL"

# numpy's dispatchable feature groups above each level (numpy 2.x names; unknown names are ignored by numpy).
_NUMPY_ABOVE_AVX2 = "X86_V4 AVX512_ICL AVX512_SPR"

#: Each level's kernel settings, by the variable that chooses them.
_LEVEL_SETTINGS: Mapping[str, Mapping[str, str]] = {
    "default": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41",
                "NPY_DISABLE_CPU_FEATURES": f"X86_V3 {_NUMPY_ABOVE_AVX2}"},
    "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2",
             "NPY_DISABLE_CPU_FEATURES": _NUMPY_ABOVE_AVX2},
    "avx512": {"ATEN_CPU_CAPABILITY": "avx512", "MKL_CBWR": "AVX512", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE",
               "NPY_DISABLE_CPU_FEATURES": "AVX512_ICL AVX512_SPR"},
    "native": {},
}
#: The declarable levels, narrowest first, then ``native``.
CPU_LEVELS = tuple(_LEVEL_SETTINGS)
#: The CPU features each level's kernels execute (ATen's own test for its AVX2 and AVX-512 kernels). torch does not
#: check them: ATEN_CPU_CAPABILITY=avx512 on an AVX2 CPU dies of an illegal instruction at the first softmax.
_LEVEL_FEATURES: Mapping[str, tuple[str, ...]] = {
    "default": (), "avx2": ("avx2", "fma3"), "avx512": ("avx512_f", "avx512_bw", "avx512_vl", "avx512_dq"),
    "native": (),
}


class CpuLevelError(RuntimeError):
    """This machine cannot run at the declared level (or the level is unknown); the message names
    ``numerics.cpu_level``, the level and what torch runs here."""


def _checked_level(level) -> str:
    if not isinstance(level, str) or level not in _LEVEL_SETTINGS:
        raise CpuLevelError(f"numerics.cpu_level must be one of {list(CPU_LEVELS)}, got {level!r}")
    return level


def job_environment(level: str) -> dict[str, str]:
    """The environment variables that make a job's kernels run at ``level`` (set before torch or numpy load), and
    :data:`LEVEL_ENV` naming it; ``native`` sets only the latter."""
    return {**_LEVEL_SETTINGS[_checked_level(level)], LEVEL_ENV: level}


def child_environment(level: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a child process at ``level``: ``base`` (default ``os.environ``) without any kernel
    variable of any level, then :func:`job_environment` of ``level``; so a caller's own pin never leaks into a child
    at another level (nor into ``native``, which sets none)."""
    if base is not None and not isinstance(base, Mapping):
        raise TypeError(f"base must be a mapping of environment variables (or None for os.environ), got {base!r}")
    pinned = {name for settings in _LEVEL_SETTINGS.values() for name in settings} | {LEVEL_ENV}
    inherited = os.environ if base is None else base
    return {**{name: value for name, value in inherited.items() if name not in pinned}, **job_environment(level)}


def job_cpu_level() -> str:
    """The level this job was declared to run at (:data:`LEVEL_ENV`), ``native`` outside the workflow."""
    return os.environ.get(LEVEL_ENV) or "native"


def missing_features(level: str) -> list[str]:
    """The CPU features ``level``'s kernels need that this machine lacks (torch's cpuinfo)."""
    import torch

    capabilities = torch.cpu.get_capabilities()
    return [feature for feature in _LEVEL_FEATURES[_checked_level(level)] if not capabilities.get(feature)]


def running_cpu_level() -> str:
    """The kernel level torch's ATen runs at in this process: ``default``, ``avx2`` or ``avx512`` (or what a newer
    torch reports, lower-cased)."""
    import torch

    return torch.backends.cpu.get_cpu_capability().lower()


def pin_job(threads: int) -> str:
    """Pin a torch job's arithmetic: ``threads`` intra-op threads, and the declared level checked against the one
    torch runs at (:class:`CpuLevelError` where this CPU lacks it, or the job's environment was not set by the
    workflow). Returns the level. Call it before any tensor work."""
    import torch

    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 1:
        raise SystemExit(f"--threads must be an integer >= 1, got {threads!r}")
    threads = int(threads)  # numpy integers too
    declared = _checked_level(job_cpu_level())
    advice = ("declare a level this CPU has (numerics.cpu_level: default runs on every x86-64 CPU; native pins "
              "nothing, and its numbers move between machines)")
    lacking = missing_features(declared)
    if lacking:
        raise CpuLevelError(f"numerics.cpu_level is {declared!r}, but this CPU lacks {', '.join(lacking)}: {advice}")
    torch.set_num_threads(threads)
    if declared == "native":
        return declared
    running = running_cpu_level()
    unset = {name: os.environ.get(name) for name, value in _LEVEL_SETTINGS[declared].items()
             if os.environ.get(name) != value}
    if running != declared or unset:
        raise CpuLevelError(f"numerics.cpu_level is {declared!r}, but this job runs torch's {running!r} kernels with "
                            f"{unset or 'the level set'}: it did not get the workflow's environment "
                            f"(ead.numerics.job_environment); run it through snakemake, or {advice}")
    return declared


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--level", required=True, choices=CPU_LEVELS)
    args = parser.parse_args(argv)
    for name, value in job_environment(args.level).items():
        print(f"{name}={value}")


if __name__ == "__main__":
    main()
