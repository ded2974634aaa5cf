"""Registers and SASS instructions of puzzle 10's one-token kernels: python scripts/p10/sass.py NAME K=V ...

NAME is a candidate of scripts/p10/candidates.py or `dequant_gemv` (the rung). It is compiled at the one-token
case (M = 1, N = K = 8192, G = 128) for sm_90a with nvcc as TileLang builds it, and ptxas's register count is
printed (no GPU needed). Where a CUDA toolkit's cuobjdump is on the PATH (the GPU host), the kernel's SASS is
counted by opcode too: the K loop's share shows where a weight's instructions go.
"""

from __future__ import annotations

import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SIZES = {"M": 1, "N": 8192, "K": 8192, "NG": 64}


def function(name: str):
    if name == "dequant_gemv":
        from solutions.p10_dequant_matmul import dequant_gemv

        return dequant_gemv
    from scripts.p10 import candidates

    return getattr(candidates, name)


def build_cubin(source: str, cubin: Path) -> int:
    """``source`` (a kernel's CUDA from TileLang) built for sm_90a into ``cubin`` with nvcc as TileLang builds it;
    returns the registers a thread that ptxas reports."""
    from tilelang.env import CUTLASS_INCLUDE_DIR, TILELANG_TEMPLATE_PATH

    cu = cubin.with_suffix(".cu")
    cu.write_text(source)
    flags = ["-std=c++20", "-I" + TILELANG_TEMPLATE_PATH, "-I" + CUTLASS_INCLUDE_DIR]  # as TileLang builds it
    built = subprocess.run(
        ["nvcc", *flags, "--cubin", "-O3", "-arch", "sm_90a", "--ptxas-options=-v", "-o", str(cubin), str(cu)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(re.search(r"Used (\d+) registers", built.stderr).group(1))


def main(argv: list[str]) -> int:
    import tilelang

    name, params = argv[0], {k: int(v) for k, v in (kv.split("=") for kv in argv[1:])}
    kernel = tilelang.compile(function(name).get_tir(**SIZES, **params), target={"kind": "cuda", "arch": "sm_90a"})
    with tempfile.TemporaryDirectory() as scratch:
        cubin = Path(scratch) / "kernel.cubin"
        registers = build_cubin(kernel.get_kernel_source(), cubin)
        print(f"{name} {params}: {registers} registers a thread (ptxas)")
        if shutil.which("cuobjdump") is None:
            return 0
        sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    opcodes = collections.Counter(re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", sass))
    print(f"{sum(opcodes.values())} SASS instructions: " + ", ".join(f"{op} {n}" for op, n in opcodes.most_common(30)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
