"""Entry point: `python -m grader [ID ...]` grades; a few subcommands build course material.

python -m grader notebooks [...]        # notebooks/ from the puzzle sources (grader.course.generate)
python -m grader pictures [--check]     # notebooks/pictures/: what each reference block reads and writes
python -m grader nbgrader-course DIR    # a ready nbgrader course directory (grader.nbgrader.course)
python -m grader fit [--arch SM]        # every case's shared memory against each GPU's limit (grader.course.fit)
python -m grader i18n update | check    # the translation catalogues i18n/LANG/*.po (grader.course.translations)
python -m grader autograde-shard | autograde-shards | autograde-status ASSIGNMENT   # (grader.nbgrader.shards)
python -m grader class-report ASSIGNMENT   # causes, speed, look-alikes (grader.nbgrader.class_report_page)
"""

import sys

from grader.processes import hermetic

SUBCOMMANDS = {
    "pictures": "grader.course.access_pictures",
    "notebooks": "grader.course.generate",
    "nbgrader-course": "grader.nbgrader.course",
    "fit": "grader.course.fit",
    "i18n": "grader.course.translations",
}
# Subcommands that live in a module with other entry points: "module:function".
SUBCOMMANDS.update(
    {
        "autograde-shard": "grader.nbgrader.shards:shard_main",
        "autograde-shards": "grader.nbgrader.shards:shards_main",
        "autograde-status": "grader.nbgrader.shards:status_main",
        "class-report": "grader.nbgrader.class_report_page:main",
    }
)


def main(argv: list[str]) -> int:
    import importlib

    if argv and argv[0] in SUBCOMMANDS:
        module, _, function = SUBCOMMANDS[argv[0]].partition(":")
        return getattr(importlib.import_module(module), function or "main")(argv[1:])
    from grader.frontends.cli import main as grade

    return grade(argv)


if __name__ == "__main__":
    # Typed by a person, the interpreter has the current folder on sys.path: start again hermetic before
    # importing anything that is not already loaded (grader.hermetic says what that keeps out).
    hermetic.reexec("grader", sys.argv[1:])
    sys.exit(main(sys.argv[1:]))
