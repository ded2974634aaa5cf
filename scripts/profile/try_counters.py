"""Nsight Compute through grader.processes.profiler.counters on solution kernels, without the judge: each
kernel's bench case traced from solutions/, compiled, and measured once. Prints the figures and the seconds
each took. Usage (GPU): python scripts/profile/try_counters.py 01:copy_tiles 08:matmul_tuned"""

import json
import sys
import time
from pathlib import Path

import torch

from grader.devices import Device
from grader.discover import load_module, load_puzzle
from grader.pipeline.context import Context
from grader.processes.judge import gpu_profile
from grader.processes.profiler import counters, reference_build

for item in sys.argv[1:]:
    puzzle_id, function = item.split(":")
    spec = next(Path("solutions").glob(f"p{puzzle_id}_*.py"))
    device = Device("cuda", torch.cuda.get_device_name(), "cuda", gpu_profile(torch))
    puzzle = load_puzzle(load_module(spec)).on(device.profile.name)
    kernel = puzzle.kernel(function)
    case = next(c for c in kernel.cases if c.bench)
    ctx = Context(puzzle, spec, device, False, 0, spec_file=spec, profile="gpu")
    started = time.perf_counter()
    tir, compiled, options = reference_build(ctx, kernel, case)
    built = time.perf_counter()
    found, problem = counters(ctx, kernel, case, tir, options)
    took = time.perf_counter() - built
    print(f"{item} {case.name}: build {built - started:.1f} s, ncu {took:.1f} s, problem={problem!r}")
    print(json.dumps(found))
