"""Write docs/results/p08-ablation.md from the JSON of scripts/p08/tuned_ablation.py, kept beside it as
docs/results/data/p08-ablation.json. The page holds no figure that is not in that file; without the file it
says the ablation has not been measured yet, and how to measure it.

    python scripts/p08/ablation_page.py                 # rewrite the page from docs/results/data/p08-ablation.json
    python scripts/p08/ablation_page.py PATH.json       # copy PATH.json there first, then rewrite the page
    python scripts/p08/ablation_page.py --check         # exit 1 if the page differs from what the data gives
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "results" / "data" / "p08-ablation.json"
PAGE = ROOT / "docs" / "results" / "p08-ablation.md"
COMMAND = 'source .gpu/env.sh && python scripts/p08/tuned_ablation.py "$OUT/p08-ablation.json"'

HEAD = f"""# Puzzle 08: what each of `matmul_tuned`'s changes is worth

`matmul_tuned`'s bench case differs from `matmul_pipelined`'s in six things: the tile (128 x 256 x 64
against 64 x 64 x 32), the threads (256 against 128), the stages (4 against 3), the block order
(`T.use_swizzle` panels of 10 tile rows), the store of C (through a shared tile), and TileLang's warp
specialization (on; `matmul_pipelined` turns it off). `scripts/p08/tuned_ablation.py` measures them one at
a time at 4096³ and 8192³:

- **One change reverted**: `matmul_tuned` as shipped, and with each change undone alone, the others kept.
  The panel and the store need code changes: `matmul_variant` in the script is `matmul_tuned` with two
  switches, and `--compile-only` checks that with the shipped parameters it generates the same CUDA as
  `matmul_tuned` (and with `matmul_pipelined`'s the same as that kernel, warp specialization off).
- **One change added**: from `matmul_pipelined` as shipped, one change at a time until the kernel is
  `matmul_tuned`. The order matters: a change can be worth more or less depending on the ones before it.
- **Stream-K, one change**: `matmul_streamk` as shipped against the data-parallel `matmul_tuned` with the
  same tile, threads, stages (3), panels (8) and staged store: the schedule is the only difference.

Each variant is checked against the float64 reference with the grader's tolerance before and after its
timing. Each figure is repeated (`grader.pipeline.timing.repeated_ms`: every repetition a median of
CUDA-event timings over three rotating input sets, the variants and torch taking turns); the tables give
the minimum, median and maximum of the repetitions, and the ratios use the medians.

Command, run on the GPU from the repository root (then `python scripts/p08/ablation_page.py
$OUT/p08-ablation.json` here, which keeps the JSON as docs/results/data/p08-ablation.json):

```bash
{COMMAND}
```

Without a GPU, `python scripts/p08/tuned_ablation.py --compile-only` compiles every variant for sm_90a.
"""

NOT_MEASURED = """
## Measured

Not yet measured on the H200.
"""


def _ms(row: dict, key: str) -> str:
    return f"{row['ms'][key]:.4f}"


def _params(row: dict) -> str:
    params = row.get("params") or {}
    tile = "x".join(str(params[k]) for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K") if k in params)
    parts = [tile] if tile else []
    for key, name in (("THREADS", "threads"), ("STAGES", "stages"), ("PANEL", "panel"), ("CHUNK", "chunk")):
        if key in params:
            parts.append(f"{name} {params[key]}")
    if "STAGED" in params:
        parts.append("staged store" if params["STAGED"] else "direct store")
    if row.get("pass_configs", {}).get("tl.disable_warp_specialized"):
        parts.append("no warp specialization")
    return ", ".join(parts)


def _table(rows: list[dict], reference: dict | None, against: str) -> list[str]:
    lines = [
        f"| variant | parameters | correct | min ms | median ms | max ms | TFLOP/s | vs torch | {against} |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    previous = reference
    for row in rows:
        if "ms" not in row:
            error = (row.get("error") or "not run").splitlines()[0][:120].replace("|", "/")
            lines.append(f"| {row['label']} | {_params(row)} | no: {error} | - | - | - | - | - | - |")
            continue
        checks = {row.get("check"), row.get("check_after_timing")}
        correct = "yes" if checks == {"ok"} else "no"
        base = reference if against == "vs shipped" else previous
        ratio = f"{base['ms']['median'] / row['ms']['median']:.2f}x" if base and "ms" in base else "-"
        if base is row:
            ratio = "-"
        lines.append(
            f"| {row['label']} | {_params(row)} | {correct} | {_ms(row, 'min')} | {_ms(row, 'median')} | "
            f"{_ms(row, 'max')} | {row['tflops']:.0f} | {row['vs_torch']:.2f}x | {ratio} |"
        )
        previous = row
    return lines


def tables(document: dict) -> str:
    lines = [
        "",
        "## Measured",
        "",
        f"{document.get('date', 'Undated')}, on {document.get('device', 'the GPU')} ({document.get('sms', '?')} "
        f"SMs), TileLang {document.get('tilelang', '?')}, torch {document.get('torch', '?')} (CUDA "
        f"{document.get('cuda', '?')}), {document.get('repeats', '?')} repetitions per figure: "
        f"`{document.get('command', '')}`.",
        "",
        '"vs shipped" is `matmul_tuned` as shipped against the variant (below 1.00x: reverting that change',
        'made it slower by that factor); "vs the step before" is each step against the row above it.',
    ]
    for size in sorted({row["size"] for row in document["rows"]}):
        here = [row for row in document["rows"] if row["size"] == size]
        torch_row = next((row for row in here if row["group"] == "torch"), None)
        revert = [row for row in here if row["group"] == "revert"]
        path = [row for row in here if row["group"] == "path"]
        streamk = [row for row in here if row["group"] == "streamk"]
        shipped = revert[0] if revert else None
        lines += ["", f"### {size}³", ""]
        if torch_row:
            lines.append(
                f"torch.matmul (cuBLAS): {_ms(torch_row, 'median')} ms median ({_ms(torch_row, 'min')}-"
                f"{_ms(torch_row, 'max')}), {torch_row['tflops']:.0f} TFLOP/s."
            )
        if revert:
            lines += ["", "One change reverted:", ""] + _table(revert, shipped, "vs shipped")
        if path:
            lines += ["", "One change added, from `matmul_pipelined`:", ""] + _table(path, None, "vs the step before")
        if streamk:
            lines += ["", "Stream-K against the same kernel without it (one change):", ""]
            lines += _table(streamk, None, "vs the step before")
    return "\n".join(lines) + "\n"


def page() -> str:
    if not DATA.is_file():
        return HEAD + NOT_MEASURED
    return HEAD + tables(json.loads(DATA.read_text(encoding="utf-8")))


def main(argv: list[str]) -> int:
    given = [arg for arg in argv if not arg.startswith("--")]
    if given and Path(given[0]).resolve() != DATA.resolve():
        DATA.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(given[0], DATA)
    text = page()
    if "--check" in argv:
        current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""
        if current != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python scripts/p08/ablation_page.py")
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
