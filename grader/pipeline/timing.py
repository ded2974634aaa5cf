"""Timing on the GPU: the median device time of a call over several fresh input sets, with CUDA events."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

import torch

INPUT_SETS = 3  # rotate inputs so repeated calls do not just measure the L2 cache
WARMUP = 10
TARGET_MS = 400.0
MIN_REPS, MAX_REPS = 20, 2000


def median_ms(call: Callable[[Sequence[torch.Tensor]], object], input_sets: list[list[torch.Tensor]]) -> float:
    for i in range(WARMUP):
        call(input_sets[i % len(input_sets)])
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(WARMUP):
        call(input_sets[i % len(input_sets)])
    end.record()
    end.synchronize()
    estimate = max(start.elapsed_time(end) / WARMUP, 1e-3)
    reps = int(min(MAX_REPS, max(MIN_REPS, TARGET_MS / estimate)))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for i, (begin, finish) in enumerate(events):
        args = input_sets[i % len(input_sets)]
        begin.record()
        call(args)
        finish.record()
    torch.cuda.synchronize()
    return statistics.median(begin.elapsed_time(finish) for begin, finish in events)
