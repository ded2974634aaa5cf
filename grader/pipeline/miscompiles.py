"""Miscompiles: where the CUDA TileLang generates does not do what the admitted TIR says, read from both.

The CPU simulator runs the TIR, so a kernel whose generated code does something else would pass on the CPU and fail
on the GPU. Each pattern here is read from the two texts, never assumed from the kernel's shape; the simulator then
runs the TIR rewritten to do what the generated code does, so that the numbers (and so the verdict, case by case)
are the GPU's, and a failure names the construct and the way around it.

One pattern so far, seen with TileLang 0.1.15 for sm_90a (issue 40, item 3): with warp specialization on, an
accumulator cleared once before a loop that holds a ``T.Pipelined`` loop is cleared again right before the pipelined
loop, on every step of the outer one (``tests/wrong/p09/channels_last_taps_warp_specialized.py``: every case with a
TMA pipeline fails on the GPU, 10778 of 10800 elements wrong at ``rect_40to72_150_k5``; a loop that runs once is
unharmed, as stream-K's shares of one chunk show in ``tests/right/p08/matmul_streamk_segments_per_tile.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from grader.tir import region_buffer, stmt_children

# for (int k = 0; k < 5; ++k) {
_FOR = re.compile(r"\bfor \((?:int|int64_t|long long) (\w+) = ")
# acc[3] = 0x0p+0f ... ;   *(float4*)(acc + (i * 4)) = make_float4(v, v, v, v);
_STORE = re.compile(r"^\s*(?:\*\(\w+\*\)\()?(\w+)(?:\[| \+ ).*?\)?\s=\s(?P<value>[^=].*);")
_ZERO_LITERAL = re.compile(r"^\(?(?:\(\w+\))?0x0p\+0f?\b")
_ZERO_NAME = re.compile(r"^\s*\w+ (\w+) = 0x0p\+0f?\b")
_SPLAT = re.compile(r"^make_\w+\((\w+)(?:, \1)*\)$")
_COPY_SUFFIX = re.compile(r"_\d+$")
# The tile ops that write a buffer, and which of their arguments is the region they write.
_DESTINATION = {"tl.tileop.fill": 0, "tl.tileop.gemm": 2, "tl.tileop.copy": 1, "tl.tileop.reduce": 1}


@dataclass(frozen=True)
class MovedClear:
    """``buffer`` is cleared inside the generated loop over ``loop``, though the TIR clears it only outside."""

    buffer: str
    loop: str
    warp_specialized: bool

    def sentence(self) -> str:
        buffer, loop = self.buffer, self.loop
        fix = (
            "Walk both loops as one T.Pipelined loop, or turn warp specialization off in the decorator "
            "(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})"
        )
        if self.warp_specialized:
            return (
                f"TileLang miscompiles this kernel: with warp specialization on, the code it generates clears "
                f"`{buffer}` on every step of the loop over `{loop}`, where yours clears it once before that loop "
                f"(a T.Pipelined loop inside another loop does this), so on a GPU each step starts `{buffer}` from "
                f"zero again and only the last one's sum is kept. {fix}"
            )
        return (
            f"TileLang miscompiles this kernel: the code it generates clears `{buffer}` on every step of the loop "
            f"over `{loop}`, where yours clears it once before that loop, so on a GPU each step starts `{buffer}` "
            f"from zero again and only the last one's sum is kept. {fix}"
        )


@dataclass
class _Written:
    """What the TIR says, as ``moved_clears`` and ``as_generated`` read it."""

    clears: dict[str, list[frozenset[str]]]  # buffer -> the serial loops' names around each of its clears
    writes: dict[str, set[str]]  # serial loop name -> the buffers its body writes (stores, tile ops' destinations)
    first_fill: dict[str, Any]  # buffer -> its first T.fill / T.clear with 0, the statement itself


def _written(tir: Any) -> _Written:
    """Read from the TIR: each buffer's clears (a fill with 0, or a store of 0) with the serial loops around them,
    and what each serial loop writes."""
    from tilelang import tvm

    tirx = tvm.tirx
    found = _Written({}, {}, {})
    clears, writes = found.clears, found.writes

    def region_name(arg: Any) -> str | None:
        buffer = region_buffer(arg)
        return buffer.name if buffer is not None else None

    def visit(node: Any, loops: tuple[str, ...]) -> None:
        if isinstance(node, tirx.For):
            if node.kind in (tirx.ForKind.SERIAL, tirx.ForKind.UNROLLED):  # T.serial, T.Pipelined, T.unroll
                name = node.loop_var.name
                writes.setdefault(name, set())
                loops = (*loops, name)
            visit(node.body, loops)
            return
        if isinstance(node, tirx.BufferStore):
            for loop in loops:
                writes[loop].add(node.buffer.name)
            if isinstance(node.value, (tirx.FloatImm, tirx.IntImm)) and node.value.value == 0:
                clears.setdefault(node.buffer.name, []).append(frozenset(loops))  # a clear written as stores
        elif isinstance(node, tirx.Evaluate) and isinstance(node.value, tirx.Call):
            call = node.value
            op = getattr(call.op, "name", "")
            if op in _DESTINATION and len(call.args) > _DESTINATION[op]:
                name = region_name(call.args[_DESTINATION[op]])
                if name is not None:
                    for loop in loops:
                        writes[loop].add(name)
                    value = call.args[1] if op == "tl.tileop.fill" and len(call.args) > 1 else None
                    if value is not None and isinstance(value, (tirx.FloatImm, tirx.IntImm)) and value.value == 0:
                        clears.setdefault(name, []).append(frozenset(loops))
                        found.first_fill.setdefault(name, node)
        for child in stmt_children(node):
            visit(child, loops)

    visit(tir.body, ())
    return found


def generated_clears(cuda: str) -> list[tuple[str, tuple[str, ...]]]:
    """(buffer, the names of the for loops around it) for each store of zero in the generated CUDA, read line by
    line (TileLang's codegen puts one statement or one brace-opening header on a line). A loop whose body is
    nothing but zero stores is the clear's own loop, not one around it, and is left out."""

    @dataclass
    class Block:
        loop: str | None
        only_zeros: bool = True

    found: list[tuple[str, list[Block]]] = []
    stack: list[Block] = []  # one per open brace
    zeros: set[str] = set()  # names declared as 0 (the splatted value of a vector clear)
    for line in cuda.splitlines():
        code = re.sub(r"/\*.*?\*/", "", line.split("//", 1)[0])
        zero = False
        if declared := _ZERO_NAME.match(code):
            zeros.add(declared.group(1))
            zero = True
        elif (store := _STORE.match(code)) and "==" not in code.split(" = ", 1)[0]:
            value = store["value"].strip()
            splat = _SPLAT.match(value)
            if _ZERO_LITERAL.match(value) or (splat and splat.group(1) in zeros):
                found.append((store.group(1), list(stack)))
                zero = True
        if not zero and code.strip() not in ("", "{", "}") and stack:
            stack[-1].only_zeros = False
        loop = _FOR.search(code)
        for char in code:
            if char == "{":
                stack.append(Block(loop.group(1) if loop else None))
                loop = None
            elif char == "}" and stack:
                stack.pop()
    return [(buffer, tuple(b.loop for b in blocks if b.loop and not b.only_zeros)) for buffer, blocks in found]


def moved_clears(tir: Any, cuda: str) -> list[MovedClear]:
    """Each accumulator the generated CUDA clears inside a loop that, as written, holds no clear of it but writes
    it (so the clear throws away what the loop's earlier steps added). Empty where there is no CUDA to read."""
    if not cuda:
        return []
    written = _written(tir)
    clears, writes = written.clears, written.writes
    warp_specialized = "producer_phase_cnt" in cuda or ".arrive_and_expect_tx(" in cuda
    moved: list[MovedClear] = []
    for buffer, around in generated_clears(cuda):
        if buffer not in clears:
            continue  # not a buffer the TIR clears: a name codegen made up, or a store the learner wrote
        for name in around:
            loop = name if name in writes else _COPY_SUFFIX.sub("", name)  # cb_1: the consumer's copy of cb
            if loop not in writes or buffer not in writes[loop]:
                continue
            if any(loop in written_around for written_around in clears[buffer]):
                continue  # the learner clears it inside that loop too
            moved.append(MovedClear(buffer, loop, warp_specialized))
    return list(dict.fromkeys(moved))


def as_generated(tir: Any, moved: list[MovedClear]) -> Any:
    """``tir`` with each moved clear done where the generated code does it: the buffer's clear (its first fill with
    0, as written) repeated right before each ``T.Pipelined`` loop inside the loop it moved into that adds into the
    buffer, under the same conditions (warp specialization puts it at the head of the consumer's branch, which
    takes the pipelined loop's place)."""
    from tilelang import tvm

    tirx = tvm.tirx
    written = _written(tir)

    def before_pipelines(body: Any, names: list[str]) -> Any:
        def rewrite(node: Any) -> Any:
            if not (isinstance(node, tirx.For) and "num_stages" in node.annotations):
                return None
            adds = written.writes.get(node.loop_var.name, set())
            clears = [written.first_fill[name] for name in names if name in adds]
            return tirx.SeqStmt([*clears, node]) if clears else None

        return tirx.stmt_functor.ir_transform(body, None, rewrite, ["tirx.For"])

    def rewrite_loop(node: Any) -> Any:
        if not isinstance(node, tirx.For):
            return None
        names = sorted({m.buffer for m in moved if m.loop == node.loop_var.name and m.buffer in written.first_fill})
        if not names:
            return None
        return tirx.For(
            node.loop_var, node.min, node.extent, node.kind, before_pipelines(node.body, names),
            node.thread_binding, node.annotations,
        )  # fmt: skip

    body = tirx.stmt_functor.ir_transform(tir.body, None, rewrite_loop, ["tirx.For"])
    return tir.with_body(body)
