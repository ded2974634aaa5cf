"""Bugs the GPU can hide, found in the kernel's TIR before it runs.

An accumulator that is added into before anything cleared it holds whatever its registers or
shared memory held before. On the H200 that is often zero, so a kernel that forgets ``T.clear``
can pass on the GPU by luck and fail on the next launch or the next machine. The CPU simulator
fills such buffers with NaN and catches it; this check makes the GPU verdict agree.
"""

from __future__ import annotations

from typing import Any

# Tile ops that add into their destination unless told to clear it: name -> (dst arg, clear arg).
_ACCUMULATING = {"tl.tileop.gemm": (2, 9), "tl.tileop.reduce": (1, 4)}
# Tile ops that write their destination: name -> dst arg.
_WRITING = {"tl.tileop.fill": 0, "tl.tileop.copy": 1, "tl.tileop.cumsum": 1}
_OP_NAME = {"tl.tileop.gemm": "T.gemm", "tl.tileop.reduce": "T.reduce"}


def region_buffer(arg: Any) -> Any | None:
    """The buffer of a tile-op region argument (``T.region(buf[...], ...)`` or a BufferLoad)."""
    from tilelang import tvm

    if isinstance(arg, tvm.tirx.Call) and arg.args:
        arg = arg.args[0]
    return getattr(arg, "buffer", None)


def _is_true(value: Any) -> bool:
    try:
        return bool(int(value))
    except (TypeError, ValueError):
        return False  # a symbolic flag: assume it may not clear


def never_initialized(tir: Any) -> list[str]:
    """A sentence for each on-chip buffer that a tile op accumulates into before anything wrote it.

    Statements are visited in program order; a write anywhere earlier (a fill, a copy, a store in a
    T.Parallel loop, a gemm or reduce that clears) counts, so a clear inside the K loop passes here
    (it is a different bug, which the numbers catch).
    """
    from tilelang import tvm

    written: set[Any] = set()
    problems: list[str] = []

    def visit(node: Any) -> bool:
        if isinstance(node, tvm.tirx.BufferStore):
            written.add(node.buffer)
        elif isinstance(node, tvm.tirx.Evaluate) and isinstance(node.value, tvm.tirx.Call):
            call = node.value
            name = getattr(call.op, "name", "")
            if name in _WRITING and len(call.args) > _WRITING[name]:
                written.add(region_buffer(call.args[_WRITING[name]]))
            elif name in _ACCUMULATING:
                dst_arg, clear_arg = _ACCUMULATING[name]
                if len(call.args) <= max(dst_arg, clear_arg):
                    return True
                buffer = region_buffer(call.args[dst_arg])
                on_chip = buffer is not None and str(buffer.scope()) != "global"
                if on_chip and not _is_true(call.args[clear_arg]) and buffer not in written:
                    problems.append(
                        f"{_OP_NAME[name]} adds into `{buffer.name}` before anything cleared it: its starting "
                        f"values are leftovers, so call T.clear({buffer.name}) before the loop"
                    )
                written.add(buffer)
        return True

    tvm.tirx.stmt_functor.pre_order_visit(tir.body, visit)
    return list(dict.fromkeys(problems))
