"""The EAD schedule against hand-computed values (paper Sec. 4, reference-code decay scale); every public schedule
entry point refuses bad input naming the parameter and value (ead.schedule, the HF processor and sampler, the vLLM
extra_args); and property tests over the parameters of every registered schedule: finite temperatures, within their
bounds after the warm-up, never rising with the position there."""

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ead.samplers.hf import ScheduleLogitsProcessor
from ead.samplers.vllm_processors import schedule_extra_args
from ead.schedule import (
    SCHEDULES,
    AnnealedSchedule,
    EADLinear,
    EntropyAwareTemperature,
    FixedTemperature,
    annealed_temperature,
    build_schedule,
    step_decay,
)

PAPER = AnnealedSchedule(tau_max=1.2, tau_min=0.1, d0=25, step_factor=5, d_max=40000, warmup=10, decay_scale=1)


def test_warmup_positions_use_tau_one():
    assert all(PAPER.temperatures(t) == 1.0 for t in range(10))
    # The first annealed position: 1 + 1.2 - e^(10/25) = 2.2 - 1.4918246976 = 0.7081753024
    assert PAPER.temperatures(10) == pytest.approx(0.7081753024, abs=1e-10)


def test_floor_at_tau_min():
    # t = 18: 2.2 - e^0.72 = 2.2 - 2.0544332106 = 0.1455667894, above the floor
    assert PAPER.temperatures(18) == pytest.approx(0.1455667894, abs=1e-10)
    # t = 19: 2.2 - e^0.76 = 0.0617... < 0.1, so the floor holds
    assert PAPER.temperatures(19) == 0.1
    assert PAPER.temperatures(5000) == 0.1


def test_decay_grows_with_step_and_is_capped():
    assert PAPER.decay(0) == 25
    assert PAPER.decay(100) == 525
    assert PAPER.decay(7995) == 40000  # 25 + 5 * 7995 = 40000 exactly
    assert PAPER.decay(10_000) == 40000  # 25 + 50000 = 50025 is capped
    # At step 100 the floor is reached only at t = 390: e^(389/525) = 2.0980 -> 0.1020; e^(390/525) = 2.1020 -> floor
    assert PAPER.temperatures(389, step=100) == pytest.approx(2.2 - math.exp(389 / 525), abs=1e-12)
    assert PAPER.temperatures(389, step=100) > 0.1
    assert PAPER.temperatures(390, step=100) == 0.1


def test_decay_scale_twenty_reproduces_reference_code():
    reference = AnnealedSchedule(decay_scale=20)  # defaults: tau_max 1.2, tau_min 0.1, d0 25, c 10
    assert reference.effective_decay(0) == 500
    # tau stays above 1 until t = 91: 2.2 - e^(91/500) = 1.000386..., 2.2 - e^(92/500) = 0.997984...
    assert reference.temperatures(91) == pytest.approx(1.0003858, abs=1e-6)
    assert reference.temperatures(92) == pytest.approx(0.9979842, abs=1e-6)
    # Versus the paper reading at the same t: already at the floor
    assert PAPER.temperatures(92) == 0.1


def test_numpy_torch_and_scalar_agree():
    positions = np.arange(0, 600)
    as_numpy = PAPER.temperatures(positions, step=7)
    as_torch = PAPER.temperatures(torch.arange(0, 600), step=7)
    as_scalar = np.array([PAPER.temperatures(int(t), step=7) for t in positions])
    assert isinstance(as_torch, torch.Tensor) and as_torch.dtype == torch.float64
    # math.exp, numpy and torch may differ in the last bit of exp
    np.testing.assert_allclose(as_numpy, as_scalar, rtol=0, atol=1e-14)
    np.testing.assert_allclose(as_torch.numpy(), as_scalar, rtol=0, atol=1e-14)


@pytest.mark.parametrize("position", [710, 709.9, 5_000, 10**6, 1e300])
def test_far_past_the_floor_every_path_returns_tau_min(position):
    """t/d past 709.78 overflows exp(); every path must still return tau_min (the scalar one used to raise)."""
    args = dict(tau_max=1.0, tau_min=0.1, decay=1.0, warmup=0)
    scalar = annealed_temperature(position, **args)
    assert scalar == 0.1 and isinstance(scalar, float)
    with np.errstate(over="raise"):  # the numpy path must not warn either
        assert annealed_temperature(np.array([float(position)]), **args).tolist() == [0.1]
    assert annealed_temperature(torch.tensor([float(position)]), **args).tolist() == [0.1]


