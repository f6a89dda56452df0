"""A test-only verl reward (reward.custom_reward_function) whose score varies within a rollout group.

The real-trainer checks run a random tiny Llama, which never answers correctly: under the project's grader every
reward is 0, every GRPO advantage is 0, the policy gradient is 0 and the actor never changes, so step 2 would sample
from the step-1 weights unchanged and "resumed model and optimizer" would be vacuous. Scoring the parity of the
response's length gives each group of n rollouts mixed rewards, so the actor really updates between steps. The
project's grader as the reward is exercised by the verl_cpu profile itself.
"""


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs) -> float:
    return float(len(solution_str) % 2 == 0)
