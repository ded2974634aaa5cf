"""Step 2, admit: the one gate every traced kernel passes before the judge compiles or simulates it.

A tracer's reply is untrusted data: bounded in size, parsed as JSON, its TVM node types on an allow-list,
its names plain identifiers, no call to a host function, its compile options on an allow-list, its
signature the puzzle's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from grader.outcome import CauseKind
from grader.pipeline import tir_graph
from grader.pipeline.build import BuildFailed, check_signature
from grader.spec import Case, Kernel
from grader.tir import layout_annotations

MAX_REPLY_BYTES = 32 * 2**20  # a traced 1024x1024-tile GEMM is well under 1 MiB of JSON


IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _layout_node_types() -> tuple[type, ...]:
    """What a layout's index expressions may hold: its input variables, integer constants and arithmetic."""
    from tilelang import tvm

    tirx = tvm.tirx
    return (tirx.Var, tirx.IntImm, tirx.Add, tirx.Sub, tirx.Mul, tirx.FloorDiv, tirx.FloorMod, tirx.Div, tirx.Mod,
            tirx.Min, tirx.Max)  # fmt: skip


STRING_VALUE = tir_graph.TEXT_VALUE  # printf labels, scopes, thread tags: one rule for both readings of the TIR


# Checked again on the loaded TIR, beside the graph's allow-list of operations (tir_graph.ALLOWED_OPS)
HOST_CALL = re.compile(r"packed|tvm_ffi_call|call_llvm|call_spirv|tvm_stack|tvm_struct|lookup_param|TVMBackend")


EXTERN_CALLS = ("tirx.call_extern", "tirx.call_pure_extern")


# What T.print emits (tilelang/cuda/language/print.py), by exact name: the generated CUDA prints a callee's
# name verbatim, so a name that only starts like these could go on with code of its own.
TILELANG_EXTERNS = frozenset({"debug_print_var", "debug_print_msg", "debug_print_buffer_value"})


KEPT_ATTRS = ("global_symbol", "tilelang_out_idx")


IMPORTED_SOURCE = ("pragma_import",)  # T.import_source's pragma_import_c (and _llvm): text pasted into the code


# Pass configs that change how a kernel is lowered, nothing else: none that takes nvcc flags or passes,
# or writes files (tl.device_compile_flags, tirx.add_lower_pass, tl.dump_ir_path, cuda.kernels_output_dir, ...),
# and none that makes the GPU run other than the TIR the simulator runs (tl.disable_thread_storage_sync drops
# the barriers TileLang puts between a shared store and the other threads' loads: a race no CPU case shows).
PASS_CONFIGS = frozenset(
    "tl.disable_warp_specialized tl.enable_auto_warp_specialization tl.enable_fast_math tl.ptxas_register_usage_level "
    "tl.config_index_bitwidth tl.disable_tma_lower tl.disable_vectorize_256 tl.enable_fp32x2_reduction "
    "tl.enable_async_copy tl.enable_lower_ldgstg tl.enable_lower_ldgstg_predicated tl.disable_wgmma "
    "tl.enable_aggressive_shared_memory_merge tl.disable_shared_memory_reuse tl.disable_shuffle_elect "
    "tl.disable_loop_unswitching tl.loop_unswitching_allow_non_trivial_else "
    "tl.force_let_inline tl.storage_rewrite_detect_inplace tl.disable_out_of_bound_warning tl.Simplify "
    "tirx.disable_cse_tir tirx.disable_storage_rewrite tirx.disable_vectorize tirx.use_async_copy "
    "tirx.merge_static_smem tirx.noalias tirx.Simplify".split()
)


