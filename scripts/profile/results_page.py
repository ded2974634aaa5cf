"""Write docs/results/h200-profiles.md from the --json documents of the H200 profile runs kept beside it
(docs/results/data/h200-profiles/pNN.json, written by scripts/profile/h200_profile.sh). The page holds no
figure that is not in those files; tests/test_profile.py checks it is up to date.

    python scripts/profile/results_page.py          # rewrite the page
    python scripts/profile/results_page.py --check  # exit 1 if the page differs from what the data gives
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "results" / "data" / "h200-profiles"
# Later runs, newest last: a puzzle's pNN.json here replaces the one in DATA (the kernels re-profiled after a change)
LATER = [
    ROOT / "docs" / "results" / "data" / "h200-2026-12-03" / "profiles",
    ROOT / "docs" / "results" / "data" / "h200-profiles-p09-p10-2026-12-03" / "profiles",
]
PAGE = ROOT / "docs" / "results" / "h200-profiles.md"

HEAD = """# Profiles on the H200 (Nsight Compute)

What `--profile` measured for the bench case of every kernel in `solutions/`, on one NVIDIA H200 (sm_90a,
132 SMs, Nsight Compute 2025.3.1, clocks left alone: `--clock-control none`), 2026-12-02. Commands, run on the
device from the repository root:

```bash
bash scripts/profile/h200_profile.sh "05 06 07 08 09 10" p05-10   # run-p05-10.txt
bash scripts/profile/h200_profile.sh "07 01 02 03 04" p01-04-07   # run-p01-04-07.txt
python -m pytest -q -m gpu tests/test_profile.py -rA --durations=10  # gpu-tests.txt: 8 passed
```

Each runs `python -m grader NN --solutions --profile K1,K2,... --json pNN.json` per puzzle; the raw logs, with
every report as a learner sees it, and the JSON documents are in `docs/results/data/h200-profiles/`.
Puzzles 01-04 come from the second run. Puzzles 07 and 08 come from a third, on 2026-12-03 at commit 9031bb1,
after puzzle 07's kernels moved to the CUDA cores and 08 gained `flash_attention_tensor_cores` and the
`last_wave` case: `bash scripts/profile/h200_profile.sh "07 08" p07-08` (log `profile_p07-08.txt`, JSON
documents in `docs/results/data/h200-2026-12-03/profiles/`). Puzzles 09 and 10 come from a fourth, later on
2026-12-03 at commit f325acb (their kernels unchanged since 9031bb1), which adds `conv1d_channels_last` and the
one-token decode case: `bash scripts/profile/h200_profile.sh "09 10" p09-10` (log `profile_p09-10.txt`, JSON
documents in `docs/results/data/h200-profiles-p09-p10-2026-12-03/profiles/`). In the first, ncu's
bytes-per-sector ratio was kept as 0 for kernels whose global loads are all `cp.async` or TMA (it does not count
them); the grader now leaves that figure out, and so does this page.

The time is one launch under the profiler, not the bench's median: compare kernels here by their figures, and
times by `--bench`. "Tensor" is the Tensor Core pipe's busy share of the elapsed cycles; "sectors" the share of
each 32-byte sector fetched by plain loads that the kernel used (absent: no plain global loads); "conflicts" the
shared-memory wavefronts that were bank-conflict replays; "stall" the most common reason a warp could not issue,
as a share of all stall reasons.

| puzzle | kernel | case | us | DRAM | Tensor | FMA | occupancy (limit) | L2 hit | sectors | conflicts | stall |
| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |
"""


def percent(value: object) -> str:
    return f"{value:.0f}%" if isinstance(value, (int, float)) else "-"


def figures(result: dict) -> dict:
    yours = dict(result["profile"]["yours"])
    if yours.get("sector_use_pct") == 0:  # the first run's parser; see the page's head
        del yours["sector_use_pct"]
    return yours


def results() -> list[dict]:
    files = {path.name: path for directory in (DATA, *LATER) for path in sorted(directory.glob("p*.json"))}
    found = []
    for name in sorted(files):
        found += json.loads(files[name].read_text())["results"]
    return found


def page() -> str:
    rows, advice = [], []
    for r in results():
        y = figures(r)
        stall = y.get("stalls") or []
        top = f"{stall[0][0].replace('_', ' ')} {stall[0][1]:.0f}%" if stall else "-"
        occupancy = f"{percent(y.get('achieved_occupancy_pct'))} ({y.get('occupancy_limit', '-')})"
        rows.append(
            f"| {r['puzzle']} | `{r['kernel']}` | {r['case']} | {y.get('duration_us', 0):,.1f} | "
            f"{percent(y.get('dram_pct'))} | {percent(y.get('tensor_pct'))} | {percent(y.get('fma_pct'))} | "
            f"{occupancy} | {percent(y.get('l2_hit_pct'))} | {percent(y.get('sector_use_pct'))} | "
            f"{percent(y.get('bank_conflict_pct'))} | {top} |"
        )
        from grader.pipeline.profile.advice import advise

        advice.append(f"- **{r['puzzle']} `{r['kernel']}`, {r['case']}:** {advise(y, y)[0]}")
    tail = "\n## What the grader advises for each\n\nThe first sentence `--profile` prints, from the figures above:\n\n"
    return HEAD + "\n".join(rows) + "\n" + tail + "\n".join(advice) + "\n"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    text = page()
    if "--check" in sys.argv:
        sys.exit(0 if PAGE.exists() and PAGE.read_text() == text else 1)
    PAGE.write_text(text)
    print(f"wrote {PAGE.relative_to(ROOT)}")
