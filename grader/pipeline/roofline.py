"""The two limits a kernel's time is measured against: the bytes it must move at the copy bandwidth
this GPU reaches, and the flops it must do at the datasheet's compute peak. Whichever takes longer is
the kernel's floor ("roofline"); a bench line gives floor / time as a percentage.

The compute peak is that of the units the kernel runs its math on: the dense fp16 Tensor Core peak for a
kernel whose generated code holds a Tensor Core instruction (``wgmma`` or ``mma.sync``), the fp32 FMA peak of
the CUDA cores for one that holds none (puzzle 07's attention, ``gemv``, ``matmul_cuda_cores``). Measured
against the Tensor Core peak, a kernel on the CUDA cores could never pass a few percent, however good.

The bandwidth is measured, not the datasheet's: a device-to-device copy of 1 GiB (read + write) is
what any kernel that streams memory can hope for, and it is what puzzle 01's copy reaches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

COPY_BYTES = 1 << 29  # 512 MiB each way: far past any L2, so the copy streams HBM


@dataclass(frozen=True)
class Limits:
    copy_gbps: float  # measured on this GPU
    tensor_tflops: float | None  # dense fp16, fp32 accumulate; None for a GPU the table does not know
    fma_tflops: float | None = None  # fp32 FMA on the CUDA cores; None for a GPU the table does not know

    def describe(self) -> str:
        peak = (
            f"dense fp16 Tensor Core peak {self.tensor_tflops:g} TFLOP/s (datasheet)"
            if self.tensor_tflops
            else "no Tensor Core peak known for this GPU (bandwidth roofline only)"
        )
        fma = (
            f"fp32 FMA peak {self.fma_tflops:g} TFLOP/s on the CUDA cores (datasheet; fma: the floor of a kernel "
            "with no Tensor Core instruction)"
            if self.fma_tflops
            else "no fp32 FMA peak known for this GPU (a kernel on the CUDA cores gets the bandwidth roofline only)"
        )
        return f"copy bandwidth {self.copy_gbps:,.0f} GB/s (measured: torch copy of 512 MiB), {peak}, {fma}"


def measure(torch: Any, board: str) -> Limits:
    """This GPU's limits: a timed copy, and the datasheet peaks for its name."""
    from grader.devices import fma_peak_tflops, tensor_peak_tflops
    from grader.pipeline.timing import median_ms

    buffers = [torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda") for _ in range(2)]
    ms = median_ms(lambda args: args[1].copy_(args[0]), [buffers])
    buffers.clear()
    torch.cuda.empty_cache()
    return Limits(
        copy_gbps=2 * COPY_BYTES / ms / 1e6,
        tensor_tflops=tensor_peak_tflops(board),
        fma_tflops=fma_peak_tflops(board),
    )


def tensor_cores(kernel_source: str) -> bool | None:
    """Whether a kernel's generated CUDA holds a Tensor Core instruction (what ``--profile`` reports as its
    "tensor_cores"); None where there is no source to read (the floor then assumes the Tensor Cores)."""
    if not kernel_source:
        return None
    from grader.pipeline.profile.ptxas import instructions

    return instructions(kernel_source)[0] != "none"


def floor(
    limits: Limits, flops: float | None, bytes_moved: float | None, tensor_cores: bool | None = True
) -> tuple[float | None, str]:
    """The shortest time the work can take, in ms, and which limit sets it: "memory", "compute" (the flops at
    the Tensor Core peak) or, for a kernel with no Tensor Core instruction (``tensor_cores=False``), "fma"
    (the flops at the CUDA cores' fp32 FMA peak)."""
    peak, bound = (limits.tensor_tflops, "compute") if tensor_cores is not False else (limits.fma_tflops, "fma")
    memory_ms = bytes_moved / limits.copy_gbps / 1e6 if bytes_moved else None
    compute_ms = flops / peak / 1e9 if flops and peak else None
    if memory_ms is None and compute_ms is None:
        return None, ""
    if compute_ms is None or (memory_ms is not None and memory_ms >= compute_ms):
        return memory_ms, "memory"
    return compute_ms, bound
