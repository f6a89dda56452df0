"""Temperature schedules: what temperature each response token is sampled at.

Every sampler in this package takes "a schedule". A schedule maps (response position t, RL global step s)
to a temperature. Positions are 0-based and count response tokens only (the prompt is not counted).

* ``FixedTemperature(tau)``: tau everywhere (standard temperature sampling).
* ``TwoStageTemperature(tau_early, tau_late, switch)``: one temperature before position ``switch``, another after
  (the premise probe's "hot early" and "cold late" samplers).
* ``LinearAnneal(tau_max, tau_min, length, warmup)``: tau = 1 before ``warmup``, then a straight line from
  ``tau_max`` down to ``tau_min`` over ``length`` positions, ``tau_min`` after (step-independent): EAD's "hot early,
  cold late" without its exponential shape.
* ``EADMeanTemperature(..., length)``: a fixed temperature per step, equal to EAD's mean tau_t over positions
  [0, ``length``) at that step: EAD's average heat without its shape.
* ``EntropyAwareTemperature(mode, tau_low, tau_high, ...)``: per token, from the policy's own entropy there (hotter
  where it is uncertain, colder where it is sure): the paper's future work. It needs the logits, so samplers call
  :meth:`Schedule.token_temperatures` (every schedule has it; the position-only ones broadcast ``temperatures``).
* ``AnnealedSchedule(...)``: Exploratory Annealed Decoding (EAD, paper Sec. 4)::

      tau_t = 1                                                   for t < c (warm-up)
      tau_t = max(1 + tau_max - exp(t / (decay_scale * d_s)), tau_min)   otherwise
      d_s   = min(d0 + step_factor * s, d_max)                    (global-step-aware decay)

  ``decay_scale = 1`` is the paper's formula. The authors' code divides by ``20 * d_s``; set
  ``decay_scale = 20`` to reproduce that reading (see docs/method.md, "Where we differ from the reference code").
* ``EADLinear``, ``EADTwoStage``, ``EADMeanMatched`` (``ead_linear``, ``ead_two_stage``, ``ead_mean_matched``): the
  authors' revised schedule-shape ablation (docs/revisions.md). Same parameters as EAD, and like EAD they grow with
  the RL step through d_s: in units of EAD's effective decay D = decay_scale * d_s, linear reaches tau_min at t = D,
  two-stage switches from tau_max to tau_min at t = D / 2, mean-matched is the time-average of EAD over [0, D]. The
  ``linear``, ``two_stage`` and ``ead_mean`` schedules above are our fixed-length variants.

Schedules whose parameters are EAD's (``tau_max``, ``tau_min``, ``d0``, ...) say so with ``takes_ead_defaults = True``:
a config gives them the top-level ``ead:`` block's values for the parameters it does not set.

The arithmetic lives in one vectorised function, :func:`annealed_temperature`, which accepts numpy arrays,
torch tensors or Python scalars, broadcasts per-row parameters against positions, and is shared by the
HF and vLLM samplers so that every engine computes bit-for-bit the same temperatures.
"""

from __future__ import annotations

import functools
import math
import numbers
import sys
from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "AnnealedSchedule",
    "EADLinear",
    "EADMeanMatched",
    "EADMeanTemperature",
    "EADTwoStage",
    "EntropyAwareTemperature",
    "FixedTemperature",
    "LinearAnneal",
    "Schedule",
    "SCHEDULES",
    "TwoStageTemperature",
    "annealed_temperature",
    "build_schedule",
    "checked_positions",
    "checked_schedule",
    "checked_step",
    "register_schedule",
    "resolve_schedule",
    "step_decay",
]


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch")


