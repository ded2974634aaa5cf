"""Puzzle 09's implicit-GEMM convolution, once a candidate here, is now the graded rung
``conv1d_implicit`` of solutions/p09_conv1d.py (no im2col tile: one shifted window per tap, the tap's
weights picked into registers, one T.gemm per tap). This name stays for the scripts that import it."""

from solutions.p09_conv1d import conv1d_implicit as conv1d_shifted  # noqa: F401
