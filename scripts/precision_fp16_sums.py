"""How far does a sum kept in fp16 drift from the answer, against the grader's fp16 tolerance? (issue 25, item 4)

A kernel that keeps a sum in fp16 rounds after every addition. Whether the grader must catch it depends
on how many additions one running sum takes: TileLang's T.reduce_sum splits a row over the threads
(each thread adds its own elements, then a butterfly across threads), so a thread's chain is row /
threads long; a sum carried by one thread through a serial loop (a K loop, a running sum across tiles)
is as long as the row. This script emulates both orders on the CPU with torch (the per-thread order of
grader/pipeline/simulate/lanes.py: 8 consecutive elements per thread per vector, threads interleaved, two
partial sums per thread for the half2 pairs, then the XOR butterfly) and reports, for softmax rows and
GEMV dot products of the sizes the puzzles use and the sizes a learner would use, the worst element's
error divided by what the fp16 tolerance allows it (grader/pipeline/compare.py: atol * rms(ref) + rtol * |ref|,
rtol 2e-3, atol 1e-3). Above 1.00 the grader fails the case. A last table rounds GEMV's products to fp16 but
sums them in fp32, at the sizes puzzle 08 grades.

    python scripts/precision_fp16_sums.py          # about a minute on one core
"""

from __future__ import annotations

import torch

from grader.pipeline.simulate.lanes import Placement, gpu_order_sum
from grader.spec import DEFAULT_TOLERANCES

TOL = DEFAULT_TOLERANCES["float16"]
ROWS = 64
VECTOR = 8  # fp16 elements a thread loads at once


def placement(length: int, threads: int) -> Placement:
    """Row of ``length`` over ``threads`` threads: runs of VECTOR elements, threads interleaved."""
    index = torch.arange(length)
    run = index // VECTOR
    return Placement(thread=run % threads, slot=(run // threads) * VECTOR + index % VECTOR)


def ratio(got: torch.Tensor, want: torch.Tensor) -> float:
    """Worst element's error over what the tolerance allows it (above 1: the case fails)."""
    want = want.double()
    allowed = TOL.atol * want.pow(2).mean().sqrt() + TOL.rtol * want.abs()
    return float(((got.double() - want).abs() / allowed).max())


def row_sum_fp16(values: torch.Tensor, threads: int) -> torch.Tensor:
    """Sum each row in fp16 the way ``threads`` threads of a T.reduce_sum do (threads=1: one serial chain)."""
    length = values.shape[-1]
    padded = -(-length // (VECTOR * threads)) * VECTOR * threads  # the fragment's padding adds zeros
    x = torch.nn.functional.pad(values.double(), (0, padded - length))
    rows = torch.stack([placement(padded, threads).thread] * values.shape[0])
    slots = torch.stack([placement(padded, threads).slot] * values.shape[0])
    return gpu_order_sum(x.half(), x, Placement(rows, slots), -1, torch.float16)


def softmax(x: torch.Tensor, threads: int | None) -> torch.Tensor:
    """Softmax with exponentials and row sum in fp16 (threads=None: the fp32 kernel the puzzle teaches)."""
    top = x.float().amax(dim=-1, keepdim=True)
    if threads is None:
        e = torch.exp(x.float() - top)
        return (e / e.sum(dim=-1, keepdim=True)).half()
    e = torch.exp(x.float() - top).half()
    total = row_sum_fp16(e, threads).unsqueeze(-1)
    return (e.float() / total.float()).half()


def gemv(a: torch.Tensor, b: torch.Tensor, threads: int | None) -> torch.Tensor:
    """Each row's dot product: fp32 sum (threads=None) or products and sum in fp16."""
    if threads is None:
        return (a.float() * b.float()).sum(dim=-1).half()
    products = a.float() * b.float()  # fused multiply-add: the product is not rounded on its own
    return row_sum_fp16(products, threads)


def main() -> None:
    generator = torch.Generator().manual_seed(25)
    print("softmax: exponentials and row sum in fp16 vs. the fp32 kernel (worst error / tolerance)")
    print(f"{'N':>7} {'fp32':>7} {'128 thr':>8} {'256 thr':>8} {'1 thr':>8}")
    for n in (129, 256, 1000, 4096, 8192, 16384, 32768):
        x = torch.randn(ROWS, n, generator=generator).half()
        ref = torch.softmax(x.double(), dim=-1)
        cells = [ratio(softmax(x, t), ref) for t in (None, 128, 256, 1)]
        print(f"{n:>7} " + " ".join(f"{c:>7.2f} " for c in cells))
    print()
    print("gemv: dot products in fp16 vs. fp32 (worst error / tolerance)")
    print(f"{'K':>7} {'fp32':>7} {'128 thr':>8} {'32 thr':>8} {'1 thr':>8}")
    for k in (256, 1000, 4096, 8192, 32768):
        a = torch.randn(ROWS * 4, k, generator=generator).half()
        b = torch.randn(k, generator=generator).half()
        ref = a.double() @ b.double()
        cells = [ratio(gemv(a, b, t), ref) for t in (None, 128, 32, 1)]
        print(f"{k:>7} " + " ".join(f"{c:>7.2f} " for c in cells))
    print()
    # issue 40 item 7: the products rounded to fp16 (a * b in the inputs' dtype), the sum kept in fp32
    print("gemv: products rounded to fp16, sum in fp32 (worst error / tolerance, at 08's graded sizes)")
    print(f"{'M x K':>10} {'fp32':>7} {'fp16 products':>14}")
    for m, k in ((256, 256), (1000, 1000), (127, 129), (64, 8191), (77, 150), (8192, 8192)):
        a = torch.randn(m, k, generator=generator).half()
        b = torch.randn(k, generator=generator).half()
        ref = a.double() @ b.double()
        rounded = (a * b).float().sum(dim=-1).half()
        print(f"{f'{m}x{k}':>10} {ratio(gemv(a, b, None), ref):>7.2f} {ratio(rounded, ref):>14.2f}")


if __name__ == "__main__":
    main()
