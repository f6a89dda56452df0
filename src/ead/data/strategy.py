"""Strategy: commit to one of four strategies named by a key, then execute it on a digit string.

A positive control for exploration: a task on which early exploration must pay, by construction. The prompt carries a
key and an input; the response first names a strategy (its first token decides which: the four names start with
different letters), then writes that strategy's output::

    * 4926183750248136         <- prompt (``problem_prompt``): the key, a space, the input digits, a newline
    dub                        <- response: the strategy the key calls for ...
    8842266400486262           <- ... executed on the input

Keys and strategies (``KEY_STRATEGIES``), each a deterministic map of the input:

* ``+`` -> ``add``: every digit plus one, mod 10;
* ``-`` -> ``sub``: every digit minus one, mod 10;
* ``*`` -> ``dub``: every digit doubled, mod 10;
* ``/`` -> ``rot``: the input rotated left by one place (its first digit moved to the end).

The key is a symbol the policy must read: nothing else in the prompt tells which strategy pays. With the default 16
digits a response is 20 characters (the name, a newline, 16 digits), and every output digit is one step at which a
hot sampler can err.

Reward (decided here, used by :func:`ead.rewards.grade` with ``task="strategy"``): 1 only if the response is the
key's strategy name and, on the next line, that strategy's exact output (whitespace around either line is ignored);
a different strategy scores 0 even when executed exactly, and so does the right strategy with one digit wrong,
missing or extra. :func:`verify_response` says why a response failed (``strategy``, ``execution`` or ``format``).

A biased teacher for SFT (:func:`teacher_responses`): with probability ``bias`` it names and executes the favourite
strategy (``add``) whatever the key, otherwise the key's strategy. A policy fine-tuned on it is over-confident at its
fork by construction: for three keys of four the right strategy is the teacher's rare choice (share ``1 - bias``: the
fork's rarity). Its execution is exact unless ``execution_noise`` q > 0: then each output digit is, with probability
q, another digit drawn uniformly, so the policy learns an execution that errs at tau 1 and is mended by cooling (the
execution's fragility).

Splits: a problem's split is a seeded hash of its input digits (80% train / 10% val / 10% test buckets) and an input
appears once in the table, so splits never share an input. Generation is deterministic given the seed and the sizes.

Run: ``python -m ead.data.build --dataset strategy --out results/data/strategy.parquet --seed 0 --n-digits 16``.
"""

from __future__ import annotations

import numbers
import random
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ead.data.splits import draw_table
from ead.data.tasks import Task

if TYPE_CHECKING:  # pandas is imported lazily: the grader imports this module in RL loops
    import pandas as pd

__all__ = [
    "FAILURE_TYPES",
    "FAVOURITE",
    "KEY_STRATEGIES",
    "ROLES",
    "STRATEGIES",
    "StrategyCheck",
    "StrategyProblem",
    "execute",
    "failure_type",
    "generate_strategy",
    "parse_problem",
    "problem_prompt",
    "reference_string",
    "response_roles",
    "solution",
    "teacher_responses",
    "verify_response",
]

KEY_STRATEGIES = {"+": "add", "-": "sub", "*": "dub", "/": "rot"}
STRATEGIES = tuple(KEY_STRATEGIES.values())
#: The biased teacher's strategy whatever the key (:func:`teacher_responses`).
FAVOURITE = "add"
DIGITS = "0123456789"
# Far longer than any response a tiny policy can write in its 128 positions; a longer one is refused before it is split.
MAX_RESPONSE_CHARS = 1000


@dataclass(frozen=True)
class StrategyProblem:
    key: str  # one of KEY_STRATEGIES
    digits: str  # the input, decimal digits

    def __post_init__(self):
        if self.key not in KEY_STRATEGIES:
            raise ValueError(f"key {self.key!r} is not one of {list(KEY_STRATEGIES)}")
        if not self.digits or not set(self.digits) <= set(DIGITS):
            raise ValueError(f"digits {self.digits!r} must be a non-empty string of decimal digits")

    @property
    def strategy(self) -> str:
        """The strategy the key calls for."""
        return KEY_STRATEGIES[self.key]


def execute(strategy: str, digits: str) -> str:
    """The output of ``strategy`` on the input ``digits``."""
    if strategy == "add":
        return "".join(str((int(d) + 1) % 10) for d in digits)
    if strategy == "sub":
        return "".join(str((int(d) - 1) % 10) for d in digits)
    if strategy == "dub":
        return "".join(str(2 * int(d) % 10) for d in digits)
    if strategy == "rot":
        return digits[1:] + digits[:1]
    raise ValueError(f"strategy {strategy!r} is not one of {list(STRATEGIES)}")


def render_response(strategy: str, digits: str) -> str:
    """A response that names ``strategy`` and executes it exactly on ``digits``."""
    return f"{strategy}\n{execute(strategy, digits)}"