def test_per_row_parameters_broadcast():
    positions = torch.tensor([0, 12, 12, 300])
    tau = annealed_temperature(positions, tau_max=torch.tensor([1.2, 1.2, 1.5, 1.2], dtype=torch.float64),
                               tau_min=0.1, decay=torch.tensor([25.0, 25.0, 100.0, 500.0], dtype=torch.float64),
                               warmup=torch.tensor([10, 10, 10, 400]))
    expected = [1.0, 2.2 - math.exp(12 / 25), 2.5 - math.exp(12 / 100), 1.0]
    np.testing.assert_allclose(tau.numpy(), expected, rtol=0, atol=1e-12)


def test_fixed_temperature_is_a_constant_schedule():
    fixed = FixedTemperature(0.6)
    assert fixed.temperatures(0) == 0.6 and fixed.temperatures(10_000, step=50) == 0.6
    np.testing.assert_array_equal(fixed.temperatures(np.arange(5)), np.full(5, 0.6))
    assert torch.equal(fixed.temperatures(torch.arange(3)), torch.full((3,), 0.6, dtype=torch.float64))


def test_registry_round_trip_and_errors():
    assert build_schedule(PAPER.to_dict()) == PAPER
    assert build_schedule({"name": "fixed", "tau": 1.2}) == FixedTemperature(1.2)
    known = (r"\['ead', 'ead_linear', 'ead_mean', 'ead_mean_matched', 'ead_two_stage', 'entropy_aware', 'fixed', "
             r"'linear', 'two_stage'\]")
    with pytest.raises(ValueError, match=r"Unsupported schedule 'cosine'.*" + known):
        build_schedule({"name": "cosine"})
    with pytest.raises(ValueError, match=r"Unknown parameter\(s\) \['tau_maxx'\]"):
        build_schedule({"name": "ead", "tau_maxx": 1.2})


@pytest.mark.parametrize(
    "params, message",
    [
        ({"tau_min": 1.5, "tau_max": 1.2}, r"tau_min=1.5 > tau_max=1.2"),
        ({"d0": 0}, r"d0 must be > 0, got d0=0"),
        ({"warmup": -1}, r"warmup \(c\) must be >= 0, got warmup=-1"),
        ({"decay_scale": 0}, r"decay_scale must be > 0"),
        ({"tau": 0}, None),
    ],
)
def test_invalid_parameters_are_rejected(params, message):
    if "tau" in params:
        with pytest.raises(ValueError, match=r"tau must be > 0, got tau=0"):
            FixedTemperature(**params)
        return
    with pytest.raises(ValueError, match=message):
        AnnealedSchedule(**params)


def test_two_stage_switches_at_its_position_on_every_path():
    import torch

    from ead.schedule import TwoStageTemperature, build_schedule

    schedule = build_schedule({"name": "two_stage", "tau_early": 1.5, "tau_late": 0.3, "switch": 8})
    assert isinstance(schedule, TwoStageTemperature) and build_schedule(schedule.to_dict()) == schedule
    positions = np.arange(12)
    expected = [1.5] * 8 + [0.3] * 4
    assert [schedule.temperatures(int(t), step=40) for t in positions] == expected
    np.testing.assert_array_equal(schedule.temperatures(positions), expected)
    assert schedule.temperatures(torch.arange(12)).tolist() == expected
    with pytest.raises(ValueError, match="switch must be >= 0"):
        TwoStageTemperature(1.5, 0.3, -1)
    with pytest.raises(ValueError, match="temperatures must be > 0"):
        TwoStageTemperature(0.0, 0.3, 4)


