"""Reading TileLang's TIR: the few facts about a tile op's arguments that the checks, the concepts and the
simulator's race watch all need, in one place."""

from __future__ import annotations

from typing import Any

READ, WRITE = 1, 2  # a tl.region's access mask (its second argument): 1 read, 2 write, 3 both


def region_buffer(arg: Any) -> Any | None:
    """The buffer of a tile-op region argument (``T.region(buf[...], ...)`` or a BufferLoad)."""
    from tilelang import tvm

    if isinstance(arg, tvm.tirx.Call) and arg.args:
        arg = arg.args[0]
    return getattr(arg, "buffer", None)


def written_region(arg: Any) -> bool:
    """Whether ``arg`` is a ``tl.region`` its tile op writes (its mask has the write bit)."""
    from tilelang import tvm

    return (
        isinstance(arg, tvm.tirx.Call) and getattr(arg.op, "name", "") == "tl.region" and bool(int(arg.args[1]) & WRITE)
    )
