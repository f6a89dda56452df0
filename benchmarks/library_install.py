"""Install the package as docs/use-ead.md says into a fresh venv that already holds a torch of its own, and sample
with the page's transformers block there: the torch must be the same afterwards (version and files), and none of
the reproduction's tools (Snakemake, pandas, verl, ...) may come along.

On this project's machines only one CPU build of torch installs without a multi-GB CUDA download (2.13.0+cpu, the
reproduction's own), so the test suite (tests/end_to_end/test_use_ead_page.py) runs this with it and proves the other
half with ``pip install --dry-run`` against other torch releases. On a machine that reaches a CPU wheel index, run it
with another torch:

    python benchmarks/library_install.py --workdir /tmp/ead-library --torch "torch==2.7.1" \\
        --index-url https://download.pytorch.org/whl/cpu --out benchmarks/results/library_install.md

It builds a tiny local model for the transformers block (no hub download) and writes a short report to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "use-ead.md"
#: The oldest and newest transformers the library supports: the `transformers` extra's bounds, both run by the
#: compatibility lane (benchmarks/vllm_compat.py); the test suite installs beside the newest.
TRANSFORMERS_RELEASES = ("5.10.4", "5.25.0")
#: What the library must not bring along: the reproduction's tools (pyproject.toml's `pipeline` extra).
PIPELINE_ONLY = {"snakemake", "pandas", "verl", "matplotlib", "math-verify"}


def page_blocks() -> list[tuple[str, str]]:
    """(language, code) of every fenced code block of docs/use-ead.md, in page order."""
    return re.findall(r"^```(\w*)\n(.*?)^```", PAGE.read_text(), re.S | re.M)


def block_kind(language: str, code: str) -> str:
    """Which test runs a block: install, schedules, transformers, vllm, trl, agent_loop or verl."""
    if language == "bash" and code.lstrip().startswith("pip install"):
        return "install"
    if language == "bash" and "verl.trainer.main_ppo" in code:
        return "verl"
    if language == "yaml" and "ScheduleAgentLoop" in code:
        return "agent_loop"
    if language == "python" and "from vllm import" in code:
        return "vllm"
    if language == "python" and "from trl import" in code:
        return "trl"
    if language == "python" and "from transformers import" in code:
        return "transformers"
    if language == "python":
        return "schedules"
    return f"untested {language or 'plain'} block"


def the_block(kind: str) -> str:
    """The page's one block of ``kind`` (:func:`block_kind`)."""
    (code,) = [code for language, code in page_blocks() if block_kind(language, code) == kind]
    return code