def solution(problem: StrategyProblem) -> str:
    """The one response that scores 1: the key's strategy and its output."""
    return render_response(problem.strategy, problem.digits)


def problem_prompt(problem: StrategyProblem) -> str:
    """The prompt text shown to the policy (no chat template)."""
    return f"{problem.key} {problem.digits}\n"


def reference_string(problem: StrategyProblem) -> str:
    """Reference passed to the grader (``answer`` column): the prompt without its newline (``"* 4926183750248136"``)."""
    return f"{problem.key} {problem.digits}"


_PROBLEM_RE = re.compile(r"^\s*([-+*/])[ \t]+(\d+)\s*$")


def parse_problem(text: str) -> StrategyProblem:
    """Parse a reference string or a prompt (``"* 4926183750248136"``, with or without the newline)."""
    match = _PROBLEM_RE.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"Not a strategy problem: {str(text)[:100]!r}; expected a key of {''.join(KEY_STRATEGIES)}, "
                         f"a space and digits, e.g. '* 4926183750248136'")
    return StrategyProblem(match.group(1), match.group(2))


# ---------------------------------------------------------------------------------------------------------
# Verifier
# ---------------------------------------------------------------------------------------------------------

#: Why a response failed: ``strategy``, a strategy other than the key's (whatever its output); ``execution``, the key's
#: strategy with an output other than its exact execution; ``format``, anything else (not a name line and a digit
#: line, or a name that is no strategy).
FAILURE_TYPES = ("strategy", "execution", "format")


@dataclass(frozen=True)
class StrategyCheck:
    valid: bool  # True iff the response is the key's strategy, exactly executed
    strategy: str | None  # the strategy the response named (None if it has not the format)
    output: str | None  # its output line (None if it has not the format)
    reason: str  # "ok" or why the response was rejected
    error: str = ""  # "" (valid) or one of FAILURE_TYPES


def verify_response(response: str, problem: StrategyProblem) -> StrategyCheck:
    """Strictly check a response against a problem. Never raises on any input string.

    Accepted format: two lines, a strategy name then the output digits; whitespace around the response and around
    each line is ignored, anything else (a third line, a character that is no digit in the output) is a format error.
    """
    if not isinstance(response, str):
        return StrategyCheck(False, None, None, "response is not a string", "format")
    if len(response) > MAX_RESPONSE_CHARS:
        return StrategyCheck(False, None, None, f"response longer than {MAX_RESPONSE_CHARS} characters", "format")
    lines = [line.strip() for line in response.strip().split("\n")]
    if len(lines) != 2:
        return StrategyCheck(False, None, None, f"{len(lines)} lines, not a strategy line and an output line",
                             "format")
    named, output = lines
    if named not in STRATEGIES:
        return StrategyCheck(False, None, None, f"{named[:20]!r} is not a strategy of {list(STRATEGIES)}", "format")
    if not output or not set(output) <= set(DIGITS):
        return StrategyCheck(False, None, None, f"output {output[:40]!r} is not a string of digits", "format")
    if named != problem.strategy:
        return StrategyCheck(False, named, output, f"strategy {named!r}, the key {problem.key!r} calls for "
                             f"{problem.strategy!r}", "strategy")
    expected = execute(named, problem.digits)
    if output != expected:
        return StrategyCheck(False, named, output, f"output {output!r} is not {named}'s {expected!r}", "execution")
    return StrategyCheck(True, named, output, "ok")


def failure_type(response: str, problem: StrategyProblem) -> str:
    """Why a response failed, by its first mistake: ``"ok"`` for a solution, else one of :data:`FAILURE_TYPES`.

    The premise probe's classifier (``ead.analyses.premises``, premise G2: are wrong strategies a large share of the
    failures?), read line by line as the response is written:

    * ``strategy``: the first line names a strategy other than the key's (what follows it does not matter: the
      response chose a wrong path at its fork);
    * ``execution``: the first line names the key's strategy, and what follows is not its exact output (a wrong,
      missing or extra digit, a character that is no digit, a further line);
    * ``format``: the first line is no strategy name.

    Unlike :func:`verify_response`, whose ``error`` says what made the whole response unacceptable (a malformed output
    line after the right name is a ``format`` error there), this names the first line that went wrong.
    """
    if verify_response(response, problem).valid:
        return "ok"
    if not isinstance(response, str) or len(response) > MAX_RESPONSE_CHARS:
        return "format"
    named = response.strip().split("\n")[0].strip()
    if named == problem.strategy:
        return "execution"
    return "strategy" if named in STRATEGIES else "format"


# ---------------------------------------------------------------------------------------------------------
# Token roles: what each character of a response is, in the format above
# ---------------------------------------------------------------------------------------------------------

