"""Checks EAD's vLLM processor against the vLLM release that this interpreter imports; prints one JSON object.

Run by benchmarks/vllm_compat.py (the compatibility lane) and tests/vllm/test_vllm_releases.py, each with one vLLM
release first on ``sys.path`` (a GPU build installed without its dependencies into a folder, ahead of the project's
vLLM venv); nothing here needs a GPU or starts an engine. For that release it runs:

* ``registers_no_plugin``: the ``vllm.logits_processors`` entry points of the environment; ``ead`` declares none, so
  installing it cannot stop an engine;
* ``plugin_loader_v1`` / ``plugin_loader_v2``: the release's own loaders of that group (``_load_logitsprocs_plugins``,
  ``_load_v2_logitsprocs_plugins``), with ead installed;
* ``fqcn_loader_v1`` / ``fqcn_loader_v2``: the release's loaders of ``logits_processors=[NAME]`` (what ``LLM``,
  ``vllm serve --logits-processors`` and verl use) return our class, a subclass of the runner's interface;
* ``entry_point_opt_in``: a distribution that declares ``ead`` in the group (docs/use-ead.md's recipe for every
  engine of an environment) is loaded by the V2 plugin loader;
* ``params_validator``: the release's params-validator builder (what ``InputProcessor.__init__`` calls for every
  ``LLM`` / ``AsyncLLM``) with our class; an EAD request at temperature 1.0 and a schedule request pass, one at 0.7,
  one with a partial EAD key set and one with top_p 0.9 are refused with vLLM's validation error;
* ``apply_v2``: our class built the way Model Runner V2 builds it (the release's ``LogitsProcRequestState`` with a
  ``UvaBackedTensor`` of prompt lengths on host buffers, as vLLM's CPU runner patches them) and called as its sampler
  calls it (``add_request`` per slot, ``apply_staged_writes`` on steps that admit requests, ``apply(logits,
  LogitsContext)`` with rows in another order than slots) over 12 steps in which requests join and leave and a slot
  is recycled; every row is compared with the formula ``tau_t = max(1 + tau_max - exp(t / d), tau_min)`` (tau = 1 for
  t < c) written out here in float64, and the schedule-form row with the schedule's own ``temperatures``.

    PYTHONPATH=/path/to/vllm-0.34.0 .venv-vllm/bin/python benchmarks/vllm_release_probe.py
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.metadata as md
import json
import math
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

from ead.samplers.vllm_processors import PROCESSOR_NAME as FQCN
from ead.samplers.vllm_processors import RUNNER_INTERFACES

GROUP = "vllm.logits_processors"
V1_MODULE, V2_MODULE = RUNNER_INTERFACES["v1"], RUNNER_INTERFACES["v2"]
V2_LOADER = f"{V2_MODULE}.loader"

EAD_A = {"tau_max": 1.2, "tau_min": 0.1, "d": 4.0, "c": 2}
EAD_B = {"tau_max": 1.5, "tau_min": 0.3, "d": 7.5, "c": 0}
EAD_C = {"tau_max": 1.1, "tau_min": 0.6, "d": 2.0, "c": 3}
TWO_STAGE = {"name": "two_stage", "tau_early": 1.4, "tau_late": 0.6, "switch": 4}


def formula_tau(extra_args: dict, t: int) -> float:
    """EAD's temperature at response position t, written out (independent of ead.schedule)."""
    if t < extra_args["c"]:
        return 1.0
    return max(1.0 + extra_args["tau_max"] - math.exp(t / extra_args["d"]), extra_args["tau_min"])


def module_or_none(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def ead_sampling_params(temperature=1.0, extra_args=None, **other):
    from vllm import SamplingParams

    return SamplingParams(temperature=temperature, extra_args=extra_args, **other)


def check_registers_no_plugin(context: dict) -> str:
    ours = [f"{ep.name} = {ep.value} ({ep.dist.name if ep.dist else '?'})" for ep in md.entry_points(group=GROUP)
            if ep.value.startswith("ead.") or (ep.dist is not None and ep.dist.name == "ead")]
    if ours:
        raise AssertionError(f"ead registers into every engine: {ours}")
    return "no entry point of ead in the group"


def check_plugin_loader(runner: str) -> str:
    if runner == "v2":
        loaded = importlib.import_module(V2_LOADER)._load_v2_logitsprocs_plugins()
    else:
        loaded = importlib.import_module(V1_MODULE)._load_logitsprocs_plugins()
    return f"loaded {len(loaded)} plugin(s)"


def check_fqcn_loader(runner: str) -> str:
    if runner == "v2":
        interface = importlib.import_module(V2_MODULE).LogitsProcessor
        (cls,) = importlib.import_module(V2_LOADER)._load_v2_logitsprocs_by_fqcns([FQCN])
    else:
        module = importlib.import_module(V1_MODULE)
        interface = module.LogitsProcessor
        (cls,) = module._load_logitsprocs_by_fqcns([FQCN])
    if not (cls.__name__ == "EADLogitsProcessor" and issubclass(cls, interface)):
        raise AssertionError(f"{FQCN} loaded as {cls!r}, not a subclass of {interface!r}")
    return f"{cls.__module__}.{cls.__qualname__}"


def check_entry_point_opt_in(context: dict) -> str:
    """A distribution of the user's own that declares the entry point (docs/use-ead.md) is loaded by the V2 loader."""
    site = Path(tempfile.mkdtemp(prefix="ead-entry-point-"))
    dist_info = site / "ead_vllm_plugin-0.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: ead-vllm-plugin\nVersion: 0.0\n")
    (dist_info / "entry_points.txt").write_text(f"[{GROUP}]\nead = {FQCN}\n")
    sys.path.insert(0, str(site))
    try:
        loaded = importlib.import_module(V2_LOADER)._load_v2_logitsprocs_plugins()
    finally:
        sys.path.remove(str(site))
    names = [cls.__name__ for cls in loaded]
    if "EADLogitsProcessor" not in names:
        raise AssertionError(f"the V2 plugin loader did not load the declared entry point: {names}")
    return f"loaded {names}"