def test_linear_anneal_values_and_engines_agree():
    schedule = build_schedule({"name": "linear", "tau_max": 1.2, "tau_min": 0.2, "length": 10, "warmup": 2})
    positions = np.arange(16)
    expected = [1.0, 1.0, *(1.2 - 0.1 * i for i in range(10)), 0.2, 0.2, 0.2, 0.2]
    np.testing.assert_allclose(schedule.temperatures(positions), expected, rtol=0, atol=1e-12)
    as_torch = schedule.temperatures(torch.arange(16)).numpy()
    as_scalars = [schedule.temperatures(int(t)) for t in positions]
    assert as_torch.tolist() == schedule.temperatures(positions).tolist() == as_scalars  # bit for bit
    assert schedule.temperatures(5, step=0) == schedule.temperatures(5, step=99)  # step-independent
    with pytest.raises(ValueError, match=r"linear schedule: need 0 < tau_min <= tau_max.*length must be >= 1"):
        build_schedule({"name": "linear", "tau_max": 0.5, "tau_min": 1.0, "length": 0})


def test_ead_mean_is_eads_mean_tau_per_step_at_every_position():
    params = {"tau_max": 1.2, "tau_min": 0.1, "d0": 25.0, "step_factor": 5.0, "warmup": 0}
    ead = AnnealedSchedule(**params)
    matched = build_schedule({"name": "ead_mean", **params, "length": 32})
    for step in (0, 7, 15):
        mean = sum(ead.temperatures(t, step) for t in range(32)) / 32  # brute force over positions
        values = matched.temperatures(np.arange(40), step)
        assert np.allclose(values, mean, rtol=0, atol=1e-12) and len(set(values.tolist())) == 1
        assert matched.temperatures(torch.arange(3), step).tolist() == [float(values[0])] * 3
    # EAD on 32 tokens is cold on average at step 0 and near 1 once d_s has grown
    assert matched.mean_temperature(0) < 0.6 < 1.0 < matched.mean_temperature(15) < 1.1
    with pytest.raises(ValueError, match="tau_min must be <= tau_max"):
        build_schedule({"name": "ead_mean", "tau_max": 0.5, "tau_min": 1.0})


def test_entropy_aware_temperature_follows_each_rows_entropy():
    """Per row, from that row's own tau = 1 distribution: a uniform row over 4 tokens (H = ln 4), a sure row
    (H ~ 0) and a two-way fork (H = ln 2); gate: hot at or above the gate; EDT: tau_high * base ** (theta / H),
    clipped to [tau_low, tau_high]."""
    probabilities = torch.tensor([[0.25, 0.25, 0.25, 0.25], [1.0 - 3e-9, 1e-9, 1e-9, 1e-9], [0.5, 0.5, 0.0, 0.0]],
                                 dtype=torch.float64)
    log_probs = probabilities.log()  # the fork's zeros are -inf: entropy must still be ln 2
    entropy = torch.tensor([math.log(4), 0.0, math.log(2)], dtype=torch.float64)
    gate = EntropyAwareTemperature(mode="gate", tau_low=0.6, tau_high=1.2, gate=0.69)
    assert gate.token_temperatures(log_probs, position=5).tolist() == [1.2, 0.6, 1.2]
    assert EntropyAwareTemperature(mode="gate", tau_low=0.6, tau_high=1.2, gate=0.7).token_temperatures(
        log_probs, 0).tolist() == [1.2, 0.6, 0.6]
    edt = EntropyAwareTemperature(mode="edt", tau_low=0.3, tau_high=1.5, base=0.8, theta=0.5)
    expected = [1.5 * 0.8 ** (0.5 / math.log(4)), 0.3, 1.5 * 0.8 ** (0.5 / math.log(2))]
    assert edt.token_temperatures(log_probs, 0).tolist() == pytest.approx(expected, rel=1e-9)
    assert expected[0] > expected[2] > 0.3  # hotter where less sure
    torch.testing.assert_close(-(probabilities * log_probs).nan_to_num().sum(-1), entropy, atol=1e-7, rtol=0)
    with pytest.raises(ValueError, match="depends on the policy's entropy"):
        gate.temperatures(3)
    # a position-only schedule broadcasts its tau_t over the rows
    assert AnnealedSchedule(warmup=0).token_temperatures(log_probs, 4, step=2).tolist() == [
        pytest.approx(AnnealedSchedule(warmup=0).temperatures(4, 2))] * 3
    assert build_schedule(gate.to_dict()) == gate


