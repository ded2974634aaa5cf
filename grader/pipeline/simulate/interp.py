"""Execute the TIR that TileLang's frontend emits for a kernel, on the CPU, at tile level.

One program per block of the launch grid, run one after another. Fragment, shared and local
buffers are per-block torch tensors that start as NaN (so a forgotten clear or copy shows).
A ``T.Parallel`` nest is evaluated at once, vectorised over the whole nest: every loop
variable of the nest is a tensor along its own axis of a fixed-rank grid. Serial and pipelined
loops run in order. Tile ops (copy, fill, reduce, gemm, cumsum) run as whole-tile torch ops.

The semantics follow TileLang 0.1.15 (src/op/copy.cc, reduce.cc, gemm*.cc):
- copy matches the non-unit extents of the two regions by position; source elements outside
  a global buffer read as 0 and destination elements outside it are dropped; values are cast
  to the destination dtype;
- reduce combines with the destination when clear=False;
- gemm accumulates in the accumulator's dtype, rounding after every 16-wide K step (one MMA)
  when that dtype is 16-bit, as the Tensor Cores do;
- ``x * y + c`` in fp16/bf16 is rounded once, as the fused multiply-add nvcc emits for it.
- math functions (T.exp, T.log, T.rsqrt...) are torch's; a second run moves each result by the few ulps the GPU's
  approximation may differ by (approximate mode), and a case whose verdict changes gets none.
- a 16-bit sum reduce adds in the order the GPU's threads do, with products stored to a fragment
  added unrounded (fused), so a fp16 accumulator fails the same elements as on the GPU (lanes.py).
"""

from __future__ import annotations

from typing import Any

import torch

from grader.pipeline.shared_memory import SHARED_LIMIT
from grader.pipeline.simulate.expressions import Expressions
from grader.pipeline.simulate.faults import Unsupported
from grader.pipeline.simulate.memory import Memory
from grader.pipeline.simulate.statements import Statements
from grader.pipeline.simulate.values import (
    Lanes,
    binary_ops,
    dispatch_table,
)


class Interpreter(Statements, Memory, Expressions):
    """One kernel's TIR run on the CPU: the state here, the statements, memory and expressions in their mixins."""

    def __init__(
        self,
        func: Any,
        tensors: dict[str, torch.Tensor],
        shared_limit: int = SHARED_LIMIT,
        gpu: str = "a Hopper block",
        tma_stores: bool = False,
        reverse_blocks: bool = False,
        integers: torch.Generator | None = None,
        contract: bool = False,
        approximate: int | None = None,
    ):
        from tilelang import tvm

        from grader.pipeline.simulate.lane_races import LaneWatch
        from grader.pipeline.simulate.races import RaceWatch, written_globals

        self.shared_limit, self.gpu = shared_limit, gpu  # the GPU profile's per-block limit, and its name
        # The kernel's CUDA stores shared tiles to global memory with TMA (tl::tma_store): a 1-D store then
        # writes whole 16-byte units at the tensor's end (scripts/p09/tma_store_tail.py measured it).
        self.tma_stores = tma_stores

        self.tir = tvm.tirx
        self.bind_tables(tvm.tirx)
        # Contract mode (the second run of a kernel with a float multiply-add, execute.py): a float32 or 16-bit product
        # is kept unrounded (float64) wherever it goes through registers (a variable; a local, local.var or fragment
        # buffer, which then hold float64), and an add or subtract of its type rounds once, as a fused multiply-add
        self.contract = contract
        # Approximate mode (the second run of a kernel with a math function the GPU computes to within a few ulps,
        # execute.py): each such result moved by up to those ulps, which way a hash of its operands and this key
        # decides (values.nudged); None: torch's results as they are
        self.approximate = approximate
        self.func = func
        # Blocks run last to first: a result that depends on the order shows in one of the two orders.
        self.reverse_blocks = reverse_blocks
        # Integer and bool memory the kernel allocates starts as 0, or, given a generator, at random (the second run
        # of simulate(), which compares the two: the GPU leaves that memory undefined); integer_memory: some was.
        self.integers = integers
        self.integer_memory = False
        self.block_vars: list[tuple[str, Any]] = []  # (blockIdx.x/y/z, loop var) of the loops we are inside
        self.env: dict[Any, Any] = {}
        self.buffers: dict[Any, torch.Tensor] = {}
        self.scopes: dict[Any, str] = {}
        self.lanes = Lanes()
        self.parallel_vars: set[Any] = set()
        self.lane_watch = LaneWatch()  # a nest's shared and global accesses, lane by lane (lane_races.py)
        self.stores_by_loop: dict[Any, frozenset] = {}  # a parallel loop -> the buffers stored inside it
        self.block_extents: dict[Any, int] = {}
        # buffer -> (unrounded products, the storage they belong to, its version when they were kept)
        self.exact: dict[Any, tuple[torch.Tensor, torch.Tensor, int]] = {}
        self.placements: dict[str, Any] | None = None  # fragment placements, inferred on first need
        # local / local.var buffers written inside a T.Parallel nest: one copy per iteration (each
        # thread's registers), shaped [lanes (RANK axes)] + the buffer's shape, until the nest ends
        self.private: dict[Any, torch.Tensor] = {}
        # integer local / local.var buffers a nest's lanes left different: buffer -> which elements (flat, bool);
        # each thread holds its own value there, so reading one gives no verdict (Memory.end_private)
        self.thread_dependent: dict[Any, torch.Tensor] = {}
        self.checked_blocks: list[Any] = []  # blocks whose shared memory was counted
        self.views_dtype = self.reinterprets(func)  # some T.view reads a buffer as another dtype
        self.shapes: dict[Any, list[int]] = {}  # buffer -> its shape as ints (sizes are fixed per run)
        for param in func.params:
            buffer = func.buffer_map.get(param)
            if buffer is None:
                raise Unsupported(f"the scalar parameter {param}")
            self.buffers[buffer.data] = tensors[buffer.name]
            self.scopes[buffer.data] = "global"
        self.races = RaceWatch(written_globals(func, self.tir))

    @classmethod
    def bind_tables(cls, tirx: Any) -> None:
        """The dispatch tables of this class, made on its first interpreter and kept on the class (TVM is imported
        late, so not at import): each TIR node kind to its method, each binary operator to its torch function."""
        if "statement_methods" in cls.__dict__:
            return
        cls.statement_methods = dispatch_table(cls, tirx, cls.STATEMENT_KINDS)
        cls.expression_methods = dispatch_table(cls, tirx, cls.EXPRESSION_KINDS, numbers="constant")
        cls.binary_ops = binary_ops(tirx)

    def reinterprets(self, func: Any) -> bool:
        dtypes: dict[Any, set[str]] = {}

        def visit(node: Any) -> None:
            if isinstance(node, self.tir.BufferLoad | self.tir.BufferStore):
                dtypes.setdefault(node.buffer.data, set()).add(str(node.buffer.dtype))
            elif isinstance(node, self.tir.SBlock):
                for buffer in node.alloc_buffers:
                    dtypes.setdefault(buffer.data, set()).add(str(buffer.dtype))

        self.tir.stmt_functor.post_order_visit(func.body, visit)
        return any(len(names) > 1 for names in dtypes.values())
