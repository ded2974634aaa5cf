"""How long a learner waits: the grader's loop, cold (a new interpreter per check) and warm (grader.warm).

    python scripts/bench_grader.py [--repeat 3] [--json out.json]

Each command runs once first so TileLang's compile cache holds its kernels (a learner's re-check finds
them there too), then ``--repeat`` times cold and warm, alternating; the table gives the median wall time.
On a machine without a GPU the small cases are simulated, as a learner without one sees them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COMMANDS = {
    "one kernel (08 gemv, solved)": ["08", "--solutions", "-k", "gemv", "--exact"],
    "one kernel (02 add, solved)": ["02", "--solutions", "-k", "add", "--exact"],
    "untouched stubs (08)": ["08"],
    "whole puzzle (08, solved)": ["08", "--solutions"],
}


def cold(argv: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "grader", *argv], cwd=ROOT, capture_output=True)
    return time.perf_counter() - started, done.returncode


def main() -> int:
    from grader.warm import WarmGrader

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    warm = WarmGrader()
    rows: dict = {}
    mismatches: dict[str, str] = {}
    try:
        for name, argv in COMMANDS.items():
            cold(argv)  # fills the compile cache
            warm.run(argv, dict(os.environ), str(ROOT), 900)  # and warms the server
            times: dict[str, list[float]] = {"cold": [], "warm": []}
            codes = set()
            for _ in range(args.repeat):
                seconds, code = cold(argv)
                times["cold"].append(seconds)
                started = time.perf_counter()
                answer = warm.run(argv, dict(os.environ), str(ROOT), 900)
                times["warm"].append(time.perf_counter() - started)
                codes |= {code, answer.returncode}
                if answer.returncode != code:  # the warm path must give the cold path's verdict
                    mismatches.setdefault(name, answer.output[-4000:])
            rows[name] = {kind: statistics.median(values) for kind, values in times.items()}
            rows[name]["exit codes"] = sorted(c for c in codes if c is not None)
            if name in mismatches:
                rows[name]["warm output where the exit code differed"] = mismatches[name]
                print(f"{name}: the warm exit code differs from the cold one; its output:\n{mismatches[name]}")
            print(f"{name:32} cold {rows[name]['cold']:6.2f} s   warm {rows[name]['warm']:6.2f} s", flush=True)
    finally:
        warm.stop()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
