"""Experiments the notebooks run without a GPU.

``resource_usage`` compiles a TileLang kernel for Hopper (sm_90a) and reads what ptxas allotted it:
registers per thread, bytes spilled to local memory, shared memory per block, threads per block, and
which Tensor Core and copy instructions TileLang emitted. ``compare_tiles`` runs it on puzzle 08's
GEMMs: operand tiles in registers (fragments) against tiles in shared memory.

``accumulation_errors`` sums the same fp16 products in an fp16 and an fp32 accumulator on the CPU.

How the numbers are obtained (TileLang 0.1.15): ``tilelang.lower`` turns the traced kernel into the
CUDA source TileLang would compile and a device module whose attributes hold the launch shape and
the dynamic shared memory; nvcc then compiles that source exactly as TileLang does (its own include
paths and flags, ``-arch=sm_90a``) with ``-Xptxas -v``, which prints the per-kernel resource usage.
TileLang's own ``JITKernel.n_regs`` is filled in only for HIP in this version, hence nvcc.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grader.pipeline.build import COMPILE_ONLY_TARGET
from grader.pipeline.profile import ptxas

ARCH = COMPILE_ONLY_TARGET["arch"]


@dataclass(frozen=True)
class Usage:
    """What one compiled kernel asks of an SM."""

    label: str
    threads: int  # per block, as launched (TileLang may add a producer warpgroup)
    registers: int  # per thread, as allotted by ptxas
    spill_stores: int  # bytes per thread written to local memory because registers ran out
    spill_loads: int
    stack_frame: int
    static_shared: int  # bytes per block (mbarriers and other __shared__ arrays)
    dynamic_shared: int  # bytes per block (the tiles TileLang packs into one dynamic buffer)
    tensor_cores: str  # "wgmma" (Hopper warpgroup MMA), "mma.sync" (warp MMA) or "none"
    copies: str  # "TMA", "cp.async" or "plain loads"
    register_split: tuple[int, int] | None  # (producer, consumer) registers after setmaxnreg

    @property
    def shared(self) -> int:
        return self.static_shared + self.dynamic_shared

    @property
    def register_file_per_block(self) -> int:
        """Bytes of the SM's 256 KiB register file this block occupies (4 bytes per register)."""
        return 4 * self.registers * self.threads


# The nvcc and ptxas reading lives in the pipeline (``--profile`` uses it too); these names stay for
# the notebooks and tests that use them.
_ptxas_numbers = ptxas.ptxas_numbers
_instructions = ptxas.instructions


def _lower(function: Any, values: dict[str, Any]):
    import tilelang
    from tilelang import tvm

    from grader.pipeline.trace import jit_options

    tir = function.get_tir(**values)
    target = tvm.target.Target(COMPILE_ONLY_TARGET)
    # The decorator's pass configs, as the JIT compile applies them (conv1d_im2col turns warp
    # specialization off: without them this would show a kernel that is never run).
    configs = jit_options(function).get("pass_configs") or {}
    with target, tvm.transform.PassContext(opt_level=3, config=configs):
        artifact = tilelang.lower(tir, target=target)
    attrs: dict[str, Any] = {}
    for _, func in artifact.device_mod.functions.items():
        if func.attrs is not None and "thread_extent" in func.attrs:
            attrs = dict(func.attrs)
    return artifact.kernel_source, attrs


def _nvcc(source: str, output: str = "cubin", *flags: str) -> tuple[str, str]:
    """nvcc on ``source`` as TileLang runs it for sm_90a (its include paths and flags), writing
    ``output`` ("cubin" or "ptx"): its log, and the output when it is text (PTX), else ""."""
    return ptxas.nvcc(source, ARCH, output, *flags)