def check_params_validator(context: dict) -> str:
    from vllm.exceptions import VLLMValidationError

    from ead.samplers.vllm_processors import schedule_extra_args
    from ead.schedule import build_schedule

    loader = importlib.import_module(V2_LOADER)
    loader.build_custom_logits_processors_params_validator(None)(ead_sampling_params())  # no EAD: the default path
    validate = loader.build_custom_logits_processors_params_validator([FQCN])
    validate(ead_sampling_params(1.0, EAD_A))
    validate(ead_sampling_params(1.0, schedule_extra_args(build_schedule(TWO_STAGE), step=3)))
    validate(ead_sampling_params(0.7))  # a request without EAD keys keeps its own temperature
    refused = []
    for temperature, extra_args, other in ((0.7, EAD_A, {}), (1.0, {"tau_max": 1.2}, {}), (1.0, EAD_A, {"top_p": 0.9})):
        try:
            validate(ead_sampling_params(temperature, extra_args, **other))
        except VLLMValidationError as error:
            refused.append(str(error))
        else:
            raise AssertionError(f"the validator accepted temperature={temperature}, extra_args={extra_args}, {other}")
    if "temperature=1.0" not in refused[0] or "missing" not in refused[1] or "top_p=0.9" not in refused[2]:
        raise AssertionError(f"the refusals do not name what is wrong: {refused}")
    return "EAD at 1.0 and a schedule pass; EAD at 0.7, a partial key set and top_p 0.9 are refused"


def host_uva_buffers() -> None:
    """Host-memory UVA buffers, patched in as vLLM's CPU worker does (vllm/v1/worker/cpu/shm.py)."""
    cpu_buffers = importlib.import_module("vllm.v1.worker.cpu.buffer_utils")
    importlib.import_module("vllm.v1.worker.gpu.buffer_utils").UvaBuffer = cpu_buffers.UvaBuffer


def v2_request_state(max_num_reqs: int, vocab_size: int):
    """The release's LogitsProcRequestState with a host-buffer prompt_len (the only field our processor reads)."""
    import torch

    host_uva_buffers()
    from vllm.v1.worker.gpu.buffer_utils import UvaBackedTensor

    prompt_len = UvaBackedTensor(max_num_reqs, dtype=torch.int32)
    values = {"device": torch.device("cpu"), "max_num_reqs": max_num_reqs, "vocab_size": vocab_size,
              "prompt_len": prompt_len}
    state_cls = importlib.import_module(V2_MODULE).LogitsProcRequestState
    fields = {field.name for field in dataclasses.fields(state_cls)}
    if not {"max_num_reqs", "prompt_len"} <= fields:
        raise AssertionError(f"LogitsProcRequestState has no max_num_reqs / prompt_len: {sorted(fields)}")
    return state_cls(**{name: values.get(name) for name in fields})


def v2_context(slots: list[int], positions: list[int]):
    """The release's LogitsContext for rows at ``slots`` whose logits sit at input ``positions``."""
    import numpy as np
    import torch

    n = len(slots)
    values = {
        "expanded_idx_mapping": torch.tensor(slots, dtype=torch.int32),
        "idx_mapping": torch.tensor(slots, dtype=torch.int32),
        "idx_mapping_np": np.array(slots, dtype=np.int32),
        "expanded_local_pos": torch.zeros(n, dtype=torch.int32),
        "input_ids": torch.zeros(n, dtype=torch.int32),
        "pos": torch.tensor(positions, dtype=torch.int64),
        "seq_lens_upper_bound_np": np.array(positions, dtype=np.int32) + 1,
    }
    context_cls = importlib.import_module(V2_MODULE).LogitsContext
    fields = [field.name for field in dataclasses.fields(context_cls)]
    unknown = [name for name in fields if name not in values]
    if unknown:
        raise AssertionError(f"LogitsContext has fields this probe does not know: {unknown}")
    return context_cls(**{name: values[name] for name in fields})


