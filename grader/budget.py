"""Which cases the CPU simulator runs where there is no GPU: the course's marks, then a budget.

A case marked ``simulate=True`` in its puzzle module is always simulated, and one marked ``False`` never
is. A case left unmarked (``None``) is simulated when it fits its kernel's budget: the cases of a kernel
are taken tails first (a size that is not a multiple of the block that tiles it, the edge a kernel
most often gets wrong), then smallest first, while the work of those taken stays within
:data:`KERNEL_WORK`. A case's work is the elements of all its tensors plus its flops: a rough count of
what the simulator computes, which sets its CPU time for the course's kernels (under a second for
every case admitted this way, measured on the course's solutions; README, "With a GPU and without").
"""

from __future__ import annotations

import dataclasses
import math

from grader.spec import Case, Kernel, Puzzle

# Element operations one kernel's unmarked cases may cost together. 131072 admits puzzles 01-02's
# odd_4097 (8194 and 12291) and 03's wide_7x5003 (40031); 100003 elements (tail_100003, 200006) do not fit.
KERNEL_WORK = 131072


def work(kernel: Kernel, case: Case) -> int:
    """Elements of every input and output at the case's sizes, plus the kernel's flops there."""
    elements = sum(math.prod(t.concrete_shape(case.sizes)) for t in (*kernel.inputs, *kernel.outputs))
    flops = kernel.flops(case.sizes) if kernel.flops else 0.0
    return int(elements + flops)


def has_tail(kernel: Kernel, case: Case) -> bool:
    """Whether some output dimension is not a multiple of the block parameter that tiles it."""
    for tensor in kernel.outputs:
        shape = tensor.concrete_shape(case.sizes)
        for extent, block in zip(shape, kernel.tile_sizes(tensor.name, case.params)):
            if isinstance(block, int) and block > 0 and extent % block:
                return True
    return False


def admitted(kernel: Kernel) -> Kernel:
    """The kernel with every case's ``simulate`` decided: the marks kept, the unmarked within the budget."""
    open_cases = [c for c in kernel.cases if c.simulate is None]
    if not open_cases:
        return kernel
    spent, chosen = 0, set()
    for case in sorted(open_cases, key=lambda c: (not has_tail(kernel, c), work(kernel, c))):
        cost = work(kernel, case)
        if spent + cost <= KERNEL_WORK:
            spent += cost
            chosen.add(case.name)
    cases = tuple(dataclasses.replace(c, simulate=c.name in chosen) if c.simulate is None else c for c in kernel.cases)
    return dataclasses.replace(kernel, cases=cases)


def with_budget(puzzle: Puzzle) -> Puzzle:
    """The puzzle with every case's ``simulate`` decided (see :func:`admitted`)."""
    return dataclasses.replace(puzzle, kernels=tuple(admitted(k) for k in puzzle.kernels))
