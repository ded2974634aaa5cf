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