@pytest.mark.parametrize("params, message", [
    ({"mode": "sigmoid"}, "mode must be one of"), ({"tau_low": 1.5, "tau_high": 1.2}, "tau_low <= tau_high"),
    ({"base": 1.0}, r"base must be in \(0, 1\)"), ({"theta": 0}, "theta must be > 0"), ({"gate": -1}, "gate must be"),
])
def test_entropy_aware_parameters_are_checked(params, message):
    with pytest.raises(ValueError, match=message):
        EntropyAwareTemperature(**params)


# --- the authors' revised shapes (docs/revisions.md): expected values computed by hand from the appendix's formulas ---
# (tau_max, tau_min, d0, alpha, d_max) = (1.2, 0.1, 200, 5, 40000) as in the appendix, c = 10 and the code's decay
# scale 20: D = 20 d_s = 4000 at step 0, 20 * (200 + 5 * 100) = 14000 at step 100, 20 * 40000 = 800000 once capped.
REVISED = {"tau_max": 1.2, "tau_min": 0.1, "d0": 200, "step_factor": 5, "d_max": 40000, "warmup": 10,
           "decay_scale": 20}


@pytest.mark.parametrize("position, step, expected", [
    (5, 0, 1.0),                            # t < c: tau = 1
    (10, 0, 1.2 - 1.1 * 10 / 4000),         # 1.19725: the line starts from t = 0, not from c
    (2000, 0, 0.65),                        # half-way down at D / 2
    (3999, 0, 1.2 - 1.1 * 3999 / 4000),     # 0.100275
    (4000, 0, 0.1),                         # tau_min at t = D = 20 d_s
    (9000, 0, 0.1),                         # floored after
    (4000, 100, 1.2 - 1.1 * 4000 / 14000),  # 0.885714...: the line stretches with the step
    (7000, 100, 0.65),
    (400000, 10000, 0.65),                  # d_s capped at d_max: D = 800000
])
def test_revised_linear_reaches_tau_min_at_the_effective_decay(position, step, expected):
    schedule = build_schedule({"name": "ead_linear", **REVISED})
    assert schedule.temperatures(position, step) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("position, step, expected", [
    (9, 0, 1.0), (10, 0, 1.2), (1999, 0, 1.2), (2000, 0, 0.1), (3000, 0, 0.1),  # switch at D / 2 = 10 d_s = 2000
    (6999, 100, 1.2), (7000, 100, 0.1),                                          # D / 2 = 7000 at step 100
])
def test_revised_two_stage_switches_at_half_the_effective_decay(position, step, expected):
    schedule = build_schedule({"name": "ead_two_stage", **REVISED})
    assert schedule.temperatures(position, step) == expected


def test_revised_mean_matched_is_the_time_average_of_negexp():
    # The floored negexp max(2.2 - e^u, 0.1), u = t / D, meets the floor at u* = ln 2.1 = 0.741937; its mean over
    # [0, 1] is 2.2 u* - (e^u* - 1) + 0.1 (1 - u*) = 1.632262 - 1.1 + 0.025806 = 0.558068.
    by_hand = 2.2 * math.log(2.1) - (2.1 - 1) + 0.1 * (1 - math.log(2.1))
    assert by_hand == pytest.approx(0.558068, abs=1e-6)
    u = np.linspace(0.0, 1.0, 2_000_001)
    numeric = np.trapezoid(np.maximum(2.2 - np.exp(u), 0.1), u)  # the same mean by quadrature, independently
    schedule = build_schedule({"name": "ead_mean_matched", **REVISED})
    for position, step in ((10, 0), (3999, 0), (50, 100), (10**6, 10000)):
        assert schedule.temperatures(position, step) == pytest.approx(by_hand, abs=1e-12)
        assert schedule.temperatures(position, step) == pytest.approx(numeric, abs=1e-9)
    assert schedule.temperatures(9, 0) == 1.0  # warm-up
    # The authors' code: the unfloored mean, 1 + 1.2 - (e - 1) = 0.481718 (then floored at tau_min)
    code = build_schedule({"name": "ead_mean_matched", **REVISED, "mean_of": "code"})
    assert code.temperatures(100, 3) == pytest.approx(2.2 - (math.e - 1), abs=1e-12)
    # tau_min 0.6 (the revised 7B row): the floor is met at u* = ln 1.6; the code's 0.48 is floored to 0.6
    seven_b = {**REVISED, "tau_min": 0.6, "d0": 250}
    assert build_schedule({"name": "ead_mean_matched", **seven_b}).temperatures(100) == pytest.approx(
        2.2 * math.log(1.6) - 0.6 + 0.6 * (1 - math.log(1.6)), abs=1e-12)
    assert build_schedule({"name": "ead_mean_matched", **seven_b, "mean_of": "code"}).temperatures(100) == 0.6