def resource_usage(function: Any, label: str = "", **values: Any) -> Usage:
    """Compile ``function`` (a @tilelang.jit kernel) for sm_90a at these sizes and block parameters.

    Example: ``resource_usage(matmul_naive, M=4096, N=4096, K=4096, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)``.
    Needs nvcc (a CUDA toolkit, or ``pip install "tilelang[nvcc]"``), not a GPU.
    """
    source, attrs = _lower(function, values)
    numbers = _ptxas_numbers(_nvcc(source, "cubin", "-Xptxas", "-v")[0])
    extent = attrs.get("thread_extent", {})
    threads = int(extent.get("threadIdx.x", 1)) * int(extent.get("threadIdx.y", 1)) * int(extent.get("threadIdx.z", 1))
    tensor, copies, split = _instructions(source)
    if not label:
        name = getattr(getattr(function, "func", None), "orig_func", None)
        label = getattr(name, "__name__", "kernel")
    return Usage(
        label=label,
        threads=threads,
        dynamic_shared=int(attrs.get("dyn_shared_memory_buf", 0) or 0),
        tensor_cores=tensor,
        copies=copies,
        register_split=split,
        **numbers,
    )


def table(rows: list[Usage]) -> str:
    """A plain-text table of resource usages, one kernel per line."""
    head = ["kernel", "threads", "regs/thread", "copy/math regs", "spilled B/thread", "shared KiB", "MMA", "copies"]
    lines = [head]
    for u in rows:
        split = "-" if u.register_split is None else f"{u.register_split[0]} / {u.register_split[1]}"
        spill = f"{u.spill_stores} st, {u.spill_loads} ld" if u.spill_stores or u.spill_loads else "0"
        shared = f"{u.shared / 1024:.1f}"
        lines.append([u.label, str(u.threads), str(u.registers), split, spill, shared, u.tensor_cores, u.copies])
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def kernel_source(function: Any, **values: Any) -> str:
    """The CUDA source TileLang generates for ``function`` at these sizes and block parameters."""
    return _lower(function, values)[0]


# ------------------------------------------------------------------------------ instruction mix

# PTX opcodes by what they do, for reading how much work an unpacking or a softmax costs per element.
INSTRUCTION_KINDS = {
    "int to float": ("cvt.rn.f16.s32", "cvt.rn.f16.u32", "cvt.rn.f32.s32", "cvt.rn.f32.u32", "cvt.rn.f16.s16"),
    # (before the scalar kind: "mul.f16x2" starts with "mul.f16")
    "fp16x2 arithmetic": ("sub.f16x2", "mul.f16x2", "fma.rn.f16x2", "add.f16x2", "sub.rn.f16x2", "mul.rn.f16x2"),
    "fp16 arithmetic": ("sub.f16", "mul.f16", "fma.rn.f16", "add.f16", "sub.rn.f16", "mul.rn.f16", "add.rn.f16"),
    "fp16 <-> fp32": ("cvt.f32.f16", "cvt.rn.f16.f32", "cvt.rn.f16x2.f32"),
    "bit operations": ("and.", "or.", "xor.", "shr.", "shl.", "lop3.", "prmt.", "bfe.", "bfi."),
    "shared loads": ("ld.shared.",),
    "tensor core": ("wgmma.mma_async", "mma.sync"),
}


def ptx(function: Any, **values: Any) -> str:
    """The PTX nvcc makes of ``function``'s CUDA source for sm_90a (TileLang's flags; no GPU needed)."""
    return _nvcc(_lower(function, values)[0], "ptx")[1]


def instruction_mix(function: Any, **values: Any) -> dict[str, int]:
    """How many PTX instructions of each kind in ``INSTRUCTION_KINDS`` the compiled kernel holds.

    Counted in the text of the kernel, so an instruction inside a loop counts once however often the
    loop runs: for a pipelined K loop whose inner loops are unrolled (what TileLang emits), that is one
    K step's work for one thread. PTX is what nvcc hands to ptxas, which may still combine or drop
    instructions; it is the closest count a machine without a GPU or a disassembler can make.
    """
    counts = dict.fromkeys(INSTRUCTION_KINDS, 0)
    for line in ptx(function, **values).splitlines():
        words = line.strip().lstrip("{").split()  # cuda_fp16.h wraps its instructions in { }
        if words and words[0].startswith("@"):  # a predicated instruction: "@%p1 bra ..."
            words = words[1:]
        opcode = words[0] if words else ""
        for kind, prefixes in INSTRUCTION_KINDS.items():
            if opcode.startswith(prefixes):
                counts[kind] += 1
                break
    return counts


