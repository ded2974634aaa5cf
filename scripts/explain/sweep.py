"""Explain every simulated case of every reference kernel (block 0, or the block of the first wrong element) and
print one line per case: seconds, grid, steps kept, steps without a source line, the ops seen, any problem.

    PYTHONPATH=. python scripts/explain/sweep.py > docs/results/data/explain-sweep.txt
"""

from __future__ import annotations

import time
from pathlib import Path

from grader.discover import load_module, load_puzzle, puzzle_files
from grader.pipeline.execute import reversed_blocks
from grader.pipeline.explain import explain_case
from grader.pipeline.inputs import make_inputs, poisoned_outputs
from grader.pipeline.trace import kernel_function, trace_tir


def line(puzzle_id: str, path: Path, module, kernel, case) -> str:
    started = time.time()
    tir = trace_tir(kernel_function(module, kernel), kernel, case, path)

    def fresh():
        return make_inputs(kernel, case, "cpu", 0), poisoned_outputs(kernel, case, "cpu")

    view = explain_case(tir, kernel, case, fresh, path.read_text(), reverse_blocks=reversed_blocks(kernel, case))
    unlined = sum(1 for step in view.steps if not step.line)
    ops = ",".join(sorted({step.op for step in view.steps}))
    return (
        f"{puzzle_id} {kernel.function:28} {case.name:24} {time.time() - started:5.1f}s grid={view.grid} "
        f"steps={len(view.steps)} truncated={view.truncated} without_line={unlined} problem={view.problem!r} ops={ops}"
    )


def main() -> None:
    solutions = puzzle_files(Path("solutions"))
    for puzzle_id, path in sorted(solutions.items()):
        module = load_module(path)
        for kernel in load_puzzle(module).kernels:
            for case in [c for c in kernel.cases if c.simulate]:
                try:
                    print(line(puzzle_id, path, module, kernel, case), flush=True)
                except Exception as error:  # a sweep reports every case, whatever one of them does
                    print(f"{puzzle_id} {kernel.function} {case.name} EXCEPTION {error!r}"[:300], flush=True)


if __name__ == "__main__":
    main()
