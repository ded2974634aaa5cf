"""SASS instructions of puzzle 10's one-token candidates, by opcode: python scripts/p10/sass.py NAME K=V ...

Compiles the candidate at the one-token case (M = 1, N = K = 8192, G = 128) for sm_90a, disassembles it with
cuobjdump (a CUDA toolkit's, so on the GPU host or wherever the toolkit has it) and counts the instructions
of the whole kernel by opcode: the K loop's share shows where a weight's instructions go.
"""

from __future__ import annotations

import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SIZES = {"M": 1, "N": 8192, "K": 8192, "NG": 64}


def main(argv: list[str]) -> int:
    import tilelang
    from tilelang.contrib import nvcc

    from scripts.p10 import candidates

    name, params = argv[0], {k: int(v) for k, v in (kv.split("=") for kv in argv[1:])}
    tir = getattr(candidates, name).get_tir(**SIZES, **params)
    kernel = tilelang.compile(tir, target={"kind": "cuda", "arch": "sm_90a"})
    from tilelang.env import CUTLASS_INCLUDE_DIR, TILELANG_TEMPLATE_PATH

    options = ["-std=c++20", "-I" + TILELANG_TEMPLATE_PATH, "-I" + CUTLASS_INCLUDE_DIR]  # as TileLang builds it
    cubin = nvcc.compile_cuda(kernel.get_kernel_source(), target_format="cubin", arch="sm_90a", options=options)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "kernel.cubin"
        path.write_bytes(cubin)
        sass = subprocess.run(["cuobjdump", "-sass", str(path)], capture_output=True, text=True, check=True).stdout
    opcodes = collections.Counter(re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", sass))
    print(f"{name} {params}: {sum(opcodes.values())} SASS instructions")
    print(", ".join(f"{op} {count}" for op, count in opcodes.most_common(30)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