def checked_step(step):
    """``step`` if it is an RL global step: an integer >= 0 (numpy integers too), or an integer array / tensor of them
    (a tensor's values are not inspected: that would synchronise a GPU at every decoding step). ValueError naming
    ``step`` otherwise: a negative step would make d_s = d0 + step_factor * s shrink, even below 0, and the
    temperatures rise above tau_max."""
    if _is_torch(step):
        if step.is_floating_point() or step.dtype.is_complex:
            raise ValueError(f"step must be an integer RL step >= 0, got a {step.dtype} tensor")
        return step
    if isinstance(step, np.ndarray):
        if step.dtype.kind not in "iu":
            raise ValueError(f"step must be an integer RL step >= 0, got an array of dtype {step.dtype}")
        if step.size and step.min() < 0:
            raise ValueError(f"step must be >= 0 (the RL global step), got an array holding {step.min()}")
        return step
    if isinstance(step, bool) or not isinstance(step, numbers.Integral):
        raise ValueError(f"step must be an integer RL step >= 0, got {step!r}")
    if step < 0:
        raise ValueError(f"step must be >= 0 (the RL global step), got {step}")
    return step


def checked_schedule(schedule):
    """``schedule`` if it is a Schedule; ValueError naming ``schedule`` otherwise (a mapping: build it first). The one
    check of every public entry point that takes a schedule (the HF processor and sampler, vLLM's extra_args)."""
    if not isinstance(schedule, Schedule):
        hint = " (build one with ead.schedule.build_schedule)" if isinstance(schedule, dict) else ""
        raise ValueError(f"schedule must be a Schedule (e.g. ead.schedule.AnnealedSchedule()), got "
                         f"{type(schedule).__name__} {schedule!r}{hint}")
    return schedule


def checked_positions(positions):
    """``positions`` as a schedule reads them: 0-based response positions, an integer >= 0, a numpy array, a torch
    tensor (passed as is: the samplers' hot path), or any other array-like of numbers (a list, a range: made a numpy
    array). ValueError naming ``positions`` for text, non-numbers or a negative position."""
    if _is_torch(positions):
        return positions
    if isinstance(positions, (str, bytes)) or not (isinstance(positions, (numbers.Real, np.ndarray))
                                                   or hasattr(positions, "__len__")):
        raise ValueError(f"positions must be a response position (an integer >= 0) or an array-like of them, got "
                         f"{positions!r}")
    if isinstance(positions, numbers.Real) and not isinstance(positions, bool):
        if not positions >= 0:
            raise ValueError(f"positions must be >= 0 (0-based response positions), got {positions!r}")
        if not float(positions).is_integer():
            raise ValueError(f"positions must be whole numbers (token positions), got {positions!r}")
        return positions
    array = np.asarray(positions)
    if array.dtype.kind not in "iuf":
        raise ValueError(f"positions must be numbers (response positions), got an array-like of dtype {array.dtype}")
    if array.size and not array.min() >= 0:
        raise ValueError(f"positions must be >= 0 (0-based response positions), got one of {array.min()!r}")
    if array.dtype.kind == "f" and array.size and not np.all(array == np.floor(array)):
        fractional = array[array != np.floor(array)].flat[0].item()
        raise ValueError(f"positions must be whole numbers (token positions), got one of {fractional!r}")
    return array


def step_decay(step, d0: float, step_factor: float, d_max: float):
    """Global-step-aware decay ``d_s = min(d0 + step_factor * s, d_max)`` (scalar or array); ``step`` an integer >= 0
    (:func:`checked_step`)."""
    step = checked_step(step)
    if _is_torch(step):
        return (d0 + step_factor * step).clamp(max=d_max)
    if isinstance(step, np.ndarray):
        return np.minimum(d0 + step_factor * step, d_max)
    return min(d0 + step_factor * step, d_max)


# Largest x with math.exp(x) finite (log of the largest float, 709.78...).
_MAX_EXP_ARG = math.log(sys.float_info.max)


