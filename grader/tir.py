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


# The element atomics as the TIR names them (``T.atomic_add(Y[i], x)``, ``T.atomic_max``, ``T.atomic_min``), with
# the reduction each performs; VECTOR_ATOMIC_ADDS add two or four neighbours from the pointed-at element.
ELEMENT_ATOMICS = {"tl.atomic_add_elem_op": "sum", "tl.atomic_max_elem_op": "amax", "tl.atomic_min_elem_op": "amin"}
VECTOR_ATOMIC_ADDS = ("tl.atomic_addx2_elem_op", "tl.atomic_addx4_elem_op")


def pointed_element(pointer: Any) -> Any | None:
    """The BufferLoad an element atomic's first argument points at (``tl.access_ptr(Y[i], extent, mask)``),
    else None."""
    from tilelang import tvm

    load = pointer.args[0] if isinstance(pointer, tvm.tirx.Call) and pointer.args else None
    return load if isinstance(load, tvm.tirx.BufferLoad) else None


def written_element(node: Any) -> Any | None:
    """The BufferLoad a ``tl.access_ptr`` with the write bit points at (an atomic's target), else None."""
    from tilelang import tvm

    is_pointer = isinstance(node, tvm.tirx.Call) and getattr(node.op, "name", "") == "tl.access_ptr"
    return pointed_element(node) if is_pointer and int(node.args[2]) & WRITE else None


def stmt_children(node: Any) -> list[Any]:
    """The statements directly under ``node`` (a sequence's, a loop's, a block's, a let's body)."""
    from tilelang import tvm

    tirx = tvm.tirx
    if isinstance(node, tirx.SeqStmt):
        return list(node.seq)
    if isinstance(node, tirx.IfThenElse):
        return [node.then_case] + ([node.else_case] if node.else_case is not None else [])
    if isinstance(node, tirx.SBlockRealize):
        return [node.block]
    if isinstance(node, tirx.SBlock):
        return [node.init, node.body] if node.init is not None else [node.body]
    body = getattr(node, "body", None)
    return [body] if isinstance(body, tirx.Stmt) else []


def layout_annotations(body: Any) -> list[tuple[Any, Any]]:
    """Every (tile, layout) pair of the ``layout_map`` annotations under ``body``, in visiting order: what
    T.annotate_layout wrote, or TileLang's layout inference after lowering. The tile is its buffer or its data
    variable, as the annotation keys it."""
    from tilelang import tvm

    found: list[tuple[Any, Any]] = []

    def visit(node: Any) -> None:
        annotations = getattr(node, "annotations", None)
        if annotations is not None and "layout_map" in annotations:
            found.extend(annotations["layout_map"].items())

    tvm.tirx.stmt_functor.post_order_visit(body, visit)
    return found
