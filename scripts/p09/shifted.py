"""Puzzle 09 with conv1d_im2col replaced by the implicit-GEMM rung conv1d_implicit, for scripts/sweep.py
--file, so `bash scripts/h200_sweeps.sh shifted` sweeps it at conv1d_im2col's bench case and block
(its variants override BLOCK_C, STAGES, ...). The cases and the other kernels are the course's own
(imported, not copied). `python scripts/sweep.py 09 conv1d_implicit large_256_131072_k5 '{}'` times
the rung at its own bench case."""

from solutions.p09_conv1d import conv1d_channels, conv1d_naive, puzzle  # noqa: F401
from solutions.p09_conv1d import conv1d_implicit as conv1d_im2col  # noqa: F401
