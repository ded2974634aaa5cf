"""What nvcc and ptxas make of TileLang's CUDA source, without a GPU: the registers, spills and static
shared memory ptxas allots (``-Xptxas -v``), and which instructions TileLang chose, read from the source.

nvcc runs as TileLang runs it (its include paths and flags, ``-O3``) for the architecture asked for.
TileLang's own ``JITKernel.n_regs`` is filled in only for HIP in 0.1.15, hence a second nvcc run.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

NVCC_TIMEOUT_S = 600


def nvcc(source: str, arch: str, output: str = "cubin", *flags: str) -> tuple[str, str]:
    """nvcc on ``source`` for ``arch`` ("sm_90a", "sm_80", ...), writing ``output`` ("cubin" or "ptx"):
    its log, and the output when it is text (PTX), else ""."""
    from tilelang.contrib import nvcc as tilelang_nvcc

    compiler = tilelang_nvcc.get_nvcc_compiler()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cu")
        with open(path, "w") as f:
            f.write(source)
        target = os.path.join(tmp, f"kernel.{output}")
        command = [compiler, f"--{output}", "-O3", f"-arch={arch}", *tilelang_nvcc.default_compile_options(), *flags]
        result = subprocess.run([*command, "-o", target, path], capture_output=True, text=True, timeout=NVCC_TIMEOUT_S)
        log = result.stdout + result.stderr
        if result.returncode != 0:
            errors = [line for line in log.splitlines() if "error" in line.lower()]
            raise RuntimeError("nvcc failed: " + (errors[0] if errors else log[-500:]))
        if output != "ptx":
            return log, ""
        with open(target) as f:
            return log, f.read()


def ptxas_numbers(log: str) -> dict[str, int]:
    """The first kernel's figures in a ``-Xptxas -v`` log (0 for a figure it does not print)."""

    def grab(pattern: str) -> int:
        match = re.search(pattern, log)
        return int(match.group(1)) if match else 0

    return {
        "registers": grab(r"Used (\d+) registers"),
        "spill_stores": grab(r"(\d+) bytes spill stores"),
        "spill_loads": grab(r"(\d+) bytes spill loads"),
        "stack_frame": grab(r"(\d+) bytes stack frame"),
        "static_shared": grab(r"(\d+) bytes smem"),
    }


def ptxas_functions(log: str) -> dict[str, dict[str, int]]:
    """Each kernel's figures in a ``-Xptxas -v`` log, by name (ptxas reports them in its own order)."""
    parts = re.split(r"Compiling entry function '(\w+)'", log)
    return {name: ptxas_numbers(text) for name, text in zip(parts[1::2], parts[2::2], strict=False)}


def ptxas_usage(kernel_source: str, arch: str, function: str | None = None) -> dict[str, int]:
    """registers, spill_stores, spill_loads, stack_frame (bytes per thread) and static_shared (bytes per
    block) of a kernel in ``kernel_source``, compiled for ``arch``: ``function``, or the first one ptxas
    reports (the only one, but for a function with several T.Kernel launches). One nvcc run: seconds."""
    log = nvcc(kernel_source, arch, "cubin", "-Xptxas", "-v")[0]
    found = ptxas_functions(log)
    if function is not None and function in found:
        return found[function]
    return ptxas_numbers(log)


def instructions(source: str) -> tuple[str, str, tuple[int, int] | None]:
    """(Tensor Core instructions, global-to-shared copies, (producer, consumer) registers after
    setmaxnreg or None), read from the generated CUDA source."""
    tensor = "wgmma" if "wgmma" in source else "mma.sync" if "mma_sync" in source else "none"
    copies = "TMA" if "tma_load" in source else "cp.async" if "cp_async" in source else "plain loads"
    low = re.search(r"warpgroup_reg_dealloc<(\d+)>", source)
    high = re.search(r"warpgroup_reg_alloc<(\d+)>", source)
    split = (int(low.group(1)), int(high.group(1))) if low and high else None
    return tensor, copies, split