#: Roles of a response's characters. ``strategy``: a character of the first line's strategy name (where the task
#: forks); ``execution``: a digit of the second line (determined by the strategy and the input); ``syntax``: the
#: newline between them and whitespace around either line; ``other``: every character of any other line, or of a first
#: line that is no strategy name.
ROLES = ("strategy", "execution", "syntax", "other")

_NAME_LINE_RE = re.compile(rf"^(\s*)({'|'.join(STRATEGIES)})(\s*)$")
_OUTPUT_LINE_RE = re.compile(r"^(\s*)(\d+)(\s*)$")


def response_roles(response: str) -> list[str]:
    """The role (:data:`ROLES`) of every character of ``response``: the first line is a strategy name, the second the
    output. Roles describe the format, not correctness: a wrong strategy still has a name, a wrong output digits."""
    roles: list[str] = []
    for index, line in enumerate(response.split("\n")):
        if index:
            roles.append("syntax")  # the newline before this line
        pattern, role = {0: (_NAME_LINE_RE, "strategy"), 1: (_OUTPUT_LINE_RE, "execution")}.get(index, (None, None))
        match = pattern.match(line) if pattern else None
        if match:
            roles.extend(["syntax"] * len(match.group(1)) + [role] * len(match.group(2))
                         + ["syntax"] * len(match.group(3)))
        else:
            roles.extend(["other"] * len(line))
    return roles


# ---------------------------------------------------------------------------------------------------------
# The biased teacher of SFT
# ---------------------------------------------------------------------------------------------------------

def teacher_responses(questions, bias: float, seed: int, execution_noise: float = 0.0) -> list[str]:
    """A biased teacher's response to each prompt (or reference string) in ``questions``, in order: with probability
    ``bias`` the :data:`FAVOURITE` strategy whatever the key, otherwise the key's; each output digit replaced, with
    probability ``execution_noise``, by one of the nine other digits drawn uniformly (0: every execution exact).

    Seeded draws per question, in order: the same questions, bias, noise and seed give the same responses, and a
    noiseless teacher draws exactly what it drew before the noise existed (one number per question).
    """
    for name, value in (("bias", bias), ("execution_noise", execution_noise)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
            raise ValueError(f"teacher {name} must be a number in [0, 1], got {value!r}")
    rng = random.Random(seed)
    responses = []
    for question in questions:
        problem = parse_problem(question)
        strategy = FAVOURITE if rng.random() < bias else problem.strategy
        output = execute(strategy, problem.digits)
        if execution_noise > 0:
            output = "".join(rng.choice(DIGITS.replace(digit, "")) if rng.random() < execution_noise else digit
                             for digit in output)
        responses.append(f"{strategy}\n{output}")
    return responses


# ---------------------------------------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------------------------------------

def generate_strategy(seed: int = 0, n_train: int = 20000, n_val: int = 500, n_test: int = 1000,
                      n_digits: int = 16) -> pd.DataFrame:
    """The three splits as one tidy table. Each drawn problem: a key uniform over :data:`KEY_STRATEGIES` and
    ``n_digits`` digits uniform over 0-9. Columns: id, question, answer (the grader's reference string), source, split,
    key, digits, strategy (the key's), solution (the one response that scores 1)."""
    wanted = {"train": n_train, "val": n_val, "test": n_test}
    if min(wanted.values()) < 0 or n_digits < 2:
        raise ValueError(f"sizes must be >= 0 and n_digits >= 2 (rot must move a digit), got {wanted}, "
                         f"n_digits={n_digits}")
    keys = sorted(KEY_STRATEGIES)

    def draw(rng: random.Random):
        problem = StrategyProblem(rng.choice(keys), "".join(rng.choices(DIGITS, k=n_digits)))
        return problem.digits, {"question": problem_prompt(problem), "answer": reference_string(problem),
                                "key": problem.key, "digits": problem.digits, "strategy": problem.strategy,
                                "solution": solution(problem)}

    return draw_table("strategy", seed, wanted, draw)


def grade_response(response: str, reference: str) -> tuple[bool, str | None]:
    """(the key's strategy, exactly executed?, the response's answer or None): the task's own verifier decides the
    reward. The answer is the named strategy and its output line (``"dub\\n8842..."``), None for a response without
    that format. ``reference`` is the problem (``"* 4926183750248136"`` or the prompt text)."""
    check = verify_response(response, parse_problem(reference))
    return check.valid, None if check.strategy is None else f"{check.strategy}\n{check.output}"


def classify_failure(response: str, reference: str) -> str:
    """The premise probe's first mistake of ``response`` (:func:`failure_type`), ``"ok"`` for a solution."""
    return failure_type(response, parse_problem(reference))


TASK = Task(name="strategy", grading="verifier", verify=grade_response,
            generate=generate_strategy, settings=("seed", "n_train", "n_val", "n_test", "n_digits"),
            failure_types=FAILURE_TYPES, classify_failure=classify_failure, roles=ROLES, response_roles=response_roles,
            teacher_responses=teacher_responses)
