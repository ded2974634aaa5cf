"""Puzzle 07's tolerance on the CUDA cores: how much of the fp16 bound a correct kernel uses.

Emulates the reference kernels' arithmetic on the CPU for every graded case (fp32 scores, fp32
exp2, fp32 weights P, an fp32 accumulator added key by key, one rounding of O to fp16) and, for
contrast, the same with the weights P rounded to fp16 before they meet V (the sum still of the
fp32 weights), and with an fp16 accumulator (rounded after every key). Prints, per case, the worst
|out - ref| / (atol * rms(ref) + rtol * |ref|) under the default fp16 tolerance: under 1 passes.

    python scripts/p07/cuda_cores_tolerance.py
"""

from __future__ import annotations

import math

import torch

from grader.pipeline.inputs import make_inputs
from grader.spec import DEFAULT_TOLERANCES
from solutions.p07_flash_attention import attention_reference, puzzle

TOLERANCE = DEFAULT_TOLERANCES["float16"]


def used(out: torch.Tensor, ref: torch.Tensor) -> float:
    """The worst element's error as a fraction of what the grader allows it."""
    allowed = TOLERANCE.atol * ref.pow(2).mean().sqrt() + TOLERANCE.rtol * ref.abs()
    return ((out.double() - ref).abs() / allowed).max().item()


def emulate(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, accumulator: torch.dtype, weights: torch.dtype = torch.float32
) -> torch.Tensor:
    scale = math.log2(math.e) / math.sqrt(Q.shape[1])
    S = Q.float() @ K.float().T
    P = torch.exp2((S - S.max(dim=1, keepdim=True).values) * scale)
    if accumulator == torch.float32:
        acc = P.to(weights).float() @ V.float()  # weights: P rounded before it meets V, or not
    else:  # one rounding per key, as `acc[i, d] += P[i, c] * V[c, d]` does in an fp16 fragment
        acc = torch.zeros(Q.shape, dtype=accumulator)
        for c in range(K.shape[0]):
            acc = (acc.float() + P[:, c : c + 1] * V[c].float()).to(accumulator)
    return (acc.float() / P.sum(dim=1, keepdim=True)).half()


def main() -> None:
    kernel = puzzle().kernels[1]
    print(f"{'case':22} {'correct':>8} {'P in fp16':>10} {'fp16 accumulator':>17}   (fraction of the fp16 tolerance)")
    for case in kernel.cases:
        Q, K, V = make_inputs(kernel, case, "cpu")
        ref = attention_reference(Q.double(), K.double(), V.double())
        fp32 = used(emulate(Q, K, V, torch.float32), ref)
        rounded_p = used(emulate(Q, K, V, torch.float32, torch.float16), ref)
        fp16 = used(emulate(Q, K, V, torch.float16), ref)
        print(f"{case.name:22} {fp32:8.3f} {rounded_p:10.3f} {fp16:17.3f}")


if __name__ == "__main__":
    main()