def annealed_temperature(positions, tau_max, tau_min, decay, warmup):
    """EAD temperature at 0-based response ``positions`` for an *effective* decay ``decay``.

    ``decay`` already contains the step (d_s) and any decay_scale factor. All arguments broadcast, so a
    batch with per-row parameters passes ``positions`` of shape (B,) and parameters of shape (B,).
    Returns the same array type as ``positions`` (numpy, torch, or float for scalars).
    """
    if _is_torch(positions):
        import torch

        t = positions.to(torch.float64)
        tau_max, tau_min, decay, warmup = (
            torch.as_tensor(a, dtype=torch.float64, device=t.device) for a in (tau_max, tau_min, decay, warmup)
        )
        annealed = torch.maximum(1.0 + tau_max - torch.exp(t / decay), tau_min)
        return torch.where(t < warmup, torch.ones_like(annealed), annealed)
    if isinstance(positions, np.ndarray) or any(isinstance(a, np.ndarray) for a in (tau_max, tau_min, decay, warmup)):
        t = np.asarray(positions, dtype=np.float64)
        with np.errstate(over="ignore"):  # exp overflows to inf far past the floor; the max() makes it tau_min
            annealed = np.maximum(1.0 + np.asarray(tau_max) - np.exp(t / np.asarray(decay)), tau_min)
        return np.where(t < warmup, 1.0, annealed)
    if positions < warmup:
        return 1.0
    exponent = positions / decay
    if exponent > _MAX_EXP_ARG:  # math.exp raises OverflowError here; exp(t/d) is far above 1 + tau_max anyway
        return float(tau_min)
    return float(max(1.0 + tau_max - math.exp(exponent), tau_min))


class Schedule:
    """Interface: ``temperatures(positions, step=0)`` -> temperatures with the type/shape of ``positions``, and
    ``token_temperatures(log_probs, position, step=0)`` -> one temperature per row of a batch's tau = 1
    log-probabilities at one response position (what a sampler calls; schedules that read the logits override it)."""

    name: ClassVar[str]
    #: Whether the temperature depends on the logits (not only on position and step).
    reads_logits: ClassVar[bool] = False
    #: Whether parameters the config leaves out come from its top-level ``ead`` block (EAD and the shapes built on its
    #: parameters), see :func:`resolve_schedule`.
    takes_ead_defaults: ClassVar[bool] = False

    def temperatures(self, positions, step: int = 0):  # pragma: no cover - interface
        raise NotImplementedError

    def token_temperatures(self, log_probs, position: int, step: int = 0):
        """(batch,) float64 tensor of the temperature of each row at response ``position``."""
        import torch

        return torch.full(log_probs.shape[:-1], float(self.temperatures(position, step)), dtype=torch.float64,
                          device=log_probs.device)

    def to_dict(self) -> dict:
        """Parameters plus ``name``; ``build_schedule(s.to_dict())`` rebuilds an equal schedule."""
        return {"name": self.name, **asdict(self)}


SCHEDULES: dict[str, type[Schedule]] = {}


#: Parameters that may be +inf: d_max (no cap on the decay).
_MAY_BE_INFINITE = frozenset({"d_max"})


def _parameter_problems(schedule: Schedule) -> list[str]:
    """Why the parameters of ``schedule`` (a dataclass) cannot be what their annotations say (float: a finite number,
    numpy's included; int: an integer, numpy's included; str), one line each naming the parameter and its value. A
    numpy scalar is replaced by the Python number it holds; a bool is not a number. YAML writes 2 for 2.0, so an
    int is a float."""
    problems = []
    for field in fields(schedule):
        value = getattr(schedule, field.name)
        kind = field.type if isinstance(field.type, str) else field.type.__name__
        if kind == "float":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                problems.append(f"{field.name} must be a number, got {value!r}")
            elif math.isnan(value) or (math.isinf(value) and not (value > 0 and field.name in _MAY_BE_INFINITE)):
                problems.append(f"{field.name} must be a finite number, got {float(value)!r}")
            elif isinstance(value, np.generic):
                object.__setattr__(schedule, field.name, value.item())
        elif kind == "int":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                problems.append(f"{field.name} must be an integer, got {value!r}")
            elif isinstance(value, np.generic):
                object.__setattr__(schedule, field.name, int(value))
        elif kind == "str" and not isinstance(value, str):
            problems.append(f"{field.name} must be a string, got {value!r}")
    return problems


