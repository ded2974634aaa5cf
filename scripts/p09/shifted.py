"""Puzzle 09 with conv1d_im2col replaced by the implicit-GEMM candidate of scripts/p09/candidates.py, for
scripts/sweep.py --file: the cases and the other kernels are the course's own (imported, not copied)."""

from scripts.p09.candidates import conv1d_shifted as conv1d_im2col  # noqa: F401
from solutions.p09_conv1d import conv1d_channels, conv1d_naive, puzzle  # noqa: F401
