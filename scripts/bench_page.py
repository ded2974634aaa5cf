"""A results page from one bench run's JSON: the table the grader prints (each figure the median of its
repetitions, with the spread, ~ on a ratio inside the noise), the GPU's clocks and power limit, and the command.

    python -m grader --solutions --bench --json bench.json          # on the GPU (--repeat N for more runs)
    python scripts/bench_page.py bench.json docs/results/h200-bench-DATE.md --title "..." --command "..."

The JSON is committed beside the page (docs/results/data/), so the page can be rebuilt and checked:
``--check`` fails when the page differs from what the JSON gives.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader.frontends import render
from grader.outcome import CaseResult


def page(document: dict, title: str, command: str) -> str:
    results = [CaseResult.from_dict(r) for r in document.get("results", [])]
    passed = sum(1 for r in results if r.status == "passed")
    runs = document.get("runs", [])
    devices = sorted({run.get("device", "") for run in runs if run.get("device")})
    lines = [
        f"# {title}",
        "",
        f"`{command}` on {', '.join(devices) or 'the GPU'}: {passed} of {len(results)} cases passed. Each time is",
        "the median of its repetitions (each repetition itself a median of CUDA-event timings over rotating input",
        "sets); spread is (slowest - fastest) / median; a ratio marked ~ lies within the two times' ranges.",
        "",
        "```",
        *render.bench_lines(results),
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path)
    parser.add_argument("page", type=Path)
    parser.add_argument("--title", required=True)
    parser.add_argument("--command", default="python -m grader --solutions --bench")
    parser.add_argument("--check", action="store_true", help="fail if the page differs from what the JSON gives")
    args = parser.parse_args(argv)
    text = page(json.loads(args.json.read_text()), args.title, args.command)
    if args.check:
        if not args.page.exists() or args.page.read_text() != text:
            print(f"{args.page} is not what {args.json} gives: rebuild it with scripts/bench_page.py")
            return 1
        return 0
    args.page.write_text(text)
    print(f"wrote {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
