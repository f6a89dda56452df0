"""Grade one response from the shell and print the Grade.

Run: ``python -m ead.rewards --task math --reference 1/2 'so \\boxed{0.5}'``
(add ``--grader '{"last_boxed_only": false}'`` to try other settings).
"""

from __future__ import annotations

import argparse

from ead.data.tasks import task_names
from ead.rewards.grader import add_grader_argument, configure_grader, grade


def main() -> None:
    parser = argparse.ArgumentParser(description="Grade one response (prints the Grade).")
    parser.add_argument("--task", required=True, choices=sorted(task_names()))
    parser.add_argument("--reference", required=True)
    add_grader_argument(parser)
    parser.add_argument("response")
    args = parser.parse_args()
    configure_grader(args.grader)
    print(grade(args.response, args.reference, args.task))


if __name__ == "__main__":
    main()
