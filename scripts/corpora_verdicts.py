"""Verdicts of scripts/h200_corpora.sh's gradings: a right kernel must pass every case (exit 0), a wrong one
must fail some case (exit 1). Prints one line per file that disagrees, per-file case counts, and totals.

    python scripts/corpora_verdicts.py right|wrong DIR
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def main(which: str, folder: Path) -> int:
    totals: Counter[str] = Counter()
    disagree = []
    for todo in (folder / "todo.txt").read_text().splitlines():
        puzzle_id, kernel, path = todo.split()
        stem = Path(path).stem
        base = folder / f"p{puzzle_id}" / stem
        rc_file, json_file = base.with_suffix(".rc"), base.with_suffix(".json")
        if not rc_file.exists() or not json_file.exists():
            totals["not graded"] += 1
            disagree.append(f"p{puzzle_id}/{stem}: not graded (no result)")
            continue
        code = int(rc_file.read_text().split()[0])
        results = [r for r in json.loads(json_file.read_text())["results"] if r["kernel"] == kernel]
        statuses = Counter(r["status"] for r in results)
        failing = [f"{r['case']}: {r['status']}: {r['message'][:160]}" for r in results if r["status"] != "passed"]
        agrees = (code == 0 and set(statuses) == {"passed"}) if which == "right" else (code == 1 and bool(failing))
        totals["agree" if agrees else "disagree"] += 1
        counts = " ".join(f"{k}={v}" for k, v in sorted(statuses.items()))
        print(f"{'ok ' if agrees else 'BAD'} p{puzzle_id}/{stem} exit={code} {counts}")
        if not agrees:
            disagree.append(f"p{puzzle_id}/{stem}: exit {code}, {counts}; " + " | ".join(failing[:3]))
        elif which == "wrong":
            print("      " + " | ".join(failing[:2]))
    print(f"\n{which}: {dict(totals)}")
    for line in disagree:
        print("DISAGREES", line)
    return 0 if not disagree else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
