"""Which of puzzle 09's conv1d_implicit launches fault on the GPU, and under which lowering?

    python scripts/p09/implicit_fault.py    # on a GPU: one line per variant, "ok", "WRONG" or the CUDA error

On the H200, `python -m grader 09 --solutions` crashed on conv1d_implicit's tail case (40 to 72
channels, L = 1000, 5 taps) with "an illegal instruction was encountered", while the bench case ran.
Each variant here runs the reference kernel once in a child process (a faulting kernel leaves the CUDA
context unusable): the tail sizes with warp specialization or TMA lowering turned off, and sizes that
keep one of the three tails (C_in, C_out, L) at a time, to find what the fault needs.
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"BLOCK_O": 32, "BLOCK_L": 64, "BLOCK_C": 16, "STAGES": 2}
BENCH = {"BLOCK_O": 128, "BLOCK_L": 128, "BLOCK_C": 16, "STAGES": 3}
WS_OFF = {"tl.disable_warp_specialized": True}
TMA_OFF = {"tl.disable_tma_lower": True}


def variant(label, c_in, c_out, length, block, configs, taps=5, kernel="conv1d_implicit"):
    """One launch: the reference kernel, or one of scripts/p09/implicit_variants.py's by name."""
    module = "solutions.p09_conv1d" if kernel == "conv1d_implicit" else "scripts.p09.implicit_variants"
    return dict(
        label=label,
        c_in=c_in,
        c_out=c_out,
        length=length,
        block=block,
        configs=configs,
        taps=taps,
        module=module,
        kernel=kernel,
    )


# The reference is compiled from its traced TIR with these pass configs only (its decorator's, which
# turn warp specialization off, are not applied), so {} is TileLang's default build: warp-specialized.
VARIANTS = [
    variant("tail case, warp-specialized", 40, 72, 1000, SMALL, {}),
    variant("tail case, warp specialization off (what the course runs)", 40, 72, 1000, SMALL, WS_OFF),
    variant("tail case, TMA lowering off", 40, 72, 1000, SMALL, TMA_OFF),
    variant("only a C_in tail", 40, 64, 1024, SMALL, {}),
    variant("only a C_out tail", 48, 72, 1024, SMALL, {}),
    variant("only an L tail", 48, 64, 1000, SMALL, {}),
    variant("no tail", 48, 64, 1024, SMALL, {}),
    variant("tail case, bench block", 40, 72, 1000, BENCH, {}),
    variant("bench sizes, small block", 256, 256, 1 << 14, SMALL, {}),
    variant("one tap, no shift", 48, 64, 1024, SMALL, {}, taps=1),
    variant("three taps", 48, 64, 1024, SMALL, {}, taps=3),
    variant("weights picked into shared", 48, 64, 1024, SMALL, {}, kernel="weights_in_shared"),
    variant("weights picked into shared, bench block", 256, 256, 1 << 14, BENCH, {}, kernel="weights_in_shared"),
    variant("no weights tile, windows only", 48, 64, 1024, SMALL, {}, kernel="windows_only"),
    variant("no weights tile, windows only, bench block", 256, 256, 1 << 14, BENCH, {}, kernel="windows_only"),
]

CHILD = """
import sys, torch, tilelang
sys.path.insert(0, {root!r})
from solutions.p09_conv1d import conv1d_channels_reference
from {module} import {kernel} as kernel_function
tir = kernel_function.get_tir(C_in={c_in}, C_out={c_out}, L={length}, K={taps}, **{block!r})
kernel = tilelang.compile(tir, pass_configs={configs!r})
source = kernel.get_kernel_source()
print("lowering:", "warp-specialized" if "warpgroup_reg_alloc" in source else "not warp-specialized",
      "with TMA" if "tma_load" in source else "without TMA")
torch.manual_seed(0)
X = torch.randn({c_in}, {length}, device="cuda", dtype=torch.float16)
W = torch.randn({c_out}, {c_in}, {taps}, device="cuda", dtype=torch.float16)
Y = kernel(X, W)
torch.cuda.synchronize()
error = (Y.double() - conv1d_channels_reference(X.double(), W.double())).abs().max().item()
print("ran: max abs error", round(error, 3), "ok" if error < 0.5 else "WRONG")
"""


def run(variant: dict) -> str:
    code = CHILD.format(root=str(ROOT), **{k: v for k, v in variant.items() if k != "label"})
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines()]
    shown = [line for line in lines if line.startswith(("lowering", "ran:")) or "rror:" in line]
    v = variant
    where = f"{v['kernel']}, {v['c_in']}->{v['c_out']}, L={v['length']}, K={v['taps']}, {v['block']}, {v['configs']}"
    return f"{v['label']} ({where}): exit {done.returncode}\n    " + "\n    ".join(shown[:3])


def main() -> int:
    with ThreadPoolExecutor(4) as pool:
        for report in pool.map(run, VARIANTS):
            print(report, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