def test_revised_shapes_on_the_testbed_scale_and_every_array_type():
    # decay_scale 1, d0 25, step factor 5 (the CPU testbed): D = 25 + 5 s, no warm-up
    testbed = {"tau_max": 1.2, "tau_min": 0.1, "d0": 25, "step_factor": 5}
    linear = build_schedule({"name": "ead_linear", **testbed})
    assert linear.temperatures(10, 1) == pytest.approx(1.2 - 1.1 * 10 / 30, abs=1e-12)
    assert build_schedule({"name": "ead_two_stage", **testbed}).temperatures(np.array([14, 15]), 1).tolist() == [
        1.2, 0.1]  # D / 2 = 15 at step 1
    positions = np.arange(0, 80)
    for name in ("ead_linear", "ead_two_stage", "ead_mean_matched"):
        schedule = build_schedule({"name": name, **REVISED, "warmup": 3})
        as_numpy = schedule.temperatures(positions * 100, step=7)
        as_torch = schedule.temperatures(torch.arange(0, 80) * 100, step=7)
        as_scalar = [schedule.temperatures(int(t) * 100, step=7) for t in positions]
        assert isinstance(as_torch, torch.Tensor) and as_torch.dtype == torch.float64
        assert as_numpy.tolist() == as_torch.tolist() == as_scalar, name


@pytest.mark.parametrize("name", ["ead_linear", "ead_two_stage", "ead_mean_matched"])
def test_revised_shapes_take_eads_parameters_and_checks(name):
    from ead.schedule import SCHEDULES

    assert SCHEDULES[name].takes_ead_defaults and SCHEDULES["ead"].takes_ead_defaults
    assert SCHEDULES["ead_mean"].takes_ead_defaults and not SCHEDULES["linear"].takes_ead_defaults
    schedule = build_schedule({"name": name, **REVISED})
    assert build_schedule(schedule.to_dict()) == schedule
    with pytest.raises(ValueError, match="tau_min must be <= tau_max"):
        build_schedule({"name": name, "tau_max": 0.5, "tau_min": 0.8})
    with pytest.raises(ValueError, match=r"Unknown parameter\(s\) \['takes_ead_defaults'\]"):
        build_schedule({"name": name, "takes_ead_defaults": False})


