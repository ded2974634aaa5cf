"""How long a notebook's warm check takes on the front end's route (grader.processes.launch), for the route's
before-and-after in docs/contributing.md: puzzle 02's ``add`` on ``tail_1000`` (the reference as the graded file),
the median of ``--repeat`` checks after one warm-up, with the file unchanged (the trace cache answers) and edited
before each check (the tracer runs).

    python scripts/route_timing.py [--repeat 9] [--device cpu|cuda]

It grades through whichever launcher the tree on ``sys.path`` has (``grade``, or ``run_grader`` before 2026-12-05),
so an older checkout can be timed the same way: ``PYTHONPATH=OLD python scripts/route_timing.py``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--device", default="cpu", help="cpu (simulated, the default) or cuda (on a GPU)")
    args = parser.parse_args()
    import grader
    from grader.frontends.warm import WarmGrader
    from grader.processes import launch

    root = Path(grader.__file__).resolve().parent.parent
    grade = getattr(launch, "grade", None) or launch.run_grader
    module = (root / "solutions" / "p02_vector_add.py").read_text()
    options = launch.check_options(["add"], 120.0, device=args.device, cases="tail_1000")
    warm = WarmGrader()
    try:
        medians = {}
        for mode in ("unchanged", "edited"):
            times = []
            for attempt in range(args.repeat + 1):
                text = module + (f"\n# edit {time.time()}\n" if mode == "edited" else "")
                started = time.perf_counter()
                run = grade("02", text, options, 120.0, warm=warm)
                seconds = time.perf_counter() - started
                if run.returncode != 0:
                    print(run.output, file=sys.stderr)
                    return 1
                if attempt:  # the first is the warm-up
                    times.append(seconds)
            medians[mode] = statistics.median(times)
    finally:
        warm.stop()
    said = f"warm check ({args.device}), file unchanged {medians['unchanged']:.3f} s, edited {medians['edited']:.3f} s"
    print(f"{root}: {said}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
