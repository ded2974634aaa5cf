"""What the sandbox itself costs one check: the cold path's launcher against a plain interpreter start,
and the warm path's fork-and-enter against a plain fork (medians of --repeat runs).

    python scripts/sandbox_cost.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def median_ms(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def forked(confine: bool, folder: Path) -> None:
    from grader.processes import sandbox

    pid = os.fork()
    if pid == 0:
        if confine:
            sandbox.enter(folder, [])
        os._exit(0)
    os.waitpid(pid, 0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        plain = [sys.executable, "-c", "pass"]
        launched = [sys.executable, "-m", "grader.processes.sandbox", work, "--", *plain]
        cold = median_ms(lambda: subprocess.run(plain, check=True, cwd=ROOT), args.repeat)
        cold_confined = median_ms(lambda: subprocess.run(launched, check=True, cwd=ROOT), args.repeat)
        warm = median_ms(lambda: forked(False, Path(work)), args.repeat)
        warm_confined = median_ms(lambda: forked(True, Path(work)), args.repeat)
    print(f"cold: an interpreter {cold:.1f} ms, through the sandbox's launcher {cold_confined:.1f} ms")
    print(f"warm: a fork {warm:.1f} ms, a fork that enters the sandbox {warm_confined:.1f} ms")
    added = (cold_confined - cold, warm_confined - warm)
    print(f"the sandbox adds {added[0]:.1f} ms to a cold check, {added[1]:.1f} ms to a warm one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
