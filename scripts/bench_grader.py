"""How long a learner waits: the grader's loop, cold (a new interpreter per check) and warm (grader.frontends.warm).

    python scripts/bench_grader.py [--repeat 3] [--json out.json] [--sandbox]

Each command runs once first so TileLang's compile cache holds its kernels (a learner's re-check finds
them there too), then ``--repeat`` times cold and warm, alternating; the table gives the median wall time.
On a machine without a GPU the small cases are simulated, as a learner without one sees them.

``--sandbox`` adds each command with ``--no-sandbox`` (the tracer unconfined, as before the sandbox) in
the same alternation, and gives every warm check an empty trace cache, so that the tracer, and with it
the sandbox, runs in every check as after an edit: the difference is what the sandbox costs a check.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
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
    from grader.frontends.cli import run_through
    from grader.frontends.warm import WarmGrader

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", type=Path)
    p.add_argument("--sandbox", action="store_true", help="time each command with --no-sandbox too")
    p.add_argument("--only", default="", metavar="TEXT", help="only commands whose name contains TEXT (a,b: either)")
    args = p.parse_args()
    chosen = {n: a for n, a in COMMANDS.items() if not args.only or any(t in n for t in args.only.split(","))}
    warm = WarmGrader()
    rows: dict = {}
    mismatches: dict[str, str] = {}
    variants = {"": []} if not args.sandbox else {"": [], " unconfined": ["--no-sandbox"]}

    def warm_run(argv: list[str]) -> tuple[float, int | None, str]:
        env = dict(os.environ)
        with tempfile.TemporaryDirectory() as fresh:
            if args.sandbox:  # no trace cached: the tracer runs, in the sandbox or not
                env["XDG_CACHE_HOME"] = fresh
            started = time.perf_counter()
            answer = run_through(warm, argv, 900, env=env, cwd=ROOT)
            return time.perf_counter() - started, answer.returncode, answer.output

    try:
        for name, argv in chosen.items():
            cold(argv)  # fills the compile cache
            run_through(warm, argv, 900, env=dict(os.environ), cwd=ROOT)  # and warms the server
            times: dict[str, list[float]] = {f"{kind}{v}": [] for v in variants for kind in ("cold", "warm")}
            codes = set()
            for _ in range(args.repeat):
                for variant, extra in variants.items():
                    seconds, code = cold([*argv, *extra])
                    times[f"cold{variant}"].append(seconds)
                    seconds, warm_code, output = warm_run([*argv, *extra])
                    times[f"warm{variant}"].append(seconds)
                    codes |= {code, warm_code}
                    if warm_code != code:  # the warm path must give the cold path's verdict
                        mismatches.setdefault(name, output[-4000:])
            rows[name] = {kind: statistics.median(values) for kind, values in times.items()}
            rows[name]["exit codes"] = sorted(c for c in codes if c is not None)
            if name in mismatches:
                rows[name]["warm output where the exit code differed"] = mismatches[name]
                print(f"{name}: the warm exit code differs from the cold one; its output:\n{mismatches[name]}")
            shown = "   ".join(f"{kind} {rows[name][kind]:6.2f} s" for kind in times)
            print(f"{name:32} {shown}", flush=True)
    finally:
        warm.stop()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