# No -D: a macro renames whatever the generated CUDA spells that way after TileLang has proved its indices in
# bounds and left them unguarded (-DblockIdx=threadIdx turns a block's in-bounds A[bx * 16384 + j] into a store
# megabytes past A), or switches the code paths of TileLang's templates.
FLAG = re.compile(
    r"^(-O[0-3]|--use_fast_math|-use_fast_math|-lineinfo|--extra-device-vectorization|-ftz=(true|false)"
    r"|--ftz=(true|false)|-prec-(div|sqrt)=(true|false)|--prec-(div|sqrt)=(true|false)|--fmad=(true|false)"
    r"|-fmad=(true|false)|-?-maxrregcount=\d+|-Xptxas=-v|--ptxas-options=-v)$"
)


def refused(sentence: str) -> BuildFailed:
    return BuildFailed(sentence, "", "", kind=CauseKind.REFUSED)


# The causes a tracer's failed reply may name (the tracer runs the learner's code, so a kind outside these is
# read as a build error; a learner who forges one only renames their own failure).
TRACER_KINDS = frozenset(
    {
        CauseKind.BUILD_ERROR,
        CauseKind.MISSING_KERNEL,
        CauseKind.NOT_A_KERNEL,
        CauseKind.LOAD_ERROR,
        CauseKind.OUT_OF_MEMORY,
    }
)


def load_tir(text: Any, kernel: Kernel) -> Any:
    """The PrimFunc in a tracer's reply, or BuildFailed: JSON of allowed TVM node types only, every node checked
    and every name the judge's own (grader.pipeline.tir_graph) before TVM reads it."""
    from tilelang import tvm

    if not isinstance(text, str) or len(text) > MAX_REPLY_BYTES:
        raise refused(f"`{kernel.function}` did not trace to a kernel the grader can read")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise refused(f"`{kernel.function}` did not trace to a kernel the grader can read") from error
    try:  # the one allow-list of node kinds, fields and strings
        tir_graph.check_graph(document)
        tir_graph.judge_names(document)
    except tir_graph.Refused as problem:
        raise refused(f"`{kernel.function}` {problem}") from None
    try:
        tir = tvm.ir.load_json(json.dumps(document))
    except Exception as error:
        raise refused(f"`{kernel.function}` did not trace to a kernel the grader can read") from error
    if not isinstance(tir, tvm.tirx.PrimFunc):
        raise refused(f"`{kernel.function}` did not trace to a kernel")
    return with_layouts_rebuilt(tir, kernel)


def with_layouts_rebuilt(tir: Any, kernel: Kernel) -> Any:
    """The TIR with every T.annotate_layout layout made again from its shape and index expressions. TileLang
    0.1.15 finds a layout's input variables by identity, which a JSON round trip loses: loaded as it is, the
    layout's output shape comes out as expressions instead of numbers, and lowering stops. Only integer
    arithmetic of the layout's own inputs is admitted in those expressions. (TVM's visitors call back from C++,
    which turns an exception into a RuntimeError: they only collect, and the checks run here.)"""
    from tilelang import tvm
    from tilelang.layout import Fragment, Layout

    def rebuilt(buffer: Any, layout: Any) -> Any:
        if isinstance(layout, Fragment) or not isinstance(layout, Layout):
            raise refused(f"`{kernel.function}` annotates a layout the grader does not compile")
        scope = getattr(getattr(buffer, "type_annotation", None), "storage_scope", "")  # the tile's data variable
        if not isinstance(buffer, tvm.tirx.Var) or scope not in ("shared", "shared.dyn"):
            raise refused(f"`{kernel.function}` annotates the layout of a tile outside shared memory")
        if not all(isinstance(size, tvm.tirx.IntImm) for size in layout.get_input_shape()):
            raise refused(f"`{kernel.function}` annotates a layout whose shape is not a constant")
        shape = [int(size) for size in layout.get_input_shape()]
        index = list(layout.get_forward_index())
        seen: list[Any] = []
        for expression in index:
            tvm.tirx.stmt_functor.post_order_visit(expression, seen.append)
        if strange := [node for node in seen if not isinstance(node, _layout_node_types())]:
            raise refused(f"`{kernel.function}` annotates a layout with {type(strange[0]).__name__} in its indices")
        inputs = {node.name: node for node in seen if isinstance(node, tvm.tirx.Var)}
        names = [f"_{chr(ord('i') + axis)}" for axis in range(len(shape))]
        if set(inputs) - set(names):
            raise refused(f"`{kernel.function}` annotates a layout over variables other than its own inputs")

        def forward(*axes: Any) -> list[Any]:
            swap = {inputs[name]: axis for name, axis in zip(names, axes) if name in inputs}
            return [tvm.tirx.stmt_functor.substitute(expression, swap) for expression in index]

        return Layout(shape, forward)

    made = [(layout, rebuilt(buffer, layout)) for buffer, layout in layout_annotations(tir.body)]
    if not made:
        return tir

    def remade(layout: Any) -> Any:
        return next(new for old, new in made if old.same_as(layout))

    def mutate(stmt: Any) -> Any:  # called for blocks only, the statements T.annotate_layout annotates
        layouts = stmt.annotations.get("layout_map")
        if layouts is None:
            return None
        annotations = {**stmt.annotations, "layout_map": {buffer: remade(old) for buffer, old in layouts.items()}}
        return tvm.tirx.SBlock(
            stmt.iter_vars, stmt.reads, stmt.writes, stmt.name_hint, stmt.body, stmt.init, stmt.alloc_buffers,
            stmt.match_buffers, annotations,
        )  # fmt: skip

    return tir.with_body(tvm.tirx.stmt_functor.ir_transform(tir.body, None, mutate, ["tirx.SBlock"]))


