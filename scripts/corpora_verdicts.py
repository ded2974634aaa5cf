"""Verdicts of the corpora graded on the GPU (``python -m scripts.gpu_check corpora``): a right kernel must pass
every case (exit 0), a wrong one must fail some case (exit 1). Prints one line per file, the files that disagree,
and totals.

    python -m scripts.corpora_verdicts right|wrong PART_FOLDER   # the folder holding the part's manifest.json
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from tests.corpora import declared

ROOT = Path(__file__).resolve().parent.parent


def kernel_of(path: Path) -> str:
    """The KERNEL = "..." line a corpus file declares, or ""."""
    return declared(path.read_text(), "KERNEL")


def main(which: str, folder: Path) -> int:
    totals: Counter[str] = Counter()
    disagree = []
    steps = json.loads((folder / "manifest.json").read_text())["steps"]
    for step in (s for s in steps if s["log"].startswith(f"{which}/")):
        name = step["log"].removesuffix(".txt")  # KIND/pNN/STEM
        source = ROOT / "tests" / f"{name}.py"
        json_file = folder / f"{name}.json"
        if not json_file.exists():
            totals["not graded"] += 1
            disagree.append(f"{name}: not graded (exit {step['exit']}, no result)")
            continue
        kernel = kernel_of(source)
        code = step["exit"]
        results = [r for r in json.loads(json_file.read_text())["results"] if not kernel or r["kernel"] == kernel]
        statuses = Counter(r["status"] for r in results)
        failing = [f"{r['case']}: {r['status']}: {r['message'][:160]}" for r in results if r["status"] != "passed"]
        agrees = (code == 0 and set(statuses) == {"passed"}) if which == "right" else (code == 1 and bool(failing))
        totals["agree" if agrees else "disagree"] += 1
        counts = " ".join(f"{k}={v}" for k, v in sorted(statuses.items()))
        print(f"{'ok ' if agrees else 'BAD'} {name} exit={code} {counts}")
        if not agrees:
            disagree.append(f"{name}: exit {code}, {counts}; " + " | ".join(failing[:3]))
        elif which == "wrong":
            print("      " + " | ".join(failing[:2]))
    print(f"\n{which}: {dict(totals)}")
    for line in disagree:
        print("DISAGREES", line)
    return 0 if not disagree else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
