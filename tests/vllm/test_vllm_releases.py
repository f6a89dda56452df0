"""EAD's vLLM processor against each vLLM release from 0.31.0 to 0.34.0: each release's own plugin loaders and
params-validator builder run with ead installed, its loaders by name return our class, and ``apply`` through its
Model Runner V2 interface equals the formula on a hand-built batch (benchmarks/vllm_release_probe.py, the compatibility
lane's probe). Each release's GPU build is installed without its dependencies into .cache/vllm-releases (reused), and
put first on this venv's path: no engine starts, no GPU is needed.

Run: ``.venv-vllm/bin/python -m pytest tests/vllm/test_vllm_releases.py`` (the first run downloads about 1.2 GB).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from vllm_compat import install_release, probe_release  # noqa: E402

#: release -> the runner interfaces it has (0.34.0 removed Model Runner V1 and its module)
RELEASES = {"0.31.0": ["v1", "v2"], "0.32.0": ["v1", "v2"], "0.33.0": ["v1", "v2"], "0.34.0": ["v2"]}


@pytest.mark.slow
@pytest.mark.parametrize("version", list(RELEASES))
def test_the_release_loads_validates_and_applies_ead(version):
    result = probe_release(install_release(version), sys.executable)
    assert result["vllm"] == version
    assert result["interfaces"] == RELEASES[version]
    checks = result["checks"]
    failed = {name: check["detail"] for name, check in checks.items() if check["status"] == "failed"}
    assert not failed, f"vLLM {version}: {failed}\n" + "\n".join(result["tracebacks"].values())
    expected_to_run = [name for name in checks if name.endswith("_v1")] if "v1" in RELEASES[version] else []
    expected_to_run += ["registers_no_plugin", "plugin_loader_v2", "fqcn_loader_v2", "entry_point_opt_in",
                        "params_validator", "apply_v2"]
    assert {name for name, check in checks.items() if check["status"] == "passed"} == set(expected_to_run)
    assert checks["plugin_loader_v2"]["detail"] == "loaded 0 plugin(s)"  # installing ead registers nothing
