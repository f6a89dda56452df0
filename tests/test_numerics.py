"""ead.numerics: a declared CPU level becomes the environment that pins torch's, MKL's, oneDNN's and numpy's kernels;
a job refuses a level its CPU lacks, or an environment the workflow did not set, naming numerics.cpu_level."""

import subprocess
import sys

import pytest
import torch
import yaml

from ead.numerics import (
    CPU_LEVELS,
    LEVEL_ENV,
    CpuLevelError,
    child_environment,
    job_environment,
    missing_features,
    pin_job,
)
from tests.conftest import WORKFLOW_ROOT

KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA", "NPY_DISABLE_CPU_FEATURES")


def test_each_pinned_level_sets_every_kernel_variable_and_native_sets_none():
    assert CPU_LEVELS == ("default", "avx2", "avx512", "native")
    assert job_environment("avx2") == {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                                       "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
                                       LEVEL_ENV: "avx2"}
    assert job_environment("default")["MKL_CBWR"] == "COMPATIBLE"
    for level in ("default", "avx2", "avx512"):
        assert set(job_environment(level)) == {*KERNEL_VARIABLES, LEVEL_ENV}
    assert job_environment("native") == {LEVEL_ENV: "native"}


@pytest.mark.parametrize("level", ["AVX2", "sse", None, 2])
def test_an_unknown_level_is_refused_naming_the_key(level):
    with pytest.raises(CpuLevelError, match=r"numerics.cpu_level must be one of \['default', 'avx2'"):
        job_environment(level)


def test_the_config_schema_offers_exactly_the_levels_and_the_default_profile_pins_avx2_on_one_thread():
    schema = yaml.safe_load((WORKFLOW_ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert tuple(schema["properties"]["numerics"]["properties"]["cpu_level"]["enum"]) == CPU_LEVELS
    config = yaml.safe_load((WORKFLOW_ROOT / "configs" / "config.yaml").read_text())
    assert config["numerics"] == {"cpu_level": "avx2", "threads": 1}


def test_a_level_the_cpu_lacks_is_refused_before_any_kernel_runs(monkeypatch):
    capabilities = {"avx2": True, "fma3": True, "avx512_f": False, "avx512_bw": False, "avx512_vl": False,
                    "avx512_dq": False}
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: capabilities)
    assert missing_features("avx2") == [] and missing_features("default") == []
    assert missing_features("avx512") == ["avx512_f", "avx512_bw", "avx512_vl", "avx512_dq"]
    monkeypatch.setenv(LEVEL_ENV, "avx512")
    with pytest.raises(CpuLevelError, match="numerics.cpu_level is 'avx512', but this CPU lacks avx512_f"):
        pin_job(1)


def test_a_job_without_the_workflows_environment_is_refused(monkeypatch):
    monkeypatch.setenv(LEVEL_ENV, "default")
    for name in KERNEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(CpuLevelError, match="did not get the workflow's environment"):
        pin_job(1)


@pytest.mark.parametrize("threads", [0, -1, 1.5, "2", True])
def test_pin_job_refuses_a_thread_count_that_is_not_a_positive_integer(threads):
    with pytest.raises(SystemExit, match="--threads must be an integer >= 1"):
        pin_job(threads)


def test_pin_job_takes_a_numpy_integer_thread_count(monkeypatch):
    import numpy as np

    monkeypatch.setenv(LEVEL_ENV, "native")
    before = torch.get_num_threads()
    try:
        assert pin_job(np.int64(1)) == "native" and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_a_job_at_a_declared_level_runs_torchs_kernels_of_that_level_and_its_threads():
    """In a fresh process (ATen reads its level once), with the environment the workflow gives it."""
    code = ("from ead.numerics import pin_job, running_cpu_level; import torch; "
            "print(pin_job(2), running_cpu_level(), torch.get_num_threads())")
    result = subprocess.run([sys.executable, "-c", code], env=child_environment("default"),
                            capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["default", "default", "2"]


def test_the_module_prints_a_levels_environment():
    result = subprocess.run([sys.executable, "-m", "ead.numerics", "--level", "avx2"], capture_output=True, text=True,
                            check=True)
    assert "MKL_CBWR=AVX2" in result.stdout.splitlines()
    result = subprocess.run([sys.executable, "-m", "ead.numerics", "--level", "native"], capture_output=True,
                            text=True, check=True)
    assert result.stdout.splitlines() == ["EAD_CPU_LEVEL=native"]


def test_a_childs_environment_drops_every_inherited_pin_before_its_level_sets_its_own():
    caller = {"PATH": "/bin", **job_environment("avx512")}
    assert child_environment("avx2", caller) == {"PATH": "/bin", **job_environment("avx2")}
    assert child_environment("native", caller) == {"PATH": "/bin", LEVEL_ENV: "native"}  # no AVX-512 pin leaks
    with pytest.raises(CpuLevelError, match=r"numerics.cpu_level must be one of"):
        child_environment("AVX2", caller)
    with pytest.raises(TypeError, match="base must be a mapping"):
        child_environment("avx2", ["PATH=/bin"])