def unsafe_parts(tir: Any) -> list[str]:
    """Sentences for what the judge will not compile: host calls, odd names, unknown attributes."""
    from tilelang import tvm

    problems: list[str] = []

    def visit(node: Any) -> None:
        if isinstance(node, tvm.tirx.Call) and hasattr(node.op, "name"):
            name = str(node.op.name)
            if HOST_CALL.search(name):
                problems.append(f"calls a host function through {name.split('.')[-1]}")
            elif name in EXTERN_CALLS:
                callee = node.args[0].value if node.args and hasattr(node.args[0], "value") else "?"
                if str(callee) not in TILELANG_EXTERNS:
                    problems.append(f"calls the external function `{str(callee)[:60]}` (T.call_extern)")
        elif isinstance(node, tvm.tirx.Var) and not IDENTIFIER.match(str(node.name)):
            problems.append(f"has a variable named {str(node.name)[:40]!r}")
        elif isinstance(node, tvm.tirx.StringImm) and not STRING_VALUE.match(str(node.value)):
            problems.append(f"holds the string {str(node.value)[:40]!r}")
        elif isinstance(node, (tvm.tirx.BufferLoad, tvm.tirx.BufferStore)) and not IDENTIFIER.match(node.buffer.name):
            problems.append(f"has a buffer named {node.buffer.name[:40]!r}")
        elif isinstance(node, tvm.tirx.AttrStmt) and str(node.attr_key).startswith(IMPORTED_SOURCE):
            problems.append(f"imports source code ({node.attr_key})")
        # Annotations of blocks and loops are maps, not expressions: their strings are not StringImm nodes.
        for key, value in (getattr(node, "annotations", None) or {}).items():
            if str(key).startswith(IMPORTED_SOURCE):
                problems.append(f"imports source code (T.import_source, {key})")
            elif isinstance(value, str) and not STRING_VALUE.match(str(value)):
                problems.append(f"holds the string {str(value)[:40]!r} in the annotation {str(key)[:40]!r}")

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    for buffer in tir.buffer_map.values():
        if not IDENTIFIER.match(str(buffer.name)):
            problems.append(f"has a tensor named {str(buffer.name)[:40]!r}")
    for key in tir.attrs.keys() if tir.attrs is not None else []:
        if str(key) not in KEPT_ATTRS:
            problems.append(f"sets the function attribute {str(key)!r}")
    return sorted(set(problems))


