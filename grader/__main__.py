"""Entry point: `python -m grader [ID ...]` grades; a few subcommands build course material.

python -m grader notebooks [...]        # notebooks/ from the puzzle sources (grader.notebooks)
python -m grader nbgrader-course DIR    # a ready nbgrader course directory (grader.nbgrader_course)
python -m grader fit [--arch SM]        # every case's shared memory against each GPU's limit (grader.fit)
"""

import importlib
import sys

SUBCOMMANDS = {"notebooks": "grader.notebooks", "nbgrader-course": "grader.nbgrader_course", "fit": "grader.fit"}


def main(argv: list[str]) -> int:
    if argv and argv[0] in SUBCOMMANDS:
        return importlib.import_module(SUBCOMMANDS[argv[0]]).main(argv[1:])
    from grader.cli import main as grade

    return grade(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
