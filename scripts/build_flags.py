"""What nvcc's optimizer costs a build no GPU runs: one tilelang.compile per kernel and flag set, caches off.

    python scripts/build_flags.py

For each kernel (a case the CPU simulates, traced from solutions/ or a corpus file), the seconds of
``tilelang.compile`` for sm_90a with no extra flags, with ``-Xcicc -O0`` and with ``-Xcicc -O0 -Xptxas -O0``
(grader.pipeline.build.UNRUN_BUILD_FLAGS). Written for docs/results/check-times.md.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")

# (puzzle, kernel, case, the file the kernel is traced from: None for solutions/)
KERNELS = (
    ("08", "matmul_naive", "odd_127x129x131", "tests/concept/matmul_naive_without_gemm.py"),
    ("08", "matmul_naive", "odd_127x129x131", None),
    ("08", "matmul_tuned", "square_256", None),
    ("09", "conv1d_implicit", "small_20to24_300_k3", None),
    ("07", "flash_attention", "few_keys_50x37", None),
)
FLAGS = {"none": [], "-Xcicc -O0": ["-Xcicc", "-O0"], "UNRUN_BUILD_FLAGS": ["-Xcicc", "-O0", "-Xptxas", "-O0"]}


def main() -> None:
    import tilelang

    from grader.discover import load_module, load_puzzle, puzzle_files
    from grader.pipeline.trace import kernel_function, trace_tir

    tilelang.disable_cache()  # every compile is a real one
    print("| kernel (traced from) | case | " + " | ".join(FLAGS) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in FLAGS) + " |")
    for puzzle_id, function, case_name, corpus in KERNELS:
        solution = puzzle_files(ROOT / "solutions")[puzzle_id]
        path = ROOT / corpus if corpus else solution
        kernel = load_puzzle(load_module(solution)).kernel(function)
        case = kernel.case(case_name)
        tir = trace_tir(kernel_function(load_module(path), kernel), kernel, case, path)
        seconds = []
        for flags in FLAGS.values():
            started = time.perf_counter()
            tilelang.compile(tir, target={"kind": "cuda", "arch": "sm_90a"}, compile_flags=flags or None)
            seconds.append(f"{time.perf_counter() - started:.1f} s")
        print(f"| {puzzle_id} `{function}` ({corpus or 'solutions/'}) | `{case_name}` | " + " | ".join(seconds) + " |")


if __name__ == "__main__":
    main()
