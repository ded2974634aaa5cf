"""Does TileLang 0.1.15's warp-specialized pipeline still fault on puzzle 09's conv1d_im2col?

    python scripts/p09/ws_fault.py    # on a GPU: prints "ok" or the CUDA error, exit 0 either way

The course compiles conv1d_im2col with TL_DISABLE_WARP_SPECIALIZED. This compiles the same kernel at
its bench case with warp specialization left on, runs it once in a child process (a faulting kernel
leaves the CUDA context unusable), and compares it with the one the course runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIZES = {"C_in": 256, "L": 131072, "C_out": 256, "K": 5}
PARAMS = {"BLOCK_O": 128, "BLOCK_L": 128, "BLOCK_C": 32, "STAGES": 3, "THREADS": 128}

CHILD = """
import sys, torch, tilelang
sys.path.insert(0, {root!r})
from solutions.p09_conv1d import conv1d_im2col, conv1d_channels_reference
tir = conv1d_im2col.get_tir(**{sizes!r}, **{params!r})
kernel = tilelang.compile(tir, pass_configs={{"tl.disable_warp_specialized": {off}}})
source = kernel.get_kernel_source()
print("warp-specialized:", "warpgroup_reg_alloc" in source or "producer" in source)
X = torch.randn(256, 131072, device="cuda", dtype=torch.float16)
W = torch.randn(256, 256, 5, device="cuda", dtype=torch.float16)
Y = kernel(X, W)
torch.cuda.synchronize()
error = (Y.double() - conv1d_channels_reference(X.double(), W.double())).abs().max().item()
print("ran: max abs error", error)
"""


def main() -> int:
    for label, off in (("warp specialization off (what the course runs)", True), ("warp specialization on", False)):
        code = CHILD.format(root=str(ROOT), sizes=SIZES, params=PARAMS, off=off)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        lines = [line for line in (done.stdout + done.stderr).splitlines() if "INFO" not in line]
        print(f"{label}: exit {done.returncode}")
        shown = [line for line in lines if line.startswith(("warp-specialized", "ran:")) or "rror" in line]
        for line in shown[:6]:
            print("   ", line.strip()[:240])
    return 0


if __name__ == "__main__":
    sys.exit(main())
