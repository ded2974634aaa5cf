"""One line per known-wrong kernel from the JSON of a grader run over tests/wrong/.

    python scripts/wrong_table.py wrong.json
Only the kernel each file is about (its KERNEL constant) is shown.
"""

import json
import sys
from pathlib import Path

doc = json.loads(Path(sys.argv[1]).read_text())
for run in doc["runs"]:
    source = Path(run["file"])
    kernel = next(line.split('"')[1] for line in source.read_text().splitlines() if line.startswith("KERNEL ="))
    mine = [r for r in doc["results"] if r["file"] == run["file"] and r["kernel"] == kernel]
    verdicts = " ".join(f"{r['case']}={r['status']}" for r in mine)
    first_bad = next((r for r in mine if r["status"] != "passed"), None)
    why = f" | {first_bad['message']}; {first_bad['hint']}" if first_bad else " | NOT CAUGHT"
    print(f"{source.name:38} {verdicts}{why}")