GEMM_SIZES = {"M": 4096, "N": 4096, "K": 4096}


def compare_tiles(naive: Any = None, pipelined: Any = None, shared: Any = None) -> list[Usage]:
    """Puzzle 08's experiment: the same GEMM with operand tiles in registers and in shared memory.

    Defaults to the reference kernels in ``solutions/``; pass your own to measure them instead.
    Five compilations: 64 x 64 x 32 tiles (the graded block of the naive, shared and pipelined
    kernels' bench cases) in registers, in shared memory with a serial loop, and pipelined; then
    128 x 256 x 64 (the tuned kernel's tile) in registers and pipelined.
    """
    if naive is None or pipelined is None or shared is None:
        from grader.discover import course_root, load_module

        reference = load_module(course_root() / "solutions" / "p08_matrix.py")  # read as a file, as the judge does

        naive = naive or reference.matmul_naive
        pipelined = pipelined or reference.matmul_pipelined
        shared = shared or reference.matmul_shared
    small = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}
    large = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}
    return [
        resource_usage(naive, "naive 64x64x32, registers", **GEMM_SIZES, **small),
        resource_usage(shared, "shared 64x64x32, serial loop", **GEMM_SIZES, **small),
        resource_usage(pipelined, "pipelined 64x64x32, shared", **GEMM_SIZES, **small, STAGES=3),
        resource_usage(naive, "naive 128x256x64, registers", **GEMM_SIZES, **large),
        resource_usage(pipelined, "pipelined 128x256x64, shared", **GEMM_SIZES, **large, STAGES=3, THREADS=256),
    ]


# ------------------------------------------------------------------------------ accumulation


def accumulation_errors(
    lengths: tuple[int, ...] = (64, 256, 1024, 4096, 16384), rows: int = 64, seed: int = 0
) -> dict[str, list[float]]:
    """Dot products of fp16 vectors, summed one product at a time in fp16 and in fp32 (torch, CPU).

    Returns, per accumulator, the median over ``rows`` dot products of |sum - exact| / rms(exact)
    for each length K: the error relative to the typical size of the result, as the grader's
    ``atol * rms(ref)`` measures it. The products are formed in fp32 (exact for fp16 inputs).
    """
    import torch

    generator = torch.Generator().manual_seed(seed)
    longest = max(lengths)
    a = torch.randn(rows, longest, generator=generator).half()
    b = torch.randn(rows, longest, generator=generator).half()
    products = a.float() * b.float()
    exact = torch.cumsum(products.double(), dim=1)
    acc16 = torch.zeros(rows, dtype=torch.float16)
    acc32 = torch.zeros(rows, dtype=torch.float32)
    wanted = set(lengths)
    errors: dict[str, list[float]] = {"fp16 accumulator": [], "fp32 accumulator": [], "fp32, stored as fp16": []}
    for k in range(longest):
        acc16 = acc16 + products[:, k].half()  # fp16 + fp16 rounds to fp16, as an fp16 register would
        acc32 = acc32 + products[:, k]
        if k + 1 in wanted:
            ref = exact[:, k]
            rms = ref.pow(2).mean().sqrt()
            for label, value in (
                ("fp16 accumulator", acc16.double()),
                ("fp32 accumulator", acc32.double()),
                ("fp32, stored as fp16", acc32.half().double()),
            ):
                errors[label].append(float(((value - ref).abs() / rms).median()))
    return errors
