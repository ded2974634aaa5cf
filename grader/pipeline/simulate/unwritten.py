"""Memory nothing wrote, as the simulator fills it: a NaN whose bits say where it came from."""

from __future__ import annotations

import torch

# The NaN that memory nothing wrote starts as, by its bits: quiet, with a payload that no arithmetic makes (torch
# gives 0x7FC00000 and its kin, CUDA 0x7FFFFFFF), that conversions between the float types keep (its top bits move
# with the value; torch's float16 to float32 alone drops it) and that x86 arithmetic keeps (a NaN operand's payload
# is the result's). A NaN that carries it was read from memory nothing wrote, a bug the GPU shows with whatever that
# memory held; any other NaN the kernel computed, and the GPU may answer it otherwise (fmaxf, a folded comparison).
FILL_BITS = {
    torch.float16: (torch.int16, 0x7ED0),
    torch.bfloat16: (torch.int16, 0x7FDA),
    torch.float32: (torch.int32, 0x7FDA0000),
    torch.float64: (torch.int64, 0x7FFB400000000000),
}
# The fill as each type shows it after conversions and arithmetic: (bits of its width, mask), the sign and the
# payload's low bits aside (float16 to float32 in torch loses a NaN's payload: float16 is read as itself).
FILL_SEEN = {
    torch.float16: (torch.int16, 0x7ED0, 0x7FFF),
    torch.bfloat16: (torch.int16, 0x7FDA, 0x7FFF),
    torch.float32: (torch.int32, 0x7FDA0000, 0x7FFFE000),
    torch.float64: (torch.int64, 0x7FFB400000000000, 0x7FFFFC0000000000),
}


def unwritten_fill(shape: list[int], dtype: torch.dtype) -> torch.Tensor:
    """A buffer as memory nothing wrote: the fill NaN for a float type, 0 for the others."""
    if dtype not in FILL_BITS:
        return torch.zeros(shape, dtype=dtype)
    width, bits = FILL_BITS[dtype]
    return torch.full(shape, bits, dtype=width).view(dtype)


def integer_fill(
    shape: list[int], dtype: torch.dtype, bounds: tuple[int, int] | None, generator: torch.Generator
) -> torch.Tensor:
    """An integer (or bool) buffer as memory nothing wrote, for the simulator's second run of a kernel that allocates
    one: every element drawn at random from the TIR type's range ``bounds`` (None: bool), where the first run holds 0.
    The GPU leaves such memory undefined (`int start;` in the CUDA, a register or shared memory holding what it held),
    so a kernel whose outputs differ between the two runs reads a value the GPU does not define
    (tests/attacks/uninitialised_int.py). Random, not a constant of this file: a kernel written to pass with 0 and
    with any value it can know (`if start == 0 or start == FILL`) must not pass."""
    low, high = bounds or (0, 1)
    low, high = max(low, -(2**62)), min(high, 2**62)  # randint's bounds are int64: a 64-bit type draws from less
    values = torch.randint(low, high + 1, shape, dtype=torch.int64, generator=generator)
    return values.to(dtype)


def from_unwritten(value: torch.Tensor) -> torch.Tensor:
    """The lanes of ``value`` that hold a NaN carrying the fill's payload: read from memory nothing wrote."""
    if value.dtype not in FILL_SEEN:
        return torch.zeros(value.shape, dtype=torch.bool)
    width, bits, mask = FILL_SEEN[value.dtype]
    return (value.contiguous().view(width) & mask) == bits


def keep_unwritten(result: torch.Tensor, *operands: torch.Tensor) -> torch.Tensor:
    """``result`` with the fill NaN in every lane where an operand held it: an op that answers a NaN of its own
    (torch.maximum's 0x7FC00000) must not make memory nothing wrote look computed."""
    if result.dtype not in FILL_BITS:
        return result
    read = torch.zeros(result.shape, dtype=torch.bool)
    for operand in operands:
        if isinstance(operand, torch.Tensor):
            read = read | torch.broadcast_to(from_unwritten(operand), result.shape)
    if not bool(read.any()):
        return result
    return torch.where(read, unwritten_fill([], result.dtype), result)


def forged_fill(value: torch.Tensor) -> torch.Tensor:
    """``value`` with any lane that carries the fill's payload made an ordinary NaN: for bits a kernel made itself
    (T.reinterpret of an integer), which must not pass for memory nothing wrote."""
    read = from_unwritten(value)
    if not bool(read.any()):
        return value
    return torch.where(read, torch.full((), float("nan"), dtype=value.dtype), value)
