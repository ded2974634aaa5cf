"""Timing on the GPU: the median device time of a call over several fresh input sets, with CUDA events; and
repeated timings of several calls, interleaved, so that each figure comes with its run-to-run spread."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

INPUT_SETS = 3  # rotate inputs so repeated calls do not just measure the L2 cache
WARMUP = 10
TARGET_MS = 400.0
MIN_REPS, MAX_REPS = 20, 2000
REPEAT_TARGET_MS = 150.0  # CUDA-event time per repetition: the repetitions together cost about one TARGET_MS more

Call = Callable[[Sequence[torch.Tensor]], object]


def median_ms(call: Call, input_sets: list[list[torch.Tensor]], target_ms: float = TARGET_MS) -> float:
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
    reps = int(min(MAX_REPS, max(MIN_REPS, target_ms / estimate)))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for i, (begin, finish) in enumerate(events):
        args = input_sets[i % len(input_sets)]
        begin.record()
        call(args)
        finish.record()
    torch.cuda.synchronize()
    return statistics.median(begin.elapsed_time(finish) for begin, finish in events)


@dataclass(frozen=True)
class Timed:
    """One call's repetitions: each a median of CUDA-event timings (ms)."""

    runs: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def low(self) -> float:
        return min(self.runs)

    @property
    def high(self) -> float:
        return max(self.runs)


def repeated_ms(calls: dict[str, tuple[Call, list[list[torch.Tensor]]]], repeats: int) -> dict[str, Timed]:
    """Each call timed ``repeats`` times, the calls taking turns (A B C, A B C, ...), so that a clock that drifts
    during the run moves every figure alike instead of favouring whichever ran first."""
    runs: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(max(1, repeats)):
        for name, (call, sets) in calls.items():
            runs[name].append(median_ms(call, sets, REPEAT_TARGET_MS))
    return {name: Timed(tuple(values)) for name, values in runs.items()}
