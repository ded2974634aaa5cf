"""The simulator's values: TIR types as torch dtypes, integer ranges and wrapping, the torch function of each
TIR operator and math call, and the vectorised lanes of T.Parallel (grader.pipeline.simulate.interp runs them)."""

from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass, field
from typing import Any

import torch

from grader.pipeline.inputs import TORCH_DTYPES
from grader.pipeline.simulate.faults import Unsupported
from grader.pipeline.simulate.unwritten import (
    forged_fill,
)

RANK = 8  # axes available to vectorised loop variables (parallel nests, nested)


PY_OPS = {
    torch.add: operator.add, torch.sub: operator.sub, torch.mul: operator.mul,
    torch.maximum: max, torch.minimum: min,
    torch.lt: operator.lt, torch.le: operator.le, torch.gt: operator.gt, torch.ge: operator.ge,
    torch.eq: operator.eq, torch.ne: operator.ne,
    torch.logical_and: lambda a, b: bool(a) and bool(b), torch.logical_or: lambda a, b: bool(a) or bool(b),
}  # fmt: skip


# TIR calls the simulator computes with one torch function, by the call's name (bound once, not per call).
MATH_CALLS = {
    "tirx.exp2": torch.exp2, "tirx.exp": torch.exp, "tirx.log2": torch.log2, "tirx.log": torch.log,
    "tirx.fabs": torch.abs, "tirx.sqrt": torch.sqrt, "tirx.rsqrt": torch.rsqrt, "tirx.tanh": torch.tanh,
    "tirx.sigmoid": torch.sigmoid, "tirx.floor": torch.floor, "tirx.ceil": torch.ceil,
}  # fmt: skip
# TIR calls and operators the GPU computes to within a few ulps, not correctly rounded, so not with torch's bits: how
# many ulps the simulator's approximate run (Interpreter.approximate) moves a result, CUDA's maximum error for the
# float32 function (CUDA C++ Programming Guide, Mathematical Functions: expf, exp2f, rsqrtf, tanhf 2 ulp; logf, log2f
# 1; powf 4) plus 1 for torch's own. nvcc 13.0 writes expf as `ex2.approx.ftz.f32` after a range reduction and rsqrtf
# as `rsqrt.approx.f32` (tests/attacks/approximate_exp.py, approximate_rsqrt.py). T.sigmoid is computed as TileLang
# writes it, 1 / (1 + exp(0 - x)), and moves with its exp (Expressions.sigmoid). float64 (CUDA's exp, log... within 1
# or 2 ulp) gets the same count of its own ulps. sqrt and division are correctly rounded in float32 and float64
# (sqrt.rn, div.rn), absent from the table.
APPROXIMATE_ULPS = {
    "tirx.exp": 3, "tirx.exp2": 3, "tirx.log": 2, "tirx.log2": 2, "tirx.rsqrt": 3, "tirx.tanh": 3,
    "tirx.sigmoid": 3, "tirx.pow": 5,
}  # fmt: skip
# In float16 and bfloat16 every math call goes through float32 and is rounded once more (cuda_fp16's hexp is
# `ex2.approx.ftz.f32` then `cvt.rn.f16.f32`, hsqrt `sqrt.approx.ftz.f32`, a / b `rcp.approx.ftz.f32` times a in fp16
# and `div.approx.f32` in bf16): the approximate run moves the float32 value by these ulps before it rounds, so a
# 16-bit result changes where that value lies within them of a rounding boundary, as it may on the GPU.
SIXTEEN_BIT_APPROXIMATE_ULPS = {**APPROXIMATE_ULPS, "tirx.sqrt": 2, "tirx.Div": 3}
SIXTEEN_BIT_FLOATS = ("float16", "bfloat16")
# The float types whose multiply and add nvcc contracts into one fused multiply-add (Interpreter.contract).
CONTRACTED_TYPES = ("float32", *SIXTEEN_BIT_FLOATS)


def approximate_ulps(name: str, dtype: str) -> int:
    """How many ulps of its float32 (or float64) value the GPU's result of the call or operator ``name`` ("tirx.exp",
    "tirx.Div") in the TIR type ``dtype`` may lie from torch's; 0 where the two agree bit for bit."""
    if dtype in SIXTEEN_BIT_FLOATS:
        return SIXTEEN_BIT_APPROXIMATE_ULPS.get(name, 0)
    return APPROXIMATE_ULPS.get(name, 0) if dtype in ("float32", "float64") else 0