def _checked_construction(cls: type[Schedule]) -> None:
    """Every registered schedule checks its parameters' types when built, directly or through
    :func:`build_schedule`, before its own range checks (which would otherwise fail deep: '>' between str and
    float), and checks ``positions`` and ``step`` at every :meth:`Schedule.temperatures` call."""
    own_post_init = cls.__dict__.get("__post_init__") or getattr(cls, "__post_init__", None)
    if not getattr(own_post_init, "checks_types", False):
        def __post_init__(self):
            problems = _parameter_problems(self)
            if problems:
                raise ValueError(f"{self.name} schedule: " + "; ".join(problems))
            if own_post_init is not None:
                own_post_init(self)

        __post_init__.checks_types = True
        cls.__post_init__ = __post_init__
    temperatures = cls.temperatures
    if not getattr(temperatures, "checks_inputs", False):
        @functools.wraps(temperatures)
        def checked_temperatures(self, positions, step: int = 0):
            return temperatures(self, checked_positions(positions), checked_step(step))

        checked_temperatures.checks_inputs = True
        cls.temperatures = checked_temperatures


def register_schedule(name: str):
    """Class decorator adding a schedule to the registry under ``name`` (verl-style registry); the class then checks
    its parameters when built and its inputs when called (:func:`_checked_construction`)."""

    def decorator(cls):
        if name in SCHEDULES:
            raise ValueError(f"Schedule {name!r} is already registered by {SCHEDULES[name].__name__}")
        cls.name = name
        _checked_construction(cls)
        SCHEDULES[name] = cls
        return cls

    return decorator


@register_schedule("fixed")
@dataclass(frozen=True)
class FixedTemperature(Schedule):
    """Standard temperature sampling at a constant ``tau``."""

    tau: float = 1.0

    def __post_init__(self):
        if not self.tau > 0:
            raise ValueError(f"fixed schedule: tau must be > 0, got tau={self.tau}")

    def temperatures(self, positions, step: int = 0):
        if _is_torch(positions):
            import torch

            return torch.full(positions.shape, float(self.tau), dtype=torch.float64, device=positions.device)
        if isinstance(positions, np.ndarray):
            return np.full(positions.shape, float(self.tau))
        return float(self.tau)


@dataclass(frozen=True)
class _EADParameters(Schedule):
    """EAD's parameters and the CPU testbed's defaults for them, shared by EAD and the schedules built on them."""

    takes_ead_defaults: ClassVar[bool] = True
    tau_max: float = 1.2
    tau_min: float = 0.1
    d0: float = 25.0
    step_factor: float = 5.0
    d_max: float = 40000.0
    warmup: int = 0
    decay_scale: float = 1.0


@register_schedule("ead")
@dataclass(frozen=True)
class AnnealedSchedule(_EADParameters):
    """Exploratory Annealed Decoding: hot early, cool late, warm-up at tau = 1, decay growing with step.

    The defaults are the CPU testbed's (configs/config.yaml, a test keeps them equal): the paper's values except the
    warm-up, c = 0 for countdown's ~32-token responses (the paper's c = 10 at 20x compressed time); the paper profile
    sets c = 10 and decay_scale 20.
    """

    def __post_init__(self):
        problems = []
        if not self.tau_min > 0:
            problems.append(f"tau_min must be > 0, got tau_min={self.tau_min}")
        if self.tau_min > self.tau_max:
            problems.append(f"tau_min must be <= tau_max, got tau_min={self.tau_min} > tau_max={self.tau_max}")
        if not self.d0 > 0:
            problems.append(f"d0 must be > 0, got d0={self.d0}")
        if self.step_factor < 0:
            problems.append(f"step_factor must be >= 0, got step_factor={self.step_factor}")
        if self.d_max < self.d0:
            problems.append(f"d_max must be >= d0, got d_max={self.d_max} < d0={self.d0}")
        if self.warmup < 0:
            problems.append(f"warmup (c) must be >= 0, got warmup={self.warmup}")
        if not self.decay_scale > 0:
            problems.append(f"decay_scale must be > 0, got decay_scale={self.decay_scale}")
        if problems:
            raise ValueError("ead schedule: " + "; ".join(problems))

    def decay(self, step=0):
        """d_s for global step ``step`` (scalar or array), *without* decay_scale."""
        return step_decay(step, self.d0, self.step_factor, self.d_max)

    def effective_decay(self, step=0):
        """The divisor of t in the exponent: ``decay_scale * d_s``."""
        return self.decay_scale * self.decay(step)

    def temperatures(self, positions, step: int = 0):
        return annealed_temperature(positions, self.tau_max, self.tau_min, self.effective_decay(step), self.warmup)


