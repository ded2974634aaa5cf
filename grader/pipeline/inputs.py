"""Run: fresh seeded inputs, poisoned outputs, one launch on the device."""

from __future__ import annotations

import math
from typing import Any

import torch

from grader.spec import Case, Kernel, Tensor

TORCH_DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "bool": torch.bool,
}


def make_inputs(kernel: Kernel, case: Case, device: str, seed_offset: int = 0) -> list[torch.Tensor]:
    """Inputs drawn from N(0, 1) (floats) or the full range (integers), seeded by the case."""
    generator = torch.Generator(device=device)
    generator.manual_seed(case.seed + seed_offset)
    return [_random(t, case, device, generator) for t in kernel.inputs]


def _random(tensor: Tensor, case: Case, device: str, generator: torch.Generator) -> torch.Tensor:
    shape = tensor.concrete_shape(case.sizes)
    dtype = TORCH_DTYPES[tensor.dtype]
    if dtype.is_floating_point:
        if tensor.init == "normal":
            values = torch.randn(shape, generator=generator, device=device, dtype=torch.float32)
        elif tensor.init == "uniform":
            values = torch.rand(shape, generator=generator, device=device, dtype=torch.float32)
        elif tensor.init == "positive":
            values = torch.rand(shape, generator=generator, device=device, dtype=torch.float32) + 0.5
        else:
            raise ValueError(f"unknown init {tensor.init!r} for {tensor.name}")
        return (values * case.scales.get(tensor.name, 1.0)).to(dtype)
    low, high = tensor.int_range or (torch.iinfo(dtype).min, torch.iinfo(dtype).max)
    return torch.randint(low, high + 1, shape, generator=generator, device=device, dtype=dtype)


GUARD_BYTES = 4096  # a band before and after each output; a multiple of 128 keeps TMA alignment


# The NaN a float output starts as, by its bits: quiet, with a payload that no arithmetic makes (torch gives
# 0x7FC00000 and its kin, CUDA 0x7FFFFFFF), so an element that still holds it was never written and any other
# NaN was stored by the kernel. (dtype -> the integer type of its width, the bits)
POISON_BITS = {
    torch.float16: (torch.int16, 0x7E5A),
    torch.bfloat16: (torch.int16, 0x7FDA),
    torch.float32: (torch.int32, 0x7FE5A5A5),
    torch.float64: (torch.int64, 0x7FF80000DEADBEEF),
}


def _poison(output: torch.Tensor) -> None:
    if output.dtype in POISON_BITS:
        width, bits = POISON_BITS[output.dtype]
        output.view(width).fill_(bits)
    else:
        output.fill_(torch.iinfo(output.dtype).max)


def unwritten(output: torch.Tensor) -> torch.Tensor | None:
    """Where ``output`` still holds the NaN it started as (never written); None where that cannot be told
    (an integer output: its poison is a value a kernel may store)."""
    if output.dtype not in POISON_BITS:
        return None
    width, bits = POISON_BITS[output.dtype]
    return output.view(width) == bits


def _guard(dtype: torch.dtype) -> float | int:
    """What the bands around an output hold: not NaN, so a stray store of a NaN is seen too."""
    return -1234.0 if dtype.is_floating_point else torch.iinfo(dtype).min


def poisoned_outputs(kernel: Kernel, case: Case, device: str) -> list[torch.Tensor]:
    """Outputs filled with NaN (or the integer maximum) so unwritten elements are caught.

    Each output is a view into a larger allocation whose guard bands before and after hold a
    sentinel; ``writes_outside`` reads them back after the run.
    """
    outputs = []
    for tensor in kernel.outputs:
        dtype = TORCH_DTYPES[tensor.dtype]
        shape = tensor.concrete_shape(case.sizes)
        guard = GUARD_BYTES // torch.empty((), dtype=dtype).element_size()
        storage = torch.full((guard + math.prod(shape) + guard,), _guard(dtype), dtype=dtype, device=device)
        output = storage[guard : guard + math.prod(shape)].view(shape)
        _poison(output)
        outputs.append(output)
    return outputs


def writes_outside(outputs: list[torch.Tensor], names: list[str]) -> list[str]:
    """One sentence per output whose guard bands were written: the kernel stored out of bounds."""
    problems = []
    for name, out in zip(names, outputs):
        flat = torch.as_strided(out, (out.untyped_storage().nbytes() // out.element_size(),), (1,), 0)
        start, end = out.storage_offset(), out.storage_offset() + out.numel()
        before, after = flat[:start], flat[end:]
        for where, band in (("before", before), ("after", after)):
            touched = band != _guard(band.dtype)  # NaN != anything, so NaN stores count
            if bool(touched.any()):
                count = int(touched.sum())
                first = int(torch.nonzero(touched)[0]) if where == "after" else start - int(torch.nonzero(touched)[-1])
                problems.append(
                    f"wrote outside the output {name}: {count} element(s) {where} it "
                    f"(nearest {first} element(s) past the {'end' if where == 'after' else 'start'})"
                )
    return problems


def changed_inputs(before: list[torch.Tensor], after: list[torch.Tensor], names: list[str]) -> list[str]:
    """One sentence per input the kernel wrote to (inputs are drawn without NaN, so equal is exact)."""
    return [
        f"modified input {name}: the kernel must only read it"
        for name, a, b in zip(names, before, after)
        if not torch.equal(a, b)
    ]


def launch(compiled: Any, inputs: list[torch.Tensor], outputs: list[torch.Tensor]) -> None:
    compiled(*inputs, *outputs)
    torch.cuda.synchronize()


def reference_outputs(kernel: Kernel, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """The torch reference on float64 copies of the inputs."""
    upcast = [x.to(torch.float64) if x.dtype.is_floating_point else x for x in inputs]
    result = kernel.reference(*upcast)
    return list(result) if isinstance(result, (tuple, list)) else [result]
