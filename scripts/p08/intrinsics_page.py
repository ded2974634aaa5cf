"""Write docs/results/p08-intrinsics.md from the --json document of scripts/p08/intrinsics.py kept beside it
(docs/results/data/p08-intrinsics.json). The page holds no figure that is not in that file; without the file it
says the experiment has not been measured yet, and how to measure it.

    python scripts/p08/intrinsics_page.py          # rewrite the page
    python scripts/p08/intrinsics_page.py --check  # exit 1 if the page differs from what the data gives
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "results" / "data" / "p08-intrinsics.json"
PAGE = ROOT / "docs" / "results" / "p08-intrinsics.md"
COMMAND = "source .gpu/env.sh && python scripts/p08/intrinsics.py --json docs/results/data/p08-intrinsics.json"

HEAD = f"""# Puzzle 08's intrinsics rung: T.gemm against the emitters

Puzzle 08's optional section "Beyond `T.gemm`: the intrinsics rung" writes the GEMM of `matmul_tuned` (fp16 in,
fp32 accumulate, fp16 out) twice more with TileLang's Tensor Core emitters instead of `T.gemm`, in
`scripts/p08/intrinsics.py`: `matmul_mma_sync` (`T.TensorCoreIntrinEmitter`: `ldmatrix` and `mma.sync`
m16n8k16, 8 warps of 64 x 64) and `matmul_wgmma` (`T.WGMMATensorCoreIntrinEmitter`: `wgmma` m64n128k16 from
shared memory, 2 warpgroups of 128 x 128). Both keep `matmul_tuned`'s bench block: a 128 x 256 x 64 tile,
4 stages, panels of 10, the staged store. Each is checked against the reference on the course's inputs at
4096³ (`matmul_tuned`'s bench case and tolerance), then timed with `grader.pipeline.timing.repeated_ms`
(the kernels and torch in turns, each repetition a median of CUDA-event timings).

Command, run on the device from the repository root (then `python scripts/p08/intrinsics_page.py` here):

```bash
{COMMAND}
```

Without a GPU, `python scripts/p08/intrinsics.py --compile-only` compiles both for sm_90a and prints the lines
of the generated CUDA and the PTX opcodes that carry the instructions. On the CPU machine (nvcc 13.0) it shows,
per thread and K step of 64: `matmul_mma_sync` 16 `ldmatrix.sync.aligned.x4.m8n8.shared.b16`, 16
`ldmatrix.sync.aligned.x4.trans.m8n8.shared.b16` and 128 `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`;
`matmul_wgmma` 8 `wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16` between one fence, commit and wait, the
same wgmma lines `T.gemm` generates for `matmul_tuned`. Both build with TileLang's producer warpgroup (384
threads, 168 registers, no spills, 193 KiB of shared memory, TMA loads and store).

Against `T.gemm` (each variant's lines from `generated_source`, `matmul_tuned`'s from `tilelang.lower` of its
bench block, read side by side): on sm_90a, `matmul_wgmma`'s `wgmma_ss` lines and descriptor modes are
`matmul_tuned`'s, except that its descriptors are built from each stage's address instead of offset from the
first stage's, and the first K step sets scale-d to 0; for sm_80, where `T.gemm` takes the `mma.sync` path with
the same 2 x 4 warp split, `matmul_mma_sync`'s `ldmatrix` and `mma_sync` lines are `matmul_tuned`'s line for line
but for the names of the register arrays. Only the store of the accumulator differs there.

## Notes (TileLang 0.1.15)

- The emitters come from `tilelang.language` (`T.TensorCoreIntrinEmitter`, `T.WGMMATensorCoreIntrinEmitter`).
  The WGMMA emitter's `wgmma` method wants buffer regions (`tilelang.utils.language.to_buffer_region`) and the
  shared layouts given to it before the call (`_assign_a_shared_layout`, `_assign_b_shared_layout`), the same
  layouts the kernel annotates.
- A `T.clear` of the wgmma accumulator (a fragment annotated with the emitter's `make_mma_store_layout`) before a
  warp-specialized `T.Pipelined` loop came out guarded by `if (threadIdx.x < 256)` inside the consumer branch
  (threads 128-383), with both warp splits below, so the second consumer warpgroup would start from whatever its
  registers held; with `tl.disable_warp_specialized` the guard is gone, and `matmul_tuned`'s `T.clear` (the
  layout inferred from `T.gemm`) has none.
  `matmul_wgmma` zeroes the accumulator with the first K step instead (`clear_accum=k == 0`, wgmma's scale-d).
- With the 8 warps stacked along M (`block_row_warps=8`, one warpgroup per 64 rows) the emitter fenced 256
  accumulator registers of a 128-float array (`wgmma_accum_regs` counts the whole block's rows); the kernel
  uses `T.gemm`'s own split for this tile instead, 4 x 2 warps, where the count is 128.
- `stmatrix` of the mma.sync emitter writes plain 4-byte stores (`uint1`), not the `stmatrix` instruction.
"""

NOT_MEASURED = """
## Measured

Not yet measured on the H200.
"""


def table(figures: dict) -> str:
    clocks = figures.get("gpu") or {}
    clock = f" (SM clock {clocks['sm_clock_mhz']} MHz at the end)" if clocks.get("sm_clock_mhz") else ""
    lines = [
        "",
        "## Measured",
        "",
        f"{figures.get('date', 'Undated')}, on {figures.get('device', 'the GPU')}{clock}, TileLang "
        f"{figures.get('tilelang', '?')}, torch {figures.get('torch_version', '?')}: {figures['size']}³, "
        f"{figures['repeats']} repetitions per kernel.",
        "",
        "| kernel | correct | min ms | median ms | max ms | TFLOP/s | vs torch |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in figures["rows"]:
        if "median_ms" not in row:
            lines.append(f"| `{row['name']}` | no: {row['error']} | - | - | - | - | - |")
            continue
        verdict = "yes" if row["ok"] else f"no: {row['error']}"
        ratio = f"{row['vs_torch']:.2f}x" if "vs_torch" in row and row["name"] != "torch" else "-"
        lines.append(
            f"| `{row['name']}` | {verdict} | {row['min_ms']:.4f} | {row['median_ms']:.4f} | {row['max_ms']:.4f} "
            f"| {row['tflops']:.0f} | {ratio} |"
        )
    return "\n".join(lines) + "\n"


def page() -> str:
    if not DATA.is_file():
        return HEAD + NOT_MEASURED
    return HEAD + table(json.loads(DATA.read_text(encoding="utf-8")))


def main(argv: list[str]) -> int:
    text = page()
    if "--check" in argv:
        current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""
        if current != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python scripts/p08/intrinsics_page.py")
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