@register_schedule("two_stage")
@dataclass(frozen=True)
class TwoStageTemperature(Schedule):
    """``tau_early`` for positions t < ``switch``, ``tau_late`` from there on (step-independent).

    The probe of the paper's premise that heat helps early and cold helps late: "hot early" (tau_early > 1,
    tau_late = 1) and "cold late" (tau_early = 1, tau_late < 1) separate the two halves of EAD's shape.
    """

    tau_early: float
    tau_late: float
    switch: int

    def __post_init__(self):
        if not (self.tau_early > 0 and self.tau_late > 0):
            raise ValueError(f"two_stage schedule: temperatures must be > 0, got tau_early={self.tau_early}, "
                             f"tau_late={self.tau_late}")
        if self.switch < 0:
            raise ValueError(f"two_stage schedule: switch must be >= 0, got switch={self.switch}")

    def temperatures(self, positions, step: int = 0):
        if _is_torch(positions):
            import torch

            early, late = (torch.tensor(float(tau), dtype=torch.float64, device=positions.device)
                           for tau in (self.tau_early, self.tau_late))
            return torch.where(positions < self.switch, early, late)
        if isinstance(positions, np.ndarray):
            return np.where(positions < self.switch, float(self.tau_early), float(self.tau_late))
        return float(self.tau_early if positions < self.switch else self.tau_late)


def _constant_like(positions, tau: float):
    """``tau`` in the type and shape of ``positions`` (torch float64, numpy, or a float)."""
    if _is_torch(positions):
        import torch

        return torch.full(positions.shape, float(tau), dtype=torch.float64, device=positions.device)
    if isinstance(positions, np.ndarray):
        return np.full(positions.shape, float(tau))
    return float(tau)


@register_schedule("linear")
@dataclass(frozen=True)
class LinearAnneal(Schedule):
    """tau = 1 for t < ``warmup``; then ``tau_max - (tau_max - tau_min) * (t - warmup) / length``, floored at
    ``tau_min`` from ``warmup + length`` on (step-independent)."""

    tau_max: float
    tau_min: float
    length: int
    warmup: int = 0

    def __post_init__(self):
        problems = []
        if not 0 < self.tau_min <= self.tau_max:
            problems.append(f"need 0 < tau_min <= tau_max, got tau_min={self.tau_min}, tau_max={self.tau_max}")
        if self.length < 1:
            problems.append(f"length must be >= 1, got length={self.length}")
        if self.warmup < 0:
            problems.append(f"warmup must be >= 0, got warmup={self.warmup}")
        if problems:
            raise ValueError("linear schedule: " + "; ".join(problems))

    def temperatures(self, positions, step: int = 0):
        if _is_torch(positions):
            import torch

            t = positions.to(torch.float64)
            fraction = ((t - self.warmup) / self.length).clamp(0.0, 1.0)
            annealed = self.tau_max - (self.tau_max - self.tau_min) * fraction
            return torch.where(t < self.warmup, torch.ones_like(t), annealed)
        t = np.asarray(positions, dtype=np.float64)
        fraction = np.clip((t - self.warmup) / self.length, 0.0, 1.0)
        tau = np.where(t < self.warmup, 1.0, self.tau_max - (self.tau_max - self.tau_min) * fraction)
        return tau if isinstance(positions, np.ndarray) else float(tau)