def package_sources(directory: Path) -> Path:
    """The package's sources as a clone has them, copied to ``directory`` (a build writes build/ where it runs)."""
    directory.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, directory / name)
    shutil.copytree(ROOT / "src", directory / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    return directory


def torch_files(python: Path) -> dict:
    """The venv's torch: its version and its installed files' record (pip's RECORD, with hashes)."""
    probe = ("import importlib.metadata as md, json, pathlib, torch; dist = md.distribution('torch'); "
             "print(json.dumps({'version': torch.__version__, 'record': (pathlib.Path(dist._path) / 'RECORD')"
             ".read_text()}))")
    return json.loads(subprocess.run([str(python), "-c", probe], check=True, capture_output=True, text=True).stdout)


def installed_names(python: Path) -> set[str]:
    listed = subprocess.run([str(python), "-c", "import importlib.metadata as md, json; print(json.dumps("
                             "[dist.metadata['Name'] for dist in md.distributions()]))"],
                            check=True, capture_output=True, text=True).stdout
    return {name.lower() for name in json.loads(listed)}


#: Run in the venv after the page's blocks: the KV-cached sampling loop (``ead.sample``) on the same model. With the
#: blocks it runs under ``-W error::FutureWarning``: nothing the library calls may be deprecated in that transformers.
SAMPLE_SNIPPET = """
import os, torch
from transformers import AutoModelForCausalLM
import ead
model = AutoModelForCausalLM.from_pretrained(os.environ["EAD_MODEL"], dtype=torch.float32)
schedule = ead.build_schedule({"name": "ead", "tau_max": 1.2, "tau_min": 0.1, "d0": 4, "warmup": 2})
prompts = torch.tensor([[5, 6, 7, 8], [0, 9, 10, 11]])
out = ead.sample(model, prompts, (prompts != 0).long(), schedule, max_new_tokens=8, eos_token_ids=[], pad_token_id=0,
                 generator=torch.Generator().manual_seed(0))
assert out.token_ids.shape == (2, 8), out.token_ids.shape
"""


def versions(python: Path, names) -> dict[str, str | None]:
    """The installed version of each distribution in ``names`` (None where absent)."""
    probe = ("import importlib.metadata as md, json, sys\nout = {}\nfor name in sys.argv[1:]:\n    try:\n"
             "        out[name] = md.version(name)\n    except md.PackageNotFoundError:\n        out[name] = None\n"
             "print(json.dumps(out))")
    return json.loads(subprocess.run([str(python), "-c", probe, *names], check=True, capture_output=True,
                                     text=True).stdout)


def install_and_sample(workdir: Path, torch_spec: str, model_dir: Path, index_url: str | None = None,
                       preinstall: tuple[str, ...] = ()) -> dict:
    """Fresh venv with ``torch_spec`` (and the ``preinstall`` requirements, e.g. ``transformers==5.25.0``), then the
    page's install block, then its schedule and transformers blocks and ``ead.sample`` on ``model_dir``, with every
    FutureWarning an error. Returns what happened; raises AssertionError naming the step that broke the promise: the
    install must leave torch and every preinstalled distribution at their versions, and ``pip check`` clean."""
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "-q"]
    started = time.monotonic()
    subprocess.run([*pip, "install", torch_spec, *(["--index-url", index_url] if index_url else [])], check=True,
                   capture_output=True, text=True)
    if preinstall:
        subprocess.run([*pip, "install", *preinstall, torch_spec], check=True, capture_output=True, text=True)
    kept = [re.split(r"[=<>!~ \[]", requirement, maxsplit=1)[0] for requirement in preinstall]
    before, kept_before = torch_files(python), versions(python, kept)
    env = {**os.environ, "PATH": os.pathsep.join([str(venv / "bin"), os.environ["PATH"]]), "VIRTUAL_ENV": str(venv)}
    install = subprocess.run(["bash", "-c", the_block("install")], cwd=package_sources(workdir / "clone"),
                             capture_output=True, text=True, env=env)
    assert install.returncode == 0, f"the page's install block failed:\n{install.stderr[-3000:]}"
    after, kept_after = torch_files(python), versions(python, kept)
    assert after == before, f"the install replaced torch {before['version']} with {after['version']}"
    assert kept_after == kept_before, f"the install changed what the venv held: {kept_before} -> {kept_after}"
    check = subprocess.run([*pip, "check"], capture_output=True, text=True)
    assert check.returncode == 0, f"pip check after the install: {check.stdout}{check.stderr}"
    installed = installed_names(python)
    assert {"ead", "transformers", "torch", "numpy"} <= installed, installed
    assert not installed & PIPELINE_ONLY, f"the library brought the pipeline's {sorted(installed & PIPELINE_ONLY)}"
    run_env = {**env, "EAD_MODEL": str(model_dir), "HF_HUB_OFFLINE": "1"}
    for name, code in (("schedules", the_block("schedules")), ("transformers", the_block("transformers")),
                       ("sample", SAMPLE_SNIPPET)):
        snippet = workdir / f"{name}_block.py"
        snippet.write_text(code)
        run = subprocess.run([str(python), "-W", "error::FutureWarning", str(snippet)], capture_output=True,
                             text=True, cwd=workdir, env=run_env)
        assert run.returncode == 0, f"the page's {name} block failed (FutureWarnings are errors):\n{run.stderr[-3000:]}"
    return {"torch": before["version"], "installed": len(installed), "seconds": time.monotonic() - started,
            "versions": versions(python, ["transformers", "huggingface-hub", "tokenizers", "kernels"])}


def tiny_model(directory: Path) -> Path:
    """The test suite's tiny random Llama with a character tokenizer (tests.conftest.write_tiny_model)."""
    sys.path.insert(0, str(ROOT))
    from tests.conftest import write_tiny_model

    directory.mkdir(parents=True)
    return write_tiny_model(directory)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, required=True, help="where the venv goes (must not exist)")
    parser.add_argument("--torch", default="torch==2.13.0", help="the torch the venv holds first")
    parser.add_argument("--index-url", help="a wheel index serving that torch (e.g. PyTorch's CPU index)")
    parser.add_argument("--preinstall", nargs="*", default=[], help="what the venv holds before the install too, "
                        "e.g. transformers==5.25.0 (it must stay as it is)")
    parser.add_argument("--out", type=Path, required=True, help="markdown report")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True)
    print(f"library_install: a venv with {args.torch}, then the page's install and transformers blocks", flush=True)
    result = install_and_sample(args.workdir, args.torch, tiny_model(args.workdir / "model"), args.index_url,
                                tuple(args.preinstall))
    command = "python benchmarks/library_install.py " + " ".join(sys.argv[1:])
    report = (f"# The library in a venv with its own torch\n\nCommand: `{command}`\n\n{dt.date.today()}: torch "
              f"{result['torch']} and {args.preinstall or 'nothing else'} stayed in place "
              f"({result['versions']}); the page's transformers block sampled with EAD; "
              f"{result['installed']} distributions installed, none of the pipeline's; {result['seconds']:.0f} s.\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