def admit(tir: Any, kernel: Kernel, case: Case) -> Any:
    """The TIR the judge compiles and simulates, or BuildFailed with one sentence."""
    problems = unsafe_parts(tir)
    if problems:
        raise refused(
            f"`{kernel.function}` {problems[0]}: the grader compiles only TileLang's own operations "
            "(T.print included), so remove it"
        )
    check_signature(tir, kernel, case)
    # The kernel's symbol is the puzzle's name, whatever the traced one says (it lands in generated C++);
    # outputs are passed in (poisoned) by the grader instead of allocated by TileLang.
    return tir.with_attr("global_symbol", kernel.function).without_attr("tilelang_out_idx")


def admit_options(options: Any, kernel: Kernel) -> dict[str, Any]:
    """The decorator's options the judge passes to tilelang.compile: known pass configs with plain
    values, and nvcc flags from an allow-list; anything else is refused with one sentence."""
    if not options:
        return {}
    if not isinstance(options, dict) or set(options) - {"pass_configs", "compile_flags"}:
        raise refused(f"`{kernel.function}` has @tilelang.jit options the grader does not pass on")
    admitted: dict[str, Any] = {}
    configs = options.get("pass_configs") or {}
    if configs:
        if not isinstance(configs, dict):
            raise refused(f"`{kernel.function}`'s pass_configs is not a dict")
        for key, value in configs.items():
            if key not in PASS_CONFIGS or not isinstance(value, (bool, int, float, str)) or len(str(value)) > 100:
                raise refused(
                    f"`{kernel.function}` sets the pass config {str(key)[:60]!r} = {str(value)[:40]!r}, which the "
                    "grader does not pass on (it takes PassConfigKey options that only change lowering, plain values)"
                )
        admitted["pass_configs"] = dict(configs)
    flags = options.get("compile_flags") or []
    if flags:
        if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
            raise refused(f"`{kernel.function}`'s compile_flags is not a list of strings")
        for flag in flags:
            if not FLAG.match(flag):
                raise refused(
                    f"`{kernel.function}` passes nvcc the flag {flag[:60]!r}, which the grader does not pass on "
                    "(it takes -O, --use_fast_math, -lineinfo, -maxrregcount and the precision flags)"
                )
        admitted["compile_flags"] = list(flags)
    return admitted


@dataclass
class Traced:
    """What the tracer answered for one case: the reply, or the exception that stands for it."""

    reply: dict[str, Any] | None = None
    error: BaseException | None = None


def admitted(kernel: Kernel, case: Case, traced: Traced) -> tuple[Any, dict[str, Any]]:
    """The TIR and compile options of a traced case, through the judge's gate; raises the case's error."""
    from grader.pipeline.build import NotImplementedYet

    if traced.error is not None:
        raise traced.error
    reply = traced.reply or {}
    status = reply.get("status")
    if status == "not_implemented":
        raise NotImplementedYet("not implemented yet")
    if status == "failed":
        text = lambda name, limit=2000: str(reply.get(name) or "")[:limit]  # noqa: E731
        kind = text("kind", 40)
        kind = kind if kind in TRACER_KINDS else CauseKind.BUILD_ERROR
        renamed = text("renamed", 100)
        facts = {"renamed": renamed} if kind == CauseKind.MISSING_KERNEL and IDENTIFIER.match(renamed) else {}
        summary, location, hint = text("summary", 600), text("location", 200), text("hint", 600)
        raise BuildFailed(summary, location, text("trace", 50000), hint, kind=kind, facts=facts)
    if status != "traced":
        raise refused("the tracer gave an answer the grader does not understand")
    tir = admit(load_tir(reply.get("tir"), kernel), kernel, case)
    return tir, admit_options(reply.get("options"), kernel)