@register_schedule("ead_mean")
@dataclass(frozen=True)
class EADMeanTemperature(_EADParameters):
    """At step s, one temperature for every position: the mean of EAD's tau_t (these EAD parameters) over positions
    [0, ``length``) at step s. The control for "is it EAD's shape, or only its average heat?"."""
    length: int = 32

    def __post_init__(self):
        if self.length < 1:
            raise ValueError(f"ead_mean schedule: length must be >= 1, got length={self.length}")
        _ = self.ead  # builds the AnnealedSchedule, whose checks validate the EAD parameters

    @property
    def ead(self) -> AnnealedSchedule:
        params = {key: value for key, value in asdict(self).items() if key != "length"}
        return AnnealedSchedule(**params)

    def mean_temperature(self, step: int = 0) -> float:
        return float(np.mean(self.ead.temperatures(np.arange(self.length), step)))

    def temperatures(self, positions, step: int = 0):
        return _constant_like(positions, self.mean_temperature(step))


@dataclass(frozen=True)
class _GrowingShape(_EADParameters):
    """The authors' revised schedule shapes (appendix "Schedule-Shape Ablation"; docs/revisions.md): EAD's parameters,
    a shape read in units of EAD's effective decay D = decay_scale * d_s, d_s = min(d0 + step_factor * s, d_max), so
    the shape stretches with the RL step as EAD does.

    The warm-up applies: tau = 1 for t < ``warmup`` (c), and the shape is evaluated at the absolute position t (not
    t - c), as for EAD. The revised text states c for EAD only (Algorithm 1); the authors' code applies it to every
    shape, returning the logits unscaled for len(token_ids) < warmup_period before any decay_mode branch
    (yangalan123/verl, verl/workers/rollout/vllm_rollout/annealed_sampling.py), and their shape ablation script sets
    warmup_period=10 for all four shapes. The shapes' own formulas in the text divide t by 20 d_s, the code's decay
    (decay_scale 20); with decay_scale 1 (the CPU testbed) D = d_s, so a shape keeps its relation to the EAD schedule
    it is compared with.
    """

    def __post_init__(self):
        _ = self.ead  # EAD's checks validate the parameters (messages name EAD's keys)

    @property
    def ead(self) -> AnnealedSchedule:
        """The EAD (negexp) schedule with these parameters, the shape's reference."""
        return AnnealedSchedule(**{field.name: getattr(self, field.name) for field in fields(_EADParameters)})

    def effective_decay(self, step=0):
        """D = decay_scale * d_s: the shapes' unit of length at RL step ``step``."""
        return self.ead.effective_decay(step)

    def shape(self, t: np.ndarray, decay: float) -> np.ndarray:  # pragma: no cover - interface
        """tau at float64 positions ``t`` (all >= warmup) for effective decay ``decay``."""
        raise NotImplementedError

    def temperatures(self, positions, step: int = 0):
        # One float64 numpy evaluation for scalars, arrays and tensors alike: the HF sampler (a position at a time)
        # and the vLLM processor (a batch of positions) get bit-identical temperatures.
        t = np.asarray(positions.cpu().numpy() if _is_torch(positions) else positions, dtype=np.float64)
        tau = np.where(t < self.warmup, 1.0, self.shape(t, float(self.effective_decay(step))))
        if _is_torch(positions):
            import torch

            return torch.as_tensor(tau, dtype=torch.float64, device=positions.device)
        return tau if isinstance(positions, np.ndarray) else float(tau)


@register_schedule("ead_linear")
@dataclass(frozen=True)
class EADLinear(_GrowingShape):
    """The authors' linear shape: tau_t = max(tau_max - (tau_max - tau_min) * t / D, tau_min), D = decay_scale * d_s:
    a straight line from tau_max at t = 0 to tau_min at t = D (20 d_s with the code's decay_scale 20), tau_min after.
    ``linear`` is our fixed-length, step-independent variant."""

    def shape(self, t, decay):
        return self.tau_max - (self.tau_max - self.tau_min) * np.clip(t / decay, 0.0, 1.0)


