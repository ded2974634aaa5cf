"""Adversarial submission: the answer computed with torch instead of a TileLang kernel, once as a plain
Python function and once behind the @tilelang.jit decorator."""

import tilelang
import torch


def add(A, B, BLOCK: int = 1024, THREADS: int = 256):
    return A + B


@tilelang.jit
def mul_relu(A, B, BLOCK: int, THREADS: int = 256):
    return torch.relu(A * B)