def check_apply_v2(context: dict) -> str:
    """12 steps of Model Runner V2's calls, with requests joining, leaving and a recycled slot."""
    import numpy as np
    import torch

    from ead.samplers.vllm_processors import schedule_extra_args
    from ead.schedule import build_schedule

    two_stage = build_schedule(TWO_STAGE)
    vocab, max_num_reqs = 16, 6
    req_states = v2_request_state(max_num_reqs, vocab)
    cls = importlib.import_module(V2_LOADER)._load_v2_logitsprocs_by_fqcns([FQCN])[0]
    processor = cls(SimpleNamespace(), req_states)
    # slot -> (extra_args or None, prompt length, output tokens so far); the plan: step -> joins / leaves
    live: dict[int, list] = {}
    joins = {0: [(0, EAD_A, 5), (1, None, 3), (2, EAD_B, 9), (3, "two_stage", 4)],
             4: [(4, EAD_C, 2)], 6: [(0, None, 6)], 9: [(1, EAD_C, 7)]}
    leaves = {6: [0], 9: [1], 11: [2]}
    generator = torch.Generator().manual_seed(0)
    worst = 0.0
    checked_rows = 0
    for step in range(12):
        for slot in leaves.get(step, []):
            live.pop(slot)
        if step in joins:
            for slot, extra_args, prompt_length in joins[step]:
                args = schedule_extra_args(two_stage, step=2) if extra_args == "two_stage" else extra_args
                expected_uses = args is not None
                if processor.add_request(slot, ead_sampling_params(1.0, args)) is not expected_uses:
                    raise AssertionError(f"add_request(slot {slot}) should return {expected_uses}")
                req_states.prompt_len.np[slot] = prompt_length
                live[slot] = [extra_args, prompt_length, 0]
            req_states.prompt_len.copy_to_uva()
            processor.apply_staged_writes()  # vLLM >= 0.34 calls it only on steps that admit requests
        slots = sorted(live, key=lambda s: (s * 7 + step) % 5)  # rows in another order than slots, changing per step
        positions = [live[s][1] - 1 + live[s][2] for s in slots]  # logits at input position pos predict t = pos+1-len
        logits = torch.randn(len(slots), vocab, generator=generator) * 3
        got = processor.apply(logits.clone(), v2_context(slots, positions))
        for row, slot in enumerate(slots):
            extra_args, _, t = live[slot]
            if extra_args is None:
                tau = 1.0
            elif extra_args == "two_stage":
                tau = float(two_stage.temperatures(np.array([t]), step=2)[0])
            else:
                tau = formula_tau(extra_args, t)
            want = logits[row] / torch.tensor(tau, dtype=torch.float64).to(torch.float32)
            error = ((got[row] - want).abs() / want.abs().clamp_min(1e-30)).max().item()
            if extra_args is None and not torch.equal(got[row], logits[row]):
                raise AssertionError(f"step {step}: slot {slot} without EAD was changed")
            if error > 2.0 ** -23:  # one float32 rounding of the quotient
                raise AssertionError(f"step {step}: slot {slot} (t={t}, {extra_args}) off the formula by {error:.3g}")
            worst = max(worst, error)
            checked_rows += 1
        for slot in live:
            live[slot][2] += 1
    return f"{checked_rows} rows over 12 steps equal the formula (largest relative difference {worst:.2g})"


CHECKS = {
    "registers_no_plugin": (None, check_registers_no_plugin),
    "plugin_loader_v1": ("v1", lambda c: check_plugin_loader("v1")),
    "plugin_loader_v2": ("v2", lambda c: check_plugin_loader("v2")),
    "fqcn_loader_v1": ("v1", lambda c: check_fqcn_loader("v1")),
    "fqcn_loader_v2": ("v2", lambda c: check_fqcn_loader("v2")),
    "entry_point_opt_in": ("v2", check_entry_point_opt_in),
    "params_validator": ("v2", check_params_validator),
    "apply_v2": ("v2", check_apply_v2),
}


def main() -> int:
    result = {"vllm": None, "vllm_path": None, "torch": None, "interfaces": [], "checks": {}, "tracebacks": {}}
    for dist in ("vllm", "torch"):
        try:
            result[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    vllm = module_or_none("vllm")
    result["vllm_path"] = str(Path(vllm.__file__).parent) if vllm else None
    result["interfaces"] = [runner for runner, module in (("v1", V1_MODULE), ("v2", V2_MODULE))
                            if module_or_none(module) is not None]
    context: dict = {}
    for name, (runner, check) in CHECKS.items():
        if runner is not None and runner not in result["interfaces"]:
            result["checks"][name] = {"status": "not applicable", "detail": f"this release has no {runner} interface"}
            continue
        start = time.perf_counter()
        try:
            detail = check(context)
            status = "passed"
        except Exception as error:  # recorded per check: one failure must not hide the others
            status, detail = "failed", f"{type(error).__name__}: {error}"
            result["tracebacks"][name] = traceback.format_exc()[-3000:]
        result["checks"][name] = {"status": status, "detail": detail,
                                  "seconds": round(time.perf_counter() - start, 3)}
    print(json.dumps(result))
    return 0 if all(check["status"] != "failed" for check in result["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
