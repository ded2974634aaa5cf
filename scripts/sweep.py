"""Try block parameters for one kernel on a GPU: correctness on the case, then time vs torch.

    python scripts/sweep.py 08 matmul_tuned large_4096 '{"STAGES": 3}' '{"STAGES": 4, "PANEL": 8}'
    python scripts/sweep.py --file=my_p09.py 09 conv1d_im2col large_256_131072_k5 '{}'
Each JSON object overrides the case's params; a "_pass" key holds TileLang pass configs for that
variant, e.g. '{"_pass": {"tl.disable_tma_lower": true}}'. Prints one line per variant, best last.
"""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")


def main(argv: list[str]) -> None:
    import torch

    from grader.discover import course_root, load_module, load_puzzle, puzzle_files
    from grader.pipeline.build import compile_tir
    from grader.pipeline.compare import compare
    from grader.pipeline.inputs import launch, make_inputs, poisoned_outputs, reference_outputs
    from grader.pipeline.timing import INPUT_SETS, median_ms
    from grader.pipeline.trace import jit_options, trace_tir
    from grader.spec import Case

    files = [a.split("=", 1)[1] for a in argv if a.startswith("--file=")]
    puzzle_id, function, case_name, *overrides = [a for a in argv if not a.startswith("--file=")]
    path = Path(files[0]) if files else puzzle_files(course_root() / "solutions")[puzzle_id]
    module = load_module(path)
    kernel = load_puzzle(module).kernel(function)
    base = kernel.case(case_name)
    builds = []  # trace on this thread (the tracer is not thread-safe), compile in threads (nvcc is a process)
    for text in overrides or ["{}"]:
        override = json.loads(text)
        pass_configs = override.pop("_pass", None)
        params = {**base.params, **override}
        case = Case(base.name, base.sizes, params, base.seed, bench=True)
        options = jit_options(getattr(module, function))
        if pass_configs:
            options["pass_configs"] = {**options.get("pass_configs", {}), **pass_configs}
            params = {**params, "_pass": pass_configs}
        try:
            builds.append((params, case, trace_tir(getattr(module, function), kernel, case, path), options))
        except Exception as error:  # one bad tiling must not end the sweep
            print(f"{json.dumps(params):90} trace failed: {str(error).splitlines()[0][:100]}", flush=True)

    def build(item):
        params, case, tir, options = item
        try:
            return compile_tir(tir, "cuda", path, kernel, options)
        except Exception as error:  # noqa: BLE001
            return error

    with ThreadPoolExecutor(8) as pool:
        compiled_all = list(pool.map(build, builds))
    rows = []
    for (params, case, _, _), compiled in zip(builds, compiled_all):
        if isinstance(compiled, Exception):
            print(f"{json.dumps(params):90} build failed: {str(compiled).splitlines()[0][:100]}", flush=True)
            continue
        inputs, outputs = make_inputs(kernel, case, "cuda"), poisoned_outputs(kernel, case, "cuda")
        launch(compiled, inputs, outputs)
        ok = all(
            compare(t.name, got, want.to(got.device), kernel.tolerance_for(t.dtype)).ok
            for t, got, want in zip(kernel.outputs, outputs, reference_outputs(kernel, inputs))
        )
        sets = [make_inputs(kernel, case, "cuda", 1000 * (i + 1)) for i in range(INPUT_SETS)]
        ours = median_ms(lambda args, c=compiled, o=outputs: c(*args, *o), sets)
        theirs = median_ms(lambda args: kernel.baseline(*args), sets)
        rate = ""
        if kernel.flops:
            rate += f" {kernel.flops(case.sizes) / ours / 1e9:7.1f} TFLOP/s"
        if kernel.bytes_moved:
            rate += f" {kernel.bytes_moved(case.sizes) / ours / 1e6:6.0f} GB/s"
        verdict = "ok " if ok else "BAD"
        line = f"{json.dumps(params):90} {verdict} {ours:8.4f} ms{rate}  torch {theirs:8.4f} ms  {theirs / ours:5.2f}x"
        print(line, flush=True)
        rows.append((theirs / ours if ok else 0.0, line))
        torch.cuda.empty_cache()
    if rows:
        print("best:", max(rows)[1])


if __name__ == "__main__":
    main(sys.argv[1:])