@register_schedule("ead_two_stage")
@dataclass(frozen=True)
class EADTwoStage(_GrowingShape):
    """The authors' two-stage shape: tau_max for t < D / 2, tau_min from there on, D = decay_scale * d_s (the switch at
    10 d_s with the code's decay_scale 20). ``two_stage`` is our step-independent variant with free temperatures."""

    def shape(self, t, decay):
        return np.where(t < decay / 2, float(self.tau_max), float(self.tau_min))


MEAN_READINGS = ("text", "code")


@register_schedule("ead_mean_matched")
@dataclass(frozen=True)
class EADMeanMatched(_GrowingShape):
    """The authors' entropy-budget control: one temperature, the time-average of EAD's negexp over [0, D].

    ``mean_of="text"`` (default) averages the negexp the revised text defines, max(1 + tau_max - e^(t/D), tau_min),
    floor included: with u* = ln(1 + tau_max - tau_min) (the floor's position in units of D),
    mean = (1 + tau_max - tau_min) (u* - 1) + 1 + tau_min if u* < 1, else 1 + tau_max - (e - 1). ``"code"`` is the
    authors' code's closed form, the mean of the unfloored 1 + tau_max - e^(t/D), max(1 + tau_max - (e - 1), tau_min):
    0.482 instead of 0.558 at (1.2, 0.1). Because negexp is a function of t / D, the average over [0, D] is the same
    at every step: "growing with d_s" leaves this shape's temperature unchanged (only EAD's length scale grows). The
    warm-up still sets tau = 1 for t < c (as the authors' code does); the average itself is over negexp alone.
    ``ead_mean`` is our variant: EAD's mean over a fixed number of positions, which changes with the step.
    """

    mean_of: str = "text"

    def __post_init__(self):
        if self.mean_of not in MEAN_READINGS:
            raise ValueError(f"ead_mean_matched schedule: mean_of must be one of {MEAN_READINGS}, got {self.mean_of!r}")
        super().__post_init__()

    def mean_temperature(self) -> float:
        top = 1.0 + self.tau_max
        if self.mean_of == "code":
            return max(top - (math.e - 1.0), self.tau_min)
        floor_at = math.log(top - self.tau_min)  # where negexp meets tau_min, in units of D
        if floor_at >= 1.0:
            return top - (math.e - 1.0)
        return (top - self.tau_min) * (floor_at - 1.0) + 1.0 + self.tau_min

    def shape(self, t, decay):
        return np.full(t.shape, self.mean_temperature())


ENTROPY_MODES = ("gate", "edt")


