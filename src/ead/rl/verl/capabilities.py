"""What a sampler may ask of the verl backend that verl 0.9.1 cannot do, refused by name before a run starts.

Training at the annealed temperatures (a sampler's ``trains_at: annealed``; on the CPU backend
:func:`ead.rl.train.annealed_training_temperatures`) evaluates pi_old and pi_theta at each token's own sampling
temperature tau_t. verl 0.9.1 divides the trainer's logits by one temperature per *sample*, never per token:

* the v1 trainer sets it from the scalar ``actor_rollout_ref.rollout.temperature`` for the whole batch
  (``verl/trainer/ppo/v1/trainer_base.py:573``, ``batch.extra_info["temperature"] = ...rollout.temperature``);
* the FSDP engine's forward accepts a float or a ``(batch,)`` tensor and asserts ``temperature.shape[0] ==
  input_ids.shape[0]`` (``verl/workers/engine/fsdp/transformer_impl.py:1173-1177``), then copies each sample's value to
  every one of its tokens (``verl_F.expand_as_nested(temperature, input_ids)``, lines 1183-1187) before the logits are
  divided (``_scale_logits_by_temperature``, line 98). The automodel, megatron and torchtitan engines read the same
  ``micro_batch["temperature"]``.

A per-token temperature would need a change inside verl's engines (a nested (total_tokens,) temperature and a trainer
that fills it from the schedule), which this project does not patch; EAD's tau_t changes within every response, so
no per-sample value reproduces it. Hence the check below. verl does express the other treatment, EAD + TIS
(``algorithm.rollout_correction.rollout_is``, token or sequence), and fixed-tau training at the sampling temperature.
"""

from __future__ import annotations

from ead.settings import ConfigError

__all__ = ["VERL_TRAINS_AT", "check_verl_trains_at"]

#: The ``trains_at`` values the verl backend can run: the trainer at tau = 1 (``one``) or, for a fixed tau, at that
#: tau (``behaviour``: ``rollout.temperature = tau``, one value per batch).
VERL_TRAINS_AT = ("behaviour", "one")


def check_verl_trains_at(samplers: dict[str, dict], used: list[str] | None = None) -> None:
    """Refuse, for ``rl.backend: verl``, a sampler whose ``trains_at`` verl 0.9.1 cannot run (``annealed``).

    ``samplers`` is ``rl.samplers`` (name -> sampler document, ``trains_at`` absent = the profile's default);
    ``used`` restricts the check to the samplers some experiment runs (default: all). Raises ConfigError naming the
    sampler and why.
    """
    for name in used if used is not None else list(samplers):
        trains_at = samplers[name].get("trains_at")
        if trains_at is None or trains_at in VERL_TRAINS_AT:
            continue
        if trains_at == "annealed":
            raise ConfigError(
                f"rl.samplers.{name}.trains_at = 'annealed' cannot run on rl.backend: verl: verl 0.9.1 divides the "
                "trainer's logits by one temperature per sample (workers/engine/fsdp/transformer_impl.py, "
                "expand_as_nested of a (batch,) temperature; the v1 trainer sets it from the scalar "
                "rollout.temperature), so pi_old and pi_theta cannot be evaluated at each token's tau_t. Run this "
                "sampler on rl.backend: cpu, or use EAD + TIS (tis: token | sequence) on verl")
        raise ConfigError(f"rl.samplers.{name}.trains_at = {trains_at!r}: the verl backend runs {list(VERL_TRAINS_AT)}")
