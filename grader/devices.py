"""Device profiles: what a GPU generation lets one block use, and what TileLang lowers to on it.

The grader grades a case with the block parameters of the profile it runs on (``Case.for_gpus`` in a
puzzle module), checks a block's shared memory against the profile's limit before launching it, and
simulates with that limit on the CPU. Plain data: no torch, no TileLang.

The limits are NVIDIA's per compute capability (CUDA C++ Programming Guide, "Technical Specifications
per Compute Capability"); on a GPU the grader reads them from the device instead. SM counts are those
of the named boards, for the prose and the bench's wave arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

KIB = 1024


@dataclass(frozen=True)
class Profile:
    name: str  # the key case parameters are chosen by: "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"
    arch: str  # what TileLang compiles for on the CPU: {"kind": "cuda", "arch": arch}
    boards: str  # the GPUs a learner would know it by
    shared_per_block: int  # bytes of shared memory one block may use (the opt-in maximum)
    registers_per_block: int
    registers_per_thread: int
    sm_count: int  # of the first board named
    lowering: str  # what T.gemm and T.Pipelined become
    # Per-SM limits, for the occupancy a block's threads, registers and shared memory allow
    max_warps_per_sm: int = 64
    max_blocks_per_sm: int = 32
    shared_per_sm: int = 228 * KIB  # what the SM's blocks share (before the per-block reservation)
    registers_per_sm: int = 65536
    shared_reserved_per_block: int = KIB  # the CUDA runtime keeps 1 KiB of each block's share on sm_80+
    # Datasheet limits for a CPU-side roofline (a GPU run measures the bandwidth instead)
    dram_gbps: float = 0.0
    tensor_tflops: float | None = None  # dense fp16, fp32 accumulate

    @property
    def label(self) -> str:
        return f"{self.name} ({self.boards})"

    @property
    def shared_kib(self) -> int:
        return self.shared_per_block // KIB


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("sm_75", "sm_75", "T4, RTX 20xx", 64 * KIB, 65536, 255, 40,
                "mma.sync m16n8k8 with ldmatrix; T.Pipelined copies synchronously (no cp.async)",
                max_warps_per_sm=32, max_blocks_per_sm=16, shared_per_sm=64 * KIB, shared_reserved_per_block=0,
                dram_gbps=320.0, tensor_tflops=65.0),
        Profile("sm_80", "sm_80", "A100, A30", 163 * KIB, 65536, 255, 108,
                "mma.sync m16n8k16 with ldmatrix; T.Pipelined stages cp.async copies",
                max_warps_per_sm=64, max_blocks_per_sm=32, shared_per_sm=164 * KIB,
                dram_gbps=2039.0, tensor_tflops=312.0),  # A100 80GB SXM
        Profile("sm_86", "sm_86", "RTX 30xx, A6000, A10", 99 * KIB, 65536, 255, 82,
                "mma.sync m16n8k16 with ldmatrix; T.Pipelined stages cp.async copies",
                max_warps_per_sm=48, max_blocks_per_sm=16, shared_per_sm=100 * KIB,
                dram_gbps=936.0, tensor_tflops=71.0),  # RTX 3090
        Profile("sm_89", "sm_89", "RTX 40xx, L4, L40", 99 * KIB, 65536, 255, 128,
                "mma.sync m16n8k16 with ldmatrix; T.Pipelined stages cp.async copies",
                max_warps_per_sm=48, max_blocks_per_sm=24, shared_per_sm=100 * KIB,
                dram_gbps=1008.0, tensor_tflops=165.2),  # RTX 4090
        Profile("sm_90", "sm_90a", "H100, H200", 227 * KIB, 65536, 255, 132,
                "wgmma from shared memory, TMA loads with mbarriers, warp-specialized pipelines",
                max_warps_per_sm=64, max_blocks_per_sm=32, shared_per_sm=228 * KIB,
                dram_gbps=4800.0, tensor_tflops=989.5),  # H200, the course's reference GPU
    )
}  # fmt: skip
DEFAULT = "sm_90"


class UnknownArch(ValueError):
    pass


def profile_named(name: str) -> Profile:
    """``sm_80``, ``80``, ``8.0`` or ``sm_90a`` to its profile."""
    key = name.strip().lower().removeprefix("sm_").removesuffix("a").replace(".", "")
    profile = PROFILES.get(f"sm_{key}")
    if profile is None:
        known = ", ".join(PROFILES)
        raise UnknownArch(f"--arch {name}: the course has profiles for {known}")
    return profile


def profile_for_capability(major: int, minor: int, shared_per_block: int, sm_count: int, board: str) -> Profile:
    """The profile of a real GPU: its own limits, and the parameters of the newest profile that is
    no newer than it and asks for no more shared memory than it has (an RTX 50xx, sm_120 with 99 KiB,
    grades with sm_89's parameters)."""
    capability = major * 10 + minor
    fitting = [
        p
        for p in PROFILES.values()
        if int(p.name.removeprefix("sm_")) <= capability and p.shared_per_block <= shared_per_block
    ]
    base = max(fitting, key=lambda p: int(p.name.removeprefix("sm_"))) if fitting else PROFILES["sm_75"]
    return replace(
        base,
        boards=board,
        shared_per_block=shared_per_block,
        sm_count=sm_count,
        # an SM holds at least what one block may ask for, with the runtime's reservation
        shared_per_sm=max(base.shared_per_sm, shared_per_block + base.shared_reserved_per_block),
        dram_gbps=dram_gbps(board) or base.dram_gbps,
        tensor_tflops=tensor_peak_tflops(board) or base.tensor_tflops,
    )


# Dense fp16/bf16 Tensor Core throughput with fp32 accumulation, TFLOP/s, from NVIDIA's datasheets
# (the figures without sparsity). Matched against the device name in order, so "H100 PCIe" comes
# before "H100". A GPU not listed gets no compute roofline; its bandwidth roofline is still measured.
TENSOR_PEAK_TFLOPS: tuple[tuple[str, float], ...] = (
    ("H200 NVL", 835.0),
    ("H200", 989.5),
    ("H100 PCIe", 756.0),
    ("H100 NVL", 835.0),
    ("H100", 989.5),
    ("A100", 312.0),
    ("L40S", 362.0),
    ("L40", 181.0),
    ("L4", 121.0),
    ("A10G", 70.0),
    ("A10", 125.0),
    ("A6000", 154.8),
    ("RTX 4090", 165.2),
    ("RTX 3090", 71.0),
    ("T4", 65.0),
)


def tensor_peak_tflops(board: str) -> float | None:
    """The datasheet's dense fp16 Tensor Core peak for a device name such as "NVIDIA H200", or None."""
    for key, tflops in TENSOR_PEAK_TFLOPS:
        if key in board:
            return tflops
    return None


# fp32 FMA throughput of the CUDA cores, TFLOP/s, from NVIDIA's datasheets (docs/results/datasheets.md): the
# roofline of a kernel with no Tensor Core instruction. Matched like the peaks above; only the boards whose figure
# the course has checked are listed (a board of another form factor, such as the NVL or PCIe ones, clocks lower
# and gets None: its CUDA-core kernels are measured against the bandwidth alone).
FMA_PEAK_TFLOPS: tuple[tuple[str, float | None], ...] = (
    ("H200 NVL", None),
    ("H200", 67.0),
    ("H100 PCIe", None),
    ("H100 NVL", None),
    ("H100", 67.0),  # the SXM board: the H200 keeps its GH100 configuration and clocks
)


def fma_peak_tflops(board: str) -> float | None:
    """The datasheet's fp32 FMA peak on the CUDA cores for a device name such as "NVIDIA H200", or None."""
    for key, tflops in FMA_PEAK_TFLOPS:
        if key in board:
            return tflops
    return None


# DRAM bandwidth from NVIDIA's datasheets, GB/s, matched like the peaks above: for the CPU-side
# roofline of ``--profile --static`` (a GPU run measures its copy bandwidth instead).
DRAM_GBPS: tuple[tuple[str, float], ...] = (
    ("H200", 4800.0),
    ("H100 PCIe", 2000.0),
    ("H100", 3350.0),
    ("A100", 2039.0),  # the 80 GB SXM board (the 40 GB one has 1555)
    ("A30", 933.0),
    ("L40", 864.0),
    ("L4", 300.0),
    ("A10G", 600.0),
    ("A10", 600.0),
    ("A6000", 768.0),
    ("RTX 4090", 1008.0),
    ("RTX 3090", 936.0),
    ("T4", 320.0),
)


def dram_gbps(board: str) -> float | None:
    """The datasheet's DRAM bandwidth for a device name such as "NVIDIA H200", or None."""
    for key, gbps in DRAM_GBPS:
        if key in board:
            return gbps
    return None


@dataclass
class Device:
    """The machine a run grades on: how it checks numbers, and for which profile."""

    mode: str  # "cuda": run on the GPU; "cpu": compile for the profile's arch and simulate; "compile": compile only
    name: str
    target: Any
    # the GPU generation graded for: its limits pick the cases' block parameters (Hopper's unless told)
    profile: Profile = field(default_factory=lambda: PROFILES[DEFAULT])
    problem: str = ""  # why this machine cannot grade at all (e.g. no nvcc)
