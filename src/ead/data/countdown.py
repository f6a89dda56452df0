"""Countdown: a seeded synthetic task with verifiable, multi-path solutions, small enough for RL on a CPU.

A problem gives 3 or 4 numbers from 1-20 and a target (1-199). The response must reach the target with
``+ - * /`` using every number exactly once, written as a chain of equations and the boxed target::

    Numbers: 5 6 7 12          <- prompt (``problem_prompt``)
    Target: 41

    7*5=35                     <- response (e.g. the reference chain in the ``solution`` column)
    35+12=47
    47-6=41
    \\boxed{41}

Rules (classic Countdown): every intermediate result is a positive integer, division must be exact.
Every generated problem has at least ``min_solutions`` (default 2) genuinely different solutions (distinct
up to commutativity and associativity), so a policy can find several solution paths; that is what makes
exploration matter here. With the defaults (seed 0, 20000/500/1000) problems have 3.7 solutions on average
(median 2, max 53); 91% of training problems have 4 numbers, because only ~2000 three-number problems
with two or more solutions exist. Generation takes ~70 s on one core.

Reward (decided here, used by :func:`ead.rewards.grade` with ``task="countdown"``): **the verified chain**.
A response scores 1 only if every line is a correct equation over the available numbers, each given number
(and each intermediate result) is used exactly once, exactly one number remains and equals the target, and
the final ``\\boxed{}`` holds that target. A response that only writes ``\\boxed{target}`` scores 0.

Splits: a problem is ``(sorted numbers, target)``. Its split is chosen by a seeded hash of that key
(80% train / 10% val / 10% test buckets), so splits never share a problem, and the test set for a seed does
not change when ``n_train`` changes. Generation is deterministic given the seed and the sizes.

Run: ``python -m ead.data.build --dataset countdown --out results/data/countdown.parquet --seed 0``.
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from ead.data.splits import draw_table
from ead.data.tasks import Task

if TYPE_CHECKING:  # pandas is imported lazily: the grader imports this module in RL loops
    import pandas as pd

__all__ = [
    "canonical_solution",
    "ChainCheck",
    "CountdownProblem",
    "generate_countdown",
    "parse_problem",
    "problem_prompt",
    "ROLES",
    "reference_string",
    "render_chain",
    "response_roles",
    "solve",
    "verify_chain",
]

MIN_NUMBER, MAX_NUMBER = 1, 20
MAX_TARGET = 199

# A response longer than this cannot be a 3-equation chain of small numbers; refuse it before parsing.
MAX_RESPONSE_CHARS = 2000
MAX_OPERAND_DIGITS = 7


@dataclass(frozen=True)
class CountdownProblem:
    numbers: tuple[int, ...]  # sorted ascending
    target: int

    def __post_init__(self):
        object.__setattr__(self, "numbers", tuple(sorted(int(n) for n in self.numbers)))


def problem_prompt(problem: CountdownProblem) -> str:
    """The prompt text shown to the policy (no chat template)."""
    return f"Numbers: {' '.join(map(str, problem.numbers))}\nTarget: {problem.target}\n"


def reference_string(problem: CountdownProblem) -> str:
    """Compact reference passed to the grader (the ``answer`` column): ``"3 5 7 12 -> 41"``."""
    return f"{' '.join(map(str, problem.numbers))} -> {problem.target}"


_COMPACT_RE = re.compile(r"^\s*((?:\d+\s+)*\d+)\s*->\s*(\d+)\s*$")
_PROMPT_RE = re.compile(r"Numbers:\s*((?:\d+[ \t]+)*\d+)\s*\n\s*Target:\s*(\d+)")


def parse_problem(text: str) -> CountdownProblem:
    """Parse a reference string (``"3 5 7 12 -> 41"``) or a prompt (``"Numbers: ...\\nTarget: ..."``)."""
    match = _COMPACT_RE.match(text) or _PROMPT_RE.search(text)
    if match is None:
        raise ValueError(
            f"Not a countdown problem: {text[:100]!r}; expected '3 5 7 12 -> 41' or 'Numbers: 3 5 7 12\\nTarget: 41'"
        )
    return CountdownProblem(tuple(int(n) for n in match.group(1).split()), int(match.group(2)))


# ---------------------------------------------------------------------------------------------------------
# Exhaustive solver. An expression is an int (a given number) or a tuple (op, left, right). Trees are
# enumerated up to commutativity of + and * (operands in a canonical order); "distinct solutions" are
# distinct normal forms (also up to associativity, see _normal_form), so 2+9+14 counts once however it is
# bracketed, while the policy may still write it as several different chains.
# ---------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=1 << 20)
def _canonical(expr) -> str:
    if isinstance(expr, int):
        return str(expr)
    op, left, right = expr
    return f"({_canonical(left)}{op}{_canonical(right)})"


def _combine(a: int, ea, b: int, eb):
    """All (value, expr) from combining two sub-results; intermediate values stay positive integers."""
    if (a, _canonical(ea)) < (b, _canonical(eb)):  # canonical operand order for commutative ops
        a, ea, b, eb = b, eb, a, ea
    yield a + b, ("+", ea, eb)
    yield a * b, ("*", ea, eb)
    if a > b:
        yield a - b, ("-", ea, eb)
    elif b > a:
        yield b - a, ("-", eb, ea)
    if b and a % b == 0:
        yield a // b, ("/", ea, eb)
    if a and b % a == 0 and (a != b or _canonical(ea) != _canonical(eb)):
        yield b // a, ("/", eb, ea)


@lru_cache(maxsize=32768)
def _reach(numbers: tuple[int, ...]) -> dict[int, dict[str, object]]:
    """value -> {canonical string: expr} for every expression using all of ``numbers`` exactly once."""
    if len(numbers) == 1:
        return {numbers[0]: {str(numbers[0]): numbers[0]}}
    out: dict[int, dict[str, object]] = {}
    n = len(numbers)
    seen_splits = set()
    rest_idx = range(1, n)
    # Unordered two-block partitions: the block holding index 0 plus any proper subset of the rest.
    for k in range(0, n - 1):
        for extra in itertools.combinations(rest_idx, k):
            left_idx = (0, *extra)
            left = tuple(numbers[i] for i in left_idx)
            right = tuple(numbers[i] for i in range(n) if i not in left_idx)
            split = tuple(sorted((left, right)))
            if split in seen_splits:  # duplicate numbers give the same partition twice
                continue
            seen_splits.add(split)
            for a, exprs_a in _reach(left).items():
                for b, exprs_b in _reach(right).items():
                    for ea in exprs_a.values():
                        for eb in exprs_b.values():
                            for value, expr in _combine(a, ea, b, eb):
                                out.setdefault(value, {})[_canonical(expr)] = expr
    return out


def solve(numbers) -> dict[int, list[str]]:
    """Every reachable value (using all numbers) -> sorted distinct solutions (normal forms, see below)."""
    forms = _forms(tuple(sorted(int(n) for n in numbers)))
    return {value: sorted(by_form) for value, by_form in forms.items()}


@lru_cache(maxsize=32768)
def _forms(numbers: tuple[int, ...]) -> dict[int, dict[str, list]]:
    """value -> {normal form: [expression trees]} (see :func:`_normal_form`)."""
    out: dict[int, dict[str, list]] = {}
    for value, exprs in _reach(numbers).items():
        by_form = out.setdefault(value, {})
        for key in sorted(exprs):
            by_form.setdefault(_normal_form(exprs[key]), []).append(exprs[key])
    return out


@lru_cache(maxsize=1 << 20)
def _normal_form(expr) -> str:
    """Canonical form up to commutativity AND associativity: ``a-(b-c)`` and ``(a+c)-b`` are one solution.

    Sums/differences are flattened into signed terms, products/quotients into numerator and denominator
    factors, each sorted, so only genuinely different ways of computing the target count as different.
    """
    def flat(node, group, sign, acc):
        if isinstance(node, tuple) and node[0] in group:
            op, left, right = node
            flat(left, group, sign, acc)
            flat(right, group, sign if op == group[0] else not sign, acc)
        else:
            acc[sign].append(_normal_form(node))

    if isinstance(expr, int):
        return str(expr)
    group = "+-" if expr[0] in "+-" else "*/"
    acc = {True: [], False: []}
    flat(expr, group, True, acc)
    pos, neg = sorted(acc[True]), sorted(acc[False])
    return "(" + group[0].join(pos) + "".join(group[1] + term for term in neg) + ")"


def canonical_solution(numbers, target: int) -> str:
    """One fixed solution chain of a problem, the same on every call: the first of its sorted normal forms, and of
    that form's expression trees the first by their canonical strings (both orders are :func:`_forms`').

    The generator's ``solution`` column draws one of the problem's solutions at random, so a policy trained on it
    learns to spread its probability over the different first moves; trained on this one instead, it sees a
    single answer per problem, the way a policy fine-tuned on one canonical demonstration does.
    """
    by_form = _forms(tuple(sorted(int(n) for n in numbers))).get(int(target))
    if not by_form:
        raise ValueError(f"countdown problem numbers={list(numbers)} target={target} has no solution")
    return render_chain(by_form[min(by_form)][0])


def largest_first_solution(numbers, target: int) -> str:
    """A solution chain whose first equation combines the problem's two largest numbers, when the problem has one;
    otherwise :func:`canonical_solution`. The same on every call.

    A rule the policy can read off the prompt ("start with the two largest numbers") that fits most problems but not all
    (71% of the first 1000 default train problems): a policy fine-tuned on it commits to that first move, also on the
    problems where it leads nowhere. That is over-confidence at the fork in the sense of the paper's premise, made by
    the SFT data rather than by sharpening the whole distribution (TESTBED.md). The first move's operator is
    the first of ``+ - * /`` after which the rest is solvable, and the rest of the chain is the canonical solution of
    the numbers left.
    """
    ordered = sorted(int(n) for n in numbers)
    if not _forms(tuple(ordered)).get(int(target)):
        raise ValueError(f"countdown problem numbers={list(numbers)} target={target} has no solution")
    *rest, b, a = ordered  # a >= b, the two largest
    if rest:
        for op, value in (("+", a + b), ("-", a - b), ("*", a * b), ("/", a // b if b and a % b == 0 else 0)):
            if value > 0 and _forms(tuple(sorted([*rest, value]))).get(int(target)):
                return f"{a}{op}{b}={value}\n" + canonical_solution([*rest, value], target)
    return canonical_solution(numbers, target)


def render_chain(expr) -> str:
    """Render an expression tree as an equation chain (post-order) ending in the boxed result."""
    lines: list[str] = []

    def walk(node) -> int:
        if isinstance(node, int):
            return node
        op, left, right = node
        a, b = walk(left), walk(right)
        value = {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else 0}[op]
        lines.append(f"{a}{op}{b}={value}")
        return value

    result = walk(expr)
    return "\n".join([*lines, f"\\boxed{{{result}}}"])


# ---------------------------------------------------------------------------------------------------------
# Verifier
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ChainCheck:
    valid: bool  # True iff the chain is a full, correct solution of the problem
    boxed: str | None  # the content of the last \boxed{} (None if there is none)
    reason: str  # "ok" or why the chain was rejected
    error: str = ""  # "" (valid), "arithmetic" (a wrong, inexact or non-positive result) or "rule" (anything else)
    pools: tuple = field(default=(), compare=False)  # numbers still available after each accepted equation


FAILURE_TYPES = ("strategy", "arithmetic", "rule")


def failure_type(check: ChainCheck, problem: CountdownProblem) -> str:
    """Why a response failed, by its first mistake: ``"ok"`` for a solution, else one of :data:`FAILURE_TYPES`.

    * ``strategy``: every equation so far was correct and legal, but one of them left numbers from which the
      target cannot be reached at all (a dead end, checked exhaustively): the response chose a wrong path.
    * ``arithmetic``: the first mistake is a wrong, inexact or non-positive result while the target was still
      reachable (often the target written as the result of an equation that does not give it).
    * ``rule``: anything else (an unavailable number, a malformed line, numbers left unused, no or a wrong box).
    """
    if check.valid:
        return "ok"
    for pool in check.pools:
        if problem.target not in _reach(tuple(sorted(pool))):
            return "strategy"
    return check.error


_NUM = rf"\d{{1,{MAX_OPERAND_DIGITS}}}"
_EQUATION_RE = re.compile(rf"^({_NUM})\s*([-+*/x×÷])\s*({_NUM})\s*=\s*({_NUM})$")
_BOXED_LINE_RE = re.compile(r"^\\boxed\{\s*([^{}]*?)\s*\}\.?$")
_OPS = {"x": "*", "×": "*", "÷": "/"}


def verify_chain(response: str, problem: CountdownProblem) -> ChainCheck:
    """Strictly check an equation-chain response against a problem. Never raises on any input string.

    Accepted format: non-empty lines, each ``a op b = c`` (op one of + - * / x × ÷, whitespace ignored),
    then a last line ``\\boxed{N}``. Blank lines are ignored; any other line rejects the chain.
    """
    if not isinstance(response, str):
        return ChainCheck(False, None, "response is not a string", "rule")
    if len(response) > MAX_RESPONSE_CHARS:
        return ChainCheck(False, None, f"response longer than {MAX_RESPONSE_CHARS} characters", "rule")
    lines = [line.strip() for line in response.strip().splitlines() if line.strip()]
    if not lines:
        return ChainCheck(False, None, "empty response", "rule")
    boxed_match = _BOXED_LINE_RE.match(lines[-1])
    if boxed_match is None:
        return ChainCheck(False, None, "last line is not \\boxed{N}", "rule")
    boxed = boxed_match.group(1)
    pool = list(problem.numbers)  # multiset of numbers still available
    pools = []  # pool after each accepted equation (for failure_type)
    value = None

    def rejected(reason: str, error: str) -> ChainCheck:
        return ChainCheck(False, boxed, reason, error, tuple(pools))

    for line in lines[:-1]:
        match = _EQUATION_RE.match(line)
        if match is None:
            return rejected(f"not an equation: {line[:40]!r}", "rule")
        a, b, c = int(match.group(1)), int(match.group(3)), int(match.group(4))
        op = _OPS.get(match.group(2), match.group(2))
        for operand in (a, b):
            if operand not in pool:
                return rejected(f"{operand} is not available in {line!r}", "rule")
            pool.remove(operand)
        if op == "/":
            if b == 0 or a % b:
                return rejected(f"inexact division in {line!r}", "arithmetic")
            value = a // b
        else:
            value = {"+": a + b, "-": a - b, "*": a * b}[op]
        if value != c:
            return rejected(f"wrong arithmetic in {line!r}", "arithmetic")
        if value <= 0:
            return rejected(f"non-positive intermediate result in {line!r}", "arithmetic")
        pool.append(value)
        pools.append(tuple(pool))
    if len(pool) != 1:
        return rejected(f"numbers left unused: {sorted(pool)}", "rule")
    if pool[0] != problem.target:
        return rejected(f"chain reaches {pool[0]}, not the target {problem.target}", "rule")
    if boxed != str(problem.target):
        return rejected(f"boxed {boxed!r} is not the target {problem.target}", "rule")
    return ChainCheck(True, boxed, "ok", "", tuple(pools))


# ---------------------------------------------------------------------------------------------------------
# Token roles (Fig. 1 by role): what each character of a response is, in the equation-chain format above
# ---------------------------------------------------------------------------------------------------------

#: Roles of a response's characters. ``operand``: a digit of an equation's left side (the choice of numbers, where
#: countdown forks); ``operator``: its + - * / (the choice of operation); ``result``: a digit after ``=`` (determined
#: by the operands and operator); ``answer``: a digit inside ``\boxed{}`` (determined by the target); ``syntax``:
#: ``=``, whitespace, newlines and the ``\boxed{`` ``}`` wrapper (format); ``other``: any character of a line that
#: is neither an equation nor the boxed line (a malformed response).
ROLES = ("operand", "operator", "result", "answer", "syntax", "other")

_EQUATION_SPANS_RE = re.compile(r"^(\s*)(\d+)(\s*)([-+*/x×÷])(\s*)(\d+)(\s*=\s*)(\d+)(\s*)$")
_BOXED_SPANS_RE = re.compile(r"^(\s*\\boxed\{\s*)([^{}]*?)(\s*\}\.?\s*)$")
_EQUATION_ROLES = ("syntax", "operand", "syntax", "operator", "syntax", "operand", "syntax", "result", "syntax")
_BOXED_ROLES = ("syntax", "answer", "syntax")


def response_roles(response: str) -> list[str]:
    """The role (:data:`ROLES`) of every character of ``response``, by line: an equation line ``a op b = c`` (the
    forms :func:`verify_chain` accepts) gives operand / operator / result digits, a ``\\boxed{N}`` line gives answer
    characters, newlines are syntax, and every character of any other line is ``other``. Roles describe the format,
    not correctness: a wrong equation still has operands, an operator and a result."""
    roles: list[str] = []
    for index, line in enumerate(response.split("\n")):
        if index:
            roles.append("syntax")  # the newline before this line
        for pattern, names in ((_EQUATION_SPANS_RE, _EQUATION_ROLES), (_BOXED_SPANS_RE, _BOXED_ROLES)):
            match = pattern.match(line)
            if match:
                for group, name in enumerate(names, start=1):
                    roles.extend([name] * len(match.group(group)))
                break
        else:
            roles.extend(["other"] * len(line))
    return roles


# ---------------------------------------------------------------------------------------------------------
# Generator
# ---------------------------------------------------------------------------------------------------------

def generate_countdown(
    seed: int = 0,
    n_train: int = 20000,
    n_val: int = 500,
    n_test: int = 1000,
    min_solutions: int = 2,
    p_four_numbers: float = 0.5,
    max_target: int = MAX_TARGET,
) -> pd.DataFrame:
    """Generate the three splits as one tidy table (see the module docstring for the rules).

    Each drawn problem: 3 or 4 numbers (4 with probability ``p_four_numbers``) uniform in 1-20 with
    replacement; the target is uniform over the values in [1, max_target] that have at least
    ``min_solutions`` distinct solutions (normal forms). The reference ``solution`` is one of them, drawn
    at random and rendered as a chain. Columns: id, question, answer (the grader's reference string),
    source, split, numbers, target, solution, num_solutions (normal forms), num_trees, solutions.
    """
    wanted = {"train": n_train, "val": n_val, "test": n_test}
    if min(wanted.values()) < 0 or min_solutions < 1:
        raise ValueError(f"sizes must be >= 0 and min_solutions >= 1, got {wanted}, min_solutions={min_solutions}")
    def draw(rng: random.Random):
        count = 4 if rng.random() < p_four_numbers else 3
        numbers = tuple(sorted(rng.randint(MIN_NUMBER, MAX_NUMBER) for _ in range(count)))
        forms = _forms(numbers)
        targets = sorted(v for v, by_form in forms.items() if 1 <= v <= max_target and len(by_form) >= min_solutions)
        if not targets:
            return None
        problem = CountdownProblem(numbers, rng.choice(targets))
        # Draw the reference before the dedup check so the random stream does not depend on earlier draws'
        # split assignment. Each genuinely different solution (normal form) is equally likely.
        by_form = forms[problem.target]
        reference_form = rng.choice(sorted(by_form))
        reference_tree = rng.choice(by_form[reference_form])
        identity = f"{','.join(map(str, problem.numbers))}|{problem.target}"
        return identity, {"question": problem_prompt(problem), "answer": reference_string(problem),
                          "numbers": list(problem.numbers), "target": problem.target,
                          "solution": render_chain(reference_tree), "num_solutions": len(by_form),
                          "num_trees": sum(len(trees) for trees in by_form.values()), "solutions": sorted(by_form)}

    return draw_table("countdown", seed, wanted, draw)


def grade_response(response: str, reference: str) -> tuple[bool, str | None]:
    """(valid chain?, boxed number or None): the task's own verifier decides the reward.

    ``reference`` is the problem (``"3 5 7 12 -> 41"`` or the prompt text). A bare ``\\boxed{41}`` is not valid.
    """
    check = verify_chain(response, parse_problem(reference))
    return check.valid, None if check.boxed is None else check.boxed.strip()


def classify_failure(response: str, reference: str) -> str:
    """The premise probe's first mistake of ``response`` (:func:`failure_type`), ``"ok"`` for a solution."""
    problem = parse_problem(reference)
    return failure_type(verify_chain(response, problem), problem)


TASK = Task(
    name="countdown", grading="verifier", verify=grade_response,
    generate=generate_countdown, settings=("seed", "n_train", "n_val", "n_test", "min_solutions", "p_four_numbers"),
    failure_types=FAILURE_TYPES, classify_failure=classify_failure, roles=ROLES, response_roles=response_roles,
    sft_references={"canonical": lambda row: canonical_solution(row["numbers"], row["target"]),
                    "largest_first": lambda row: largest_first_solution(row["numbers"], row["target"])},
    fork_sharpen=True)