@register_schedule("entropy_aware")
@dataclass(frozen=True)
class EntropyAwareTemperature(Schedule):
    """Per token, from H_t, the entropy (nats) of the policy's tau = 1 distribution at that token:

    * ``mode="gate"``: ``tau_high`` where H_t >= ``gate``, ``tau_low`` elsewhere (heat only the uncertain tokens,
      the forks; cool the rest);
    * ``mode="edt"``: ``tau_high * base ** (theta / H_t)``, clipped to [``tau_low``, ``tau_high``]: entropy-based
      dynamic temperature (Zhang et al. 2024, "EDT"), near ``tau_high`` where the policy is uncertain, falling to
      ``tau_low`` as it grows sure (0 < base < 1).

    Position- and step-independent; ``temperatures`` alone cannot say a token's temperature (it has no logits), so
    it raises, and every sampler calls :meth:`token_temperatures`.
    """

    reads_logits: ClassVar[bool] = True
    mode: str = "gate"
    tau_low: float = 0.6
    tau_high: float = 1.2
    gate: float = 0.5
    base: float = 0.8
    theta: float = 0.1

    def __post_init__(self):
        problems = []
        if self.mode not in ENTROPY_MODES:
            problems.append(f"mode must be one of {ENTROPY_MODES}, got {self.mode!r}")
        if not 0 < self.tau_low <= self.tau_high:
            problems.append(f"need 0 < tau_low <= tau_high, got tau_low={self.tau_low}, tau_high={self.tau_high}")
        if not self.gate >= 0:
            problems.append(f"gate must be >= 0 nats, got gate={self.gate}")
        if not 0 < self.base < 1:
            problems.append(f"base must be in (0, 1), got base={self.base}")
        if not self.theta > 0:
            problems.append(f"theta must be > 0, got theta={self.theta}")
        if problems:
            raise ValueError("entropy_aware schedule: " + "; ".join(problems))

    def temperatures(self, positions, step: int = 0):
        raise ValueError("entropy_aware schedule: the temperature of a token depends on the policy's entropy there; "
                         "call token_temperatures(log_probs, position, step) with the logits")

    def temperature_of_entropy(self, entropy):
        """The temperature at entropy ``entropy`` (nats; a float64 tensor)."""
        import torch

        if self.mode == "gate":
            high, low = (torch.tensor(tau, dtype=torch.float64, device=entropy.device)
                         for tau in (self.tau_high, self.tau_low))
            return torch.where(entropy >= self.gate, high, low)
        exponent = self.theta / entropy.clamp(min=1e-12)
        return (self.tau_high * torch.pow(torch.tensor(self.base, dtype=torch.float64), exponent)).clamp(
            self.tau_low, self.tau_high)

    def token_temperatures(self, log_probs, position: int, step: int = 0):
        import torch

        from ead.metrics import entropy_from_log_probs

        return self.temperature_of_entropy(entropy_from_log_probs(log_probs.to(torch.float64)))


def _parameters(cls: type[Schedule]) -> dict:
    """A schedule class's parameters (its dataclass fields; class-level flags such as ``reads_logits`` are not)."""
    return {field.name: field for field in fields(cls)}


def build_schedule(spec: dict | Schedule) -> Schedule:
    """Build a schedule from ``{"name": <registered name>, **params}``; unknown names list the known ones, unknown
    parameters the schedule's own, and a parameter of the wrong type is named with its value."""
    if isinstance(spec, Schedule):
        return spec
    if not isinstance(spec, dict) or "name" not in spec:
        raise ValueError(f"A schedule spec must be a mapping with a 'name' key, got {spec!r}")
    params = {k: v for k, v in spec.items() if k != "name"}
    name = spec["name"]
    if name not in SCHEDULES:
        raise ValueError(f"Unsupported schedule {name!r}. Supported schedules are: {sorted(SCHEDULES)}")
    cls = SCHEDULES[name]
    known = set(_parameters(cls))
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"Unknown parameter(s) {unknown} for schedule {name!r}; known: {sorted(known)}")
    missing = sorted(key for key, field in _parameters(cls).items()
                     if key not in params and field.default is MISSING and field.default_factory is MISSING)
    if missing:
        raise ValueError(f"{name} schedule: missing parameter(s) {missing}")
    return cls(**params)


def resolve_schedule(spec: dict, ead_defaults: dict) -> dict:
    """The one place EAD's shared defaults apply: ``spec`` (a schedule document, ``{"name": ..., **params}``) with,
    for a schedule that takes them (``takes_ead_defaults``: EAD and the shapes built on its parameters), every
    parameter it leaves out taken from ``ead_defaults`` (the config's top-level ``ead`` block). Other schedules are
    returned as written. Raises ValueError (via :func:`build_schedule`) for a document that does not build."""
    if not isinstance(spec, dict) or spec.get("name") not in SCHEDULES:
        build_schedule(spec)  # raises, naming the problem
    cls = SCHEDULES[spec["name"]]
    resolved = dict(spec)
    if cls.takes_ead_defaults:
        parameters = _parameters(cls)
        resolved = {"name": spec["name"], **{key: value for key, value in ead_defaults.items() if key in parameters},
                    **{key: value for key, value in spec.items() if key != "name"}}
    build_schedule(resolved)
    return resolved