def nudged(result: torch.Tensor, operands: list[torch.Tensor], ulps: int, key: int) -> torch.Tensor:
    """``result`` (float32 or float64) with each normal element moved by 1 to ``ulps`` ulps up or down, how far and
    which way a hash of the operands' bits and ``key`` (drawn once a run): the same operands always move the same
    way, as the GPU's approximation is a function of its input. Zeros, subnormals, infinities and NaN stay."""
    width = torch.int32 if result.dtype == torch.float32 else torch.int64
    mixed = torch.full(result.shape, key, dtype=torch.int64)
    for operand in operands:
        bits = operand.contiguous().view({2: torch.int16, 4: torch.int32, 8: torch.int64}[operand.element_size()])
        mixed = mixed * 1000003 + torch.broadcast_to(bits.to(torch.int64), result.shape)
        mixed = mixed ^ (mixed >> 29)
    mixed = (mixed * -7046029254386353131) ^ (mixed >> 31)  # 0x9E3779B97F4A7C15: Fibonacci hashing's multiplier
    choice = torch.remainder(mixed >> 7, 2 * ulps)
    steps = torch.where(choice % 2 == 0, choice // 2 + 1, -(choice // 2 + 1)).to(width)
    moved = (result.contiguous().view(width) + steps).view(result.dtype)
    normal = torch.isfinite(result) & (result.abs() >= torch.finfo(result.dtype).tiny) & torch.isfinite(moved)
    return torch.where(normal, moved, result)


BITWISE_CALLS = {
    "tirx.bitwise_and": torch.bitwise_and, "tirx.bitwise_or": torch.bitwise_or,
    "tirx.bitwise_xor": torch.bitwise_xor, "tirx.shift_left": torch.bitwise_left_shift,
    "tirx.shift_right": torch.bitwise_right_shift,
}  # fmt: skip


@functools.cache
def binary_ops(tirx: Any) -> dict[type, Any]:
    """TIR binary expression kinds -> the torch function that computes them, made once per process (TVM is imported
    late, so the table is made on the first Interpreter, not at import)."""
    t = tirx
    return {
        t.Add: torch.add, t.Sub: torch.sub, t.Mul: torch.mul,
        t.Max: torch.maximum, t.Min: torch.minimum,
        t.LT: torch.lt, t.LE: torch.le, t.GT: torch.gt, t.GE: torch.ge, t.EQ: torch.eq, t.NE: torch.ne,
        t.And: torch.logical_and, t.Or: torch.logical_or,
    }  # fmt: skip


COMPARISONS = (torch.lt, torch.le, torch.gt, torch.ge, torch.eq, torch.ne)
# Memory every thread of a block (or of the grid) stores to: lanes of a T.Parallel are threads there
SHARED_BY_THREADS = ("shared", "shared.dyn", "global")
# Signed integer arithmetic checked for overflow (Expressions.no_signed_overflow): int32, C's int, and int64, whose
# overflow TileLang folds away the same way (tests/attacks/int64_overflow.py).
SIGNED_ARITHMETIC = (torch.add, torch.sub, torch.mul)
SIGNED_OVERFLOW_CHECKED = {"int32", "int64"}
# Types C promotes to int before any arithmetic: the GPU computes `a + b` of two int8 in int and wraps the result only
# where it is stored or cast, where torch wraps it at once (tests/attacks/int8_overflow.py). A result outside its
# type gives no verdict (Expressions.no_narrow_wrap); inside it, the two agree.
NARROW_INTEGERS = {"int8", "int16", "uint8", "uint16"}

# Unsigned integers wider than a byte live in the next wider signed type (torch's CPU kernels lack
# bitwise ops on uint16/uint32); their values fit, and T.reinterpret takes the low bits back.
WIDE_UNSIGNED = {"uint16": torch.int32, "uint32": torch.int64}
BITS_AS = {
    16: (torch.int16, {"float16": torch.float16, "bfloat16": torch.bfloat16}),
    32: (torch.int32, {"float32": torch.float32}),
}


def torch_dtype(dtype: Any) -> torch.dtype:
    name = str(dtype)
    if name in WIDE_UNSIGNED:
        return WIDE_UNSIGNED[name]
    if name not in TORCH_DTYPES:
        raise Unsupported(f"the dtype {name}")
    return TORCH_DTYPES[name]


def integer_range(name: str) -> tuple[int, int] | None:
    """The least and greatest value of a TIR integer type ("int32", "uint8"...); None for any other type."""
    match = re.fullmatch(r"(u?)int(8|16|32|64)", name)
    if match is None:
        return None
    bits = int(match.group(2))
    return (0, 2**bits - 1) if match.group(1) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def saturated(value: torch.Tensor, bounds: tuple[int, int]) -> torch.Tensor:
    """A float tensor converted to an integer of ``bounds`` as CUDA's cvt.rzi does it, as int64: truncated toward
    zero, clamped to the range, NaN to 0."""
    low, high = bounds
    whole = torch.nan_to_num(value.double().trunc(), nan=0.0)
    inside = torch.where((whole > low) & (whole < high), whole, torch.zeros_like(whole)).to(torch.int64)
    return torch.where(whole >= high, high, torch.where(whole <= low, low, inside))


def wrapped(value: torch.Tensor, bounds: tuple[int, int]) -> torch.Tensor:
    """An int64 tensor wrapped to the bits of an integer type of ``bounds`` (two's complement)."""
    low, high = bounds
    if high - low + 1 >= 2**64:
        return value
    return torch.remainder(value - low, high - low + 1) + low


def fitted(value: Any, name: str) -> Any:
    """The result of integer arithmetic of TIR type ``name`` wrapped to the type's bits, as the GPU's fixed-width
    registers wrap it: plain ints (index arithmetic) are Python's, unbounded, and an unsigned type wider than a
    byte lives in a wider torch type (WIDE_UNSIGNED), so `T.cast(n, uint32) + T.uint32(4294967295)` was n + 2^32 - 1
    here and n - 1 on the GPU (tests/attacks/unsigned_wrap.py). Torch's own fixed-width types wrap already."""
    bounds = integer_range(name)
    if bounds is None or isinstance(value, bool):
        return value
    if isinstance(value, torch.Tensor):
        if name not in WIDE_UNSIGNED or value.dtype == torch.bool:
            return value
        return wrapped(value.to(torch.int64), bounds).to(value.dtype)
    if isinstance(value, int):
        low, high = bounds
        return (value - low) % (high - low + 1) + low
    return value


def reinterpret_bits(value: torch.Tensor, source: str, target: str) -> torch.Tensor:
    """T.reinterpret(x, float16) of a 16-bit integer: the same bits read as the float."""
    bits = 16 if source.endswith("16") else 32 if source.endswith("32") else 0
    signed, floats = BITS_AS.get(bits, (None, {}))
    if target not in floats:
        raise Unsupported(f"T.reinterpret from {source} to {target}")
    wide = value.to(torch.int64) & ((1 << bits) - 1)
    wide = torch.where(wide >= 1 << (bits - 1), wide - (1 << bits), wide)
    return forged_fill(wide.to(signed).view(floats[target]))  # bits a kernel makes are never memory nothing wrote


class ThreadIndex:
    """The value of a block's thread index (T.get_thread_binding, the Bind of tl.launch_thread_idx) in the simulator,
    which runs a block's threads as one program at tile level: it had 0 for every lane, so a kernel that stored its
    sums only where the thread index was 0 stored them all here, and on the GPU, where the lanes of a T.Parallel are
    spread over the block's threads, only thread 0's (tests/attacks/thread_index.py). Read in an expression, it gives
    the case no CPU verdict."""

    what = "the thread index (T.get_thread_binding): the simulator runs a block's threads as one program"


THREAD_INDEX = ThreadIndex()


@dataclass
class Lanes:
    """Which grid axes are taken by vectorised loop variables."""

    used: list[int] = field(default_factory=list)

    def take(self) -> int:
        for axis in range(RANK):
            if axis not in self.used:
                self.used.append(axis)
                return axis
        raise Unsupported(f"more than {RANK} nested parallel loops")

    def release(self, axis: int) -> None:
        self.used.remove(axis)


def lane(extent: int, axis: int) -> torch.Tensor:
    shape = [1] * RANK
    shape[axis] = extent
    return torch.arange(extent, dtype=torch.int64).reshape(shape)


def owned(value: Any) -> Any:
    """``value`` as a value of its own: a tensor that shares no memory with a buffer. A scalar
    the kernel saves (``m_old = row_max[0]``) lives in a register on the GPU, and a later write
    to the buffer (an in-place reduce, a store) must not change it."""
    if isinstance(value, torch.Tensor) and value._base is not None:
        return value.clone()
    return value


def storage_of(data: torch.Tensor) -> torch.Tensor:
    return data if data._base is None else data._base


def flat_positions(data: torch.Tensor, indices: list[torch.Tensor]) -> torch.Tensor:
    """Row-major positions in ``data`` (contiguous) of the elements at ``indices``, one tensor per axis."""
    flat = torch.zeros(indices[0].shape if indices else (1,), dtype=torch.int64)
    for index, stride in zip(indices, data.stride()):
        flat = flat + index.reshape(flat.shape).to(torch.int64) * stride
    return flat.reshape(-1)


class DispatchTable(dict):
    """A TIR node class -> the (unbound) method of one interpreter class that handles it. ``resolve`` finds a class
    the table does not name through its bases, once, and remembers it (None: the kind is not simulated)."""

    def resolve(self, kind: type) -> Any:
        for base in kind.__mro__[1:]:
            if base in self:
                self[kind] = self[base]
                return self[kind]
        return None


def dispatch_table(cls: type, tirx: Any, kinds: dict[str, str], numbers: str = "") -> DispatchTable:
    """``kinds`` (TIR class name -> method name) bound to ``cls``'s methods, so a subclass's override is the one
    called (the explain view's Recorder overrides loop, store and load); ``numbers``: the method for Python's own
    ints, floats and bools, if any."""
    table = DispatchTable({getattr(tirx, kind): getattr(cls, name) for kind, name in kinds.items()})
    if numbers:
        for python_type in (int, float, bool):
            table[python_type] = getattr(cls, numbers)
    return table
