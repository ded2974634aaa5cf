"""What puzzle 08's notes say of builds no GPU has to run, printed from the builds themselves (sm_90a, on any
machine with nvcc): matmul_tuned's registers and spills at 256 and 128 threads, and what BLOCK_K = 8 does to
matmul_naive and matmul_shared. docs/results/p08-notes.md is written from this output (scripts/notes_page.py).

    python scripts/p08/cpu_facts.py > docs/results/data/FOLDER/p08-cpu-facts.txt
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import tilelang  # noqa: E402

from grader.discover import load_module  # noqa: E402
from grader.teaching.experiments import kernel_source, resource_usage, table  # noqa: E402

SQUARE = {"M": 4096, "N": 4096, "K": 4096}
TUNED = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 4, "PANEL": 10}  # the bench case's block
SMALL = {"M": 256, "N": 256, "K": 256, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 8}


def main() -> int:
    p08 = load_module(ROOT / "solutions" / "p08_matrix.py")
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    print(f"tilelang {tilelang.__version__}, sm_90a, {nvcc}")
    print("== matmul_tuned at 4096^3, its bench block, THREADS 256 and 128 (resource_usage)")
    rows = [resource_usage(p08.matmul_tuned, f"THREADS={threads}", **SQUARE, **TUNED, THREADS=threads)
            for threads in (256, 128)]  # fmt: skip
    print(table(rows))
    print()
    print("== BLOCK_K = 8 at 256^3, 64 x 64 tiles (kernel_source)")
    for name in ("matmul_naive", "matmul_shared"):
        try:
            source = kernel_source(getattr(p08, name), **SMALL)
        except Exception as error:  # noqa: BLE001 (the fact recorded is that it does not build)
            print(f"{name}: does not build: {type(error).__name__}: {str(error).strip().splitlines()[-1][:160]}")
            continue
        calls = sorted(set(re.findall(r"tl::(mma_sync<[^>]*>|wgmma_\w+|gemm_\w+)", source)))
        print(f"{name}: builds; its MMA calls: {', '.join(calls) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