@pytest.mark.parametrize(("build", "message"), [
    (lambda: AnnealedSchedule(tau_max=math.nan), "ead schedule: tau_max must be a finite number, got nan"),
    (lambda: AnnealedSchedule(tau_max=math.inf), "ead schedule: tau_max must be a finite number, got inf"),
    (lambda: AnnealedSchedule(step_factor=math.nan), "ead schedule: step_factor must be a finite number, got nan"),
    (lambda: AnnealedSchedule(d_max=math.nan), "ead schedule: d_max must be a finite number, got nan"),
    (lambda: AnnealedSchedule(tau_max="1.2"), "ead schedule: tau_max must be a number, got '1.2'"),
    (lambda: AnnealedSchedule(warmup=2.5), "ead schedule: warmup must be an integer, got 2.5"),
    (lambda: AnnealedSchedule(warmup=True), "ead schedule: warmup must be an integer, got True"),
    (lambda: EADLinear(tau_min=math.nan), "ead_linear schedule: tau_min must be a finite number, got nan"),
    (lambda: build_schedule({"name": "fixed", "tau": math.inf}), "fixed schedule: tau must be a finite number"),
    (lambda: build_schedule({"name": "entropy_aware", "mode": 1}), "entropy_aware schedule: mode must be a string"),
])
def test_a_bad_parameter_is_refused_at_construction_naming_it(build, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build()


def test_numpy_scalars_are_numbers_and_an_infinite_cap_is_allowed():
    schedule = AnnealedSchedule(tau_max=np.float64(1.5), warmup=np.int64(10), d0=np.int32(25))
    assert (schedule.tau_max, schedule.warmup, schedule.d0) == (1.5, 10, 25)
    assert type(schedule.warmup) is int and type(schedule.tau_max) is float  # Python numbers: to_dict() is YAML-safe
    assert build_schedule({"name": "ead", "warmup": np.int64(10)}).warmup == 10
    uncapped = AnnealedSchedule(d_max=math.inf)
    assert uncapped.decay(10**6) == 25 + 5 * 10**6


@pytest.mark.parametrize(("call", "message"), [
    (lambda: AnnealedSchedule().temperatures(np.arange(5), -10), "step must be >= 0 (the RL global step), got -10"),
    (lambda: AnnealedSchedule().temperatures(3, -5), "step must be >= 0 (the RL global step), got -5"),
    (lambda: AnnealedSchedule().temperatures(3, 2.5), "step must be an integer RL step >= 0, got 2.5"),
    (lambda: AnnealedSchedule().temperatures(3, np.array([1, -1])), "step must be >= 0 .* holding -1"),
    (lambda: step_decay(-1, 25, 5, 40000), "step must be >= 0 (the RL global step), got -1"),
    (lambda: schedule_extra_args(AnnealedSchedule(), step=-10), "step must be >= 0 (the RL global step), got -10"),
    (lambda: schedule_extra_args(build_schedule({"name": "fixed", "tau": 0.7}), step=-1), "step must be >= 0"),
    (lambda: schedule_extra_args({"name": "ead"}), "schedule must be a Schedule"),
    (lambda: AnnealedSchedule().temperatures("10"), "positions must be a response position"),
    (lambda: AnnealedSchedule().temperatures(-1), "positions must be >= 0"),
    (lambda: AnnealedSchedule().temperatures([0, -3]), "positions must be >= 0"),
    (lambda: AnnealedSchedule().temperatures(["a", "b"]), "positions must be numbers"),
    (lambda: AnnealedSchedule().temperatures([1.5]), "positions must be whole numbers .* got one of 1.5"),
    (lambda: AnnealedSchedule().temperatures(2.5), "positions must be whole numbers (token positions), got 2.5"),
    (lambda: AnnealedSchedule().temperatures(np.float32(0.25)), "positions must be whole numbers"),
])
def test_bad_positions_and_steps_are_refused_naming_them(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_positions_may_be_any_array_like_of_integers():
    schedule = AnnealedSchedule(warmup=2)
    want = schedule.temperatures(np.arange(6), step=3)
    for positions in ([0, 1, 2, 3, 4, 5], (0, 1, 2, 3, 4, 5), range(6)):
        assert np.array_equal(schedule.temperatures(positions, step=3), want)
    assert torch.equal(schedule.temperatures(torch.arange(6), step=3), torch.as_tensor(want))


def test_the_hf_processor_refuses_a_non_schedule_a_bad_prompt_length_and_a_negative_step():
    with pytest.raises(ValueError, match=r"schedule must be a Schedule .*\(build one with ead\.schedule\.build_sche"):
        ScheduleLogitsProcessor({"name": "ead"}, prompt_length=4)
    for length in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match=rf"prompt_length must be .* got {length!r}"):
            ScheduleLogitsProcessor(AnnealedSchedule(), prompt_length=length)
    with pytest.raises(ValueError, match="step must be >= 0"):
        ScheduleLogitsProcessor(AnnealedSchedule(), prompt_length=4, step=-1)
    processor = ScheduleLogitsProcessor(AnnealedSchedule(), prompt_length=8)  # longer than the input below
    with pytest.raises(ValueError, match="prompt_length = 8 exceeds the input's length 5"):
        processor(torch.zeros(1, 5, dtype=torch.long), torch.zeros(1, 3))


# Parameters of each registered schedule drawn by hypothesis, and the temperatures' bounds after the warm-up.
TAU = st.floats(min_value=0.05, max_value=3.0)
EAD_PARAMETERS = st.fixed_dictionaries({
    "tau_max": TAU, "d0": st.floats(min_value=0.5, max_value=500.0), "step_factor": st.floats(0.0, 50.0),
    "d_max": st.floats(min_value=500.0, max_value=1e5), "warmup": st.integers(0, 20),
    "decay_scale": st.sampled_from([1.0, 20.0])}).flatmap(
    lambda p: st.builds(lambda tau_min: {**p, "tau_min": tau_min}, st.floats(min_value=0.01, max_value=p["tau_max"])))


def _ead_bounds(p):
    return p["tau_min"], max(1.0, p["tau_max"])


STRATEGIES = {
    "fixed": (st.fixed_dictionaries({"tau": TAU}), lambda p: (p["tau"], p["tau"])),
    "two_stage": (st.tuples(TAU, TAU, st.integers(0, 50)).map(
        lambda t: {"tau_early": max(t[0], t[1]), "tau_late": min(t[0], t[1]), "switch": t[2]}),
        lambda p: (p["tau_late"], p["tau_early"])),
    "linear": (st.tuples(TAU, TAU, st.integers(1, 200), st.integers(0, 20)).map(
        lambda t: {"tau_max": max(t[0], t[1]), "tau_min": min(t[0], t[1]), "length": t[2], "warmup": t[3]}),
        lambda p: (p["tau_min"], max(1.0, p["tau_max"]))),
    "ead": (EAD_PARAMETERS, _ead_bounds),
    "ead_linear": (EAD_PARAMETERS, _ead_bounds),
    "ead_two_stage": (EAD_PARAMETERS, _ead_bounds),
    "ead_mean_matched": (EAD_PARAMETERS, lambda p: (p["tau_min"], max(1.0, p["tau_max"]))),
    # EAD's mean over its first 32 positions, the warm-up's tau = 1 among them
    "ead_mean": (EAD_PARAMETERS.map(lambda p: {**p, "length": 32}),
                 lambda p: (min(1.0, p["tau_min"]), max(1.0, p["tau_max"]))),
}


def test_every_position_schedule_has_a_property_test():
    """A new schedule gets its parameters' strategy here; entropy_aware reads the logits (its own test below)."""
    assert set(STRATEGIES) == set(SCHEDULES) - {"entropy_aware"}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_temperatures_are_finite_bounded_and_non_increasing_after_the_warmup(name):
    strategy, bounds = STRATEGIES[name]

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(parameters=strategy, step=st.integers(0, 10_000))
    def check(parameters, step):
        schedule = build_schedule({"name": name, **parameters})
        start = getattr(schedule, "warmup", 0)
        positions = np.arange(start, start + 3000)
        taus = np.asarray(schedule.temperatures(positions, step), dtype=np.float64)
        low, high = bounds(parameters)
        assert np.isfinite(taus).all()
        assert (taus >= low - 1e-12).all() and (taus <= high + 1e-12).all(), (taus.min(), taus.max(), low, high)
        assert (np.diff(taus) <= 1e-12).all()
        if name != "ead_mean":  # ead_mean is one temperature per step, EAD's mean over its first positions
            assert (np.asarray(schedule.temperatures(np.arange(start), step)) == 1.0).all()  # tau = 1 before c

    check()


@settings(max_examples=60, deadline=None, database=None)  # writes nothing to the checkout
@given(mode=st.sampled_from(["gate", "edt"]), taus=st.tuples(TAU, TAU), gate=st.floats(0.0, 5.0),
       base=st.floats(0.05, 0.95), theta=st.floats(0.01, 2.0), scale=st.floats(0.01, 50.0))
def test_entropy_aware_temperatures_stay_within_their_two_temperatures(mode, taus, gate, base, theta, scale):
    low, high = min(taus), max(taus)
    schedule = build_schedule({"name": "entropy_aware", "mode": mode, "tau_low": low, "tau_high": high,
                               "gate": gate, "base": base, "theta": theta})
    log_probs = torch.log_softmax(torch.randn(6, 40, generator=torch.Generator().manual_seed(0)) * scale, -1)
    tau = schedule.token_temperatures(log_probs.double(), position=3, step=2)
    assert torch.isfinite(tau).all() and (tau >= low - 1e-12).all() and (tau <= high + 1e-12).all()
