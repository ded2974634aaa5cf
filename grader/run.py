"""Run: fresh seeded inputs, poisoned outputs, one launch on the device."""

from __future__ import annotations

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
    "int32": torch.int32,
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
        return values.to(dtype)
    low, high = tensor.int_range or (torch.iinfo(dtype).min, torch.iinfo(dtype).max)
    return torch.randint(low, high + 1, shape, generator=generator, device=device, dtype=dtype)


def poisoned_outputs(kernel: Kernel, case: Case, device: str) -> list[torch.Tensor]:
    """Outputs filled with NaN (or the integer maximum) so unwritten elements are caught."""
    outputs = []
    for tensor in kernel.outputs:
        dtype = TORCH_DTYPES[tensor.dtype]
        fill = float("nan") if dtype.is_floating_point else torch.iinfo(dtype).max
        outputs.append(torch.full(tensor.concrete_shape(case.sizes), fill, dtype=dtype, device=device))
    return outputs


def reference_outputs(kernel: Kernel, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """The torch reference on float64 copies of the inputs."""
    upcast = [x.to(torch.float64) if x.dtype.is_floating_point else x for x in inputs]
    result = kernel.reference(*upcast)
    return list(result) if isinstance(result, (tuple, list)) else [result]


def launch(compiled: Any, inputs: list[torch.Tensor], outputs: list[torch.Tensor]) -> None:
    compiled(*inputs, *outputs)
    torch.cuda.synchronize()
