"""The parse-time switches of the workflow (ead.settings.switches) read each profile's config as the rule files need
it: the profile's root, the backend, and which optional parts exist."""

from ead.settings import load_layered_config
from ead.settings.switches import HubModel, workflow_switches
from tests.conftest import CONFIGS


def switches(*files):
    return workflow_switches(load_layered_config(CONFIGS / "config.yaml", *(CONFIGS / name for name in files)))


def test_the_default_profile_writes_at_the_top_on_the_cpu_backend_with_no_optional_part():
    default = switches()
    assert (default.profile, default.output_root, default.rl_backend) == ("default", ".", "cpu")
    assert default.measured_schedule_policies == () and default.paper_models == () and not default.inference_only
    assert default.cpu_level == "avx2" and default.job_threads == 1


def test_every_other_profile_has_its_own_root_and_the_optional_parts_it_declares():
    assert switches("smoke.yaml").output_root == "runs/smoke"
    paper = switches("paper.yaml")
    assert paper.rl_backend == "verl" and paper.output_root == "runs/paper"
    assert set(paper.hub_models) == set(paper.paper_models)
    assert all(isinstance(model, HubModel) and "/" in model.hub_id and model.revision
               for model in paper.hub_models.values())
    verl_cpu = switches("verl_cpu.yaml")  # a tiny policy exported as a chat model: a paper model, not a hub download
    assert verl_cpu.paper_models == ("tiny_arith",) and verl_cpu.hub_models == {}
    assert switches("ablations/measured_schedule.yaml").measured_schedule_policies == ("tiny1m_sharp", "tiny1m")
    assert switches("ablations/inference_only.yaml").inference_only
