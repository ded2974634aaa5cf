"""The grader compiles the traced TIR itself, so the options of the learner's @tilelang.jit(...)
must travel with it (puzzle 09's im2col kernel depends on one)."""

from __future__ import annotations

from pathlib import Path

from grader.discover import load_module
from grader.pipeline.trace import jit_options

ROOT = Path(__file__).resolve().parent.parent


def test_pass_configs_of_the_decorator_are_kept():
    module = load_module(ROOT / "solutions" / "p09_conv1d.py")
    options = jit_options(module.conv1d_im2col)
    assert {str(getattr(k, "value", k)): v for k, v in options["pass_configs"].items()} == {
        "tl.disable_warp_specialized": True
    }


def test_a_plain_decorator_gives_no_options():
    module = load_module(ROOT / "solutions" / "p08_matrix.py")
    assert jit_options(module.gemv) == {}
    assert jit_options(lambda A: A) == {}


def test_a_build_no_gpu_will_run_skips_the_device_optimizer_and_a_run_keeps_it(tmp_path, monkeypatch):
    """A CPU check simulates the TIR and --device compile only builds, so nvcc need not optimize what no GPU
    launches (puzzle 08's scalar matmul_naive: 75 s at -O3, 2 s at -O0); a GPU build keeps nvcc's defaults.
    TileLang's cache keys on the flags, so neither build is ever loaded for the other."""
    from grader.discover import load_puzzle
    from grader.pipeline.build import COMPILE_ONLY_TARGET, UNRUN_BUILD_FLAGS, compile_tir

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))
    path = ROOT / "solutions" / "p02_vector_add.py"
    module = load_module(path)
    kernel = load_puzzle(module).kernel("add")
    case = kernel.cases[0]
    tir = module.add.get_tir(**case.sizes, **case.params)
    unrun = compile_tir(tir, COMPILE_ONLY_TARGET, path, kernel, {"compile_flags": ["-lineinfo"]}, runs=False)
    run = compile_tir(tir, COMPILE_ONLY_TARGET, path, kernel, {"compile_flags": ["-lineinfo"]})
    assert unrun.compile_flags == ["-lineinfo", *UNRUN_BUILD_FLAGS]  # the kernel's own flags kept, first
    assert run.compile_flags == ["-lineinfo"]
    assert unrun.get_kernel_source() == run.get_kernel_source()  # what the grader reads is the same CUDA
