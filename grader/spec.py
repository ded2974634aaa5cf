"""The data a puzzle module declares: tensors, cases, tolerances and kernels.

A puzzle module (``puzzles/pNN_name.py``) builds one :class:`Puzzle` in a function called
``puzzle()``; the grader reads nothing else from it. Everything here is plain data: no torch,
no TileLang, so it can be imported anywhere (the pytest parent process never imports torch).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


@dataclass(frozen=True)
class Tensor:
    """One kernel argument: its name in the kernel signature, its shape as size names, its dtype.

    ``shape`` holds names of sizes (``("M", "K")``) that every case binds to numbers, so a shape
    is written once and never guessed from the arguments.
    """

    name: str
    shape: tuple[str, ...]
    dtype: str
    # How inputs are drawn: "normal" N(0, 1), "uniform" U[0, 1), "positive" U[0.5, 1.5).
    # Integer inputs are uniform over int_range (inclusive), or the dtype's whole range.
    init: str = "normal"
    int_range: tuple[int, int] | None = None

    def concrete_shape(self, sizes: Mapping[str, int]) -> tuple[int, ...]:
        return tuple(int(sizes[dim]) for dim in self.shape)


@dataclass(frozen=True)
class Tolerance:
    """An element passes when ``|out - ref| <= atol * rms(ref) + rtol * |ref|``.

    ``atol`` is scaled by the root-mean-square of the reference so one tolerance fits every
    size of a reduction (a GEMM output grows like sqrt(K)).
    """

    rtol: float
    atol: float


# How these were chosen: a correct kernel accumulates in fp32, so its error is the final
# rounding to the output dtype (half an ulp: 4.9e-4 relative for fp16) plus fp32 noise far
# below that. rtol leaves a 4x margin over one fp16 rounding. An fp16 accumulator over a
# K=1000 reduction drifts by about 5e-3 of the output's rms (random-walk rounding), five times
# atol, so it fails. For fp32 outputs the same reasoning gives 1e-4 / 1e-5.
DEFAULT_TOLERANCES: Mapping[str, Tolerance] = {
    "float16": Tolerance(rtol=2e-3, atol=1e-3),
    "bfloat16": Tolerance(rtol=1.6e-2, atol=8e-3),
    "float32": Tolerance(rtol=1e-4, atol=1e-5),
}

# Attention (07, 08) may round P to fp16 before P @ V (T.gemm takes fp16 operands; it halves 07's shared
# P tile), a relative error of up to 2^-11 on every weight. Those errors mostly average out along a row,
# but not far enough for the default bound: a correct fp16-P kernel used most of it on 07's large case
# and crossed it on the H200. With atol 3e-3 such a kernel keeps a wide margin. A 16-bit accumulator or
# row sum can hide inside this bound over a few dozen keys, so attention kernels also carry the
# ``sums_in_fp32`` concept check, which reads it from the TIR.
ATTENTION_TOLERANCES: Mapping[str, Tolerance] = {"float16": Tolerance(rtol=2e-3, atol=3e-3)}


@dataclass(frozen=True)
class Case:
    """One graded run: sizes, block parameters, seed; ``bench`` marks the case used for timing.

    ``simulate`` marks a case the CPU simulator runs where there is no GPU (True) or never runs (False);
    left None, the kernel's simulation budget decides (grader.budget). ``scales`` multiplies named
    float inputs, for cases that need large values (softmax logits that overflow exp).
    """

    name: str
    sizes: Mapping[str, int]
    params: Mapping[str, Any]
    seed: int
    bench: bool = False
    simulate: bool | None = None  # None: grader.budget decides when the puzzle is loaded
    scales: Mapping[str, float] = field(default_factory=dict)  # multiply these inputs (e.g. large logits)
    # Block parameters per GPU profile (grader.devices): keys are profile names, space-separated
    # ("sm_86 sm_89"), values override ``params`` there, or say why no parameters fit that GPU.
    # Sizes, seeds and tolerances never change per GPU.
    for_gpus: Mapping[str, Mapping[str, Any] | str] = field(default_factory=dict)
    unfit: str = ""  # set by ``on``: why this case cannot run on the profile it is graded on

    def on(self, profile: str) -> Case:
        """This case as graded on ``profile``: its block parameters there."""
        for names, change in self.for_gpus.items():
            if profile in names.split():
                if isinstance(change, str):
                    return replace(self, unfit=change)
                return replace(self, params={**self.params, **change})
        return self

    def describe_sizes(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.sizes.items())


@dataclass(frozen=True)
class Baseline:
    """Another way a user would compute the outputs, timed beside the kernel by ``--bench``.

    ``prepare`` turns the case's inputs into ``call``'s arguments outside the timing (e.g. the
    unquantized weights a fp16 GEMM would read instead of 4-bit ones)."""

    name: str
    call: Callable[..., Any]
    prepare: Callable[..., tuple[Any, ...]] | None = None


@dataclass(frozen=True)
class Kernel:
    """A kernel the learner writes, and how to grade it.

    ``function`` is the attribute name of the ``@tilelang.jit`` function in the module.
    ``inputs`` and ``outputs`` list the kernel's tensor arguments in signature order
    (outputs are the tensors the kernel returns with ``T.empty``).
    ``reference`` computes the outputs from the inputs with torch (the grader calls it on
    float64 copies). ``baseline`` is what ``--bench`` times against (torch at the kernel's
    dtypes). ``flops`` and ``bytes_moved`` give work per call for TFLOP/s and GB/s.
    ``tiles`` names, for each output dimension, the block parameter that tiles it (or a number, a
    fixed tile: 1 for an axis with one block per index, such as attention's heads), so a failure can
    say which tiles of the launch grid are wrong.
    """

    function: str
    title: str
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    reference: Callable[..., Any]
    baseline: Callable[..., Any]
    cases: tuple[Case, ...]
    flops: Callable[[Mapping[str, int]], float] | None = None
    bytes_moved: Callable[[Mapping[str, int]], float] | None = None
    tiles: Mapping[str, tuple[str | int | None, ...]] = field(default_factory=dict)
    tolerances: Mapping[str, Tolerance] = field(default_factory=lambda: dict(DEFAULT_TOLERANCES))
    hint: str = ""
    concepts: tuple[Any, ...] = ()  # grader.concepts.Concept: what the kernel must use, read from its TIR
    baselines: tuple[Baseline, ...] = ()  # timed beside ``baseline`` by --bench

    def case(self, name: str) -> Case:
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(f"{self.function} has no case {name!r}")

    def tile_sizes(self, output: str, params: Mapping[str, Any]) -> tuple[int | None, ...]:
        """The tile along each dimension of ``output`` with these block parameters (None: not tiled)."""
        return tuple(t if isinstance(t, int) else params.get(t) if t else None for t in self.tiles.get(output, ()))

    def tolerance_for(self, dtype: str) -> Tolerance:
        return self.tolerances[dtype]


@dataclass(frozen=True)
class Puzzle:
    """A puzzle: its two-digit id, its title, and its kernels in teaching order."""

    id: str
    title: str
    kernels: tuple[Kernel, ...]

    def on(self, profile: str) -> Puzzle:
        """The puzzle as graded on a GPU profile: every case with that profile's block parameters."""
        kernels = tuple(replace(k, cases=tuple(c.on(profile) for c in k.cases)) for k in self.kernels)
        return replace(self, kernels=kernels)

    def kernel(self, function: str) -> Kernel:
        for kernel in self.kernels:
            if kernel.function == function:
                return kernel
        raise KeyError(f"puzzle {self.id} has no kernel {function!r}")


def tensor_bytes(tensors: tuple[Tensor, ...], sizes: Mapping[str, int]) -> float:
    """Bytes of the given tensors at these sizes: each read or written once."""
    itemsize = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int32": 4}
    return float(sum(math.prod(t.concrete_shape(sizes)) * itemsize[t.dtype] for t in tensors))
