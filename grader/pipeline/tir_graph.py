"""The traced kernel's JSON graph (tvm.ir.save_json), checked node by node and renamed before TVM loads it.

A visitor of the loaded TIR meets only what it walks: a loop variable its body never uses, a buffer's data
variable, a block's name are not expressions, and TVM's code generators print such names verbatim into C++
and CUDA. So the gate reads the graph itself, where every node is listed, reachable or not:

- every node's type key is on an allow-list, with its fields (``SCHEMA``, built from what the course's own
  kernels trace to: solutions/, tests/right/, tests/wrong/, tests/concept/ at every case), and every plain
  value (dtype, integer, flag) is of the field's kind;
- every string is read in the place it is used: storage scopes, thread tags, operator names, attribute and
  annotation keys come from an allow-list or a strict pattern, other strings (T.print's labels) from a
  character set that cannot end a C string literal;
- every NAME (variables at every binding site, buffers, blocks) is replaced by one the judge makes
  (``judge_names``), whatever the learner wrote.

Nothing here imports TVM: the graph is plain JSON until the judge has made it safe to load.
"""

from __future__ import annotations

import re
from typing import Any

# The field kinds of SCHEMA. A REF is an index into the node list; the others are plain JSON values.
REF, DTYPE, INT, FLOAT, BOOL = "ref", "dtype", "int", "float", "bool"
PLAIN = (DTYPE, INT, FLOAT, BOOL)
# Fields that hold a string node, each read by its own rule (STRING_RULES).
NAME, SCOPE, THREAD_TAG, ATTR_KEY, TEXT = "name", "scope", "thread tag", "attribute key", "label"

_EXPR = {"span": REF, "dtype": DTYPE}
_BINARY = {**_EXPR, "a": REF, "b": REF}
_STMT = {"span": REF}

SCHEMA: dict[str, dict[str, str]] = {
    "ir.IntImm": {**_EXPR, "value": INT},
    "ir.FloatImm": {**_EXPR, "value": FLOAT},
    "ir.PrimType": {**_EXPR},
    "ir.PointerType": {"span": REF, "element_type": REF, "storage_scope": SCOPE},
    "ir.TupleType": {"span": REF, "fields": REF},
    "ir.Span": {"source_name": REF, "line": INT, "column": INT, "end_line": INT, "end_column": INT},
    "ir.Range": {"span": REF, "min": REF, "extent": REF},
    "ir.DictAttrs": {"__dict__": REF},
    "relax.FuncStructInfo": {"span": REF, "params": REF, "ret": REF, "derive_func": REF, "purity": BOOL},
    "relax.TupleStructInfo": {"span": REF, "fields": REF},
    "relax.ShapeStructInfo": {"span": REF, "values": REF, "ndim": INT},
    "relax.TensorStructInfo": {"span": REF, "shape": REF, "dtype": DTYPE, "vdevice": REF, "ndim": INT},
    "relax.expr.ShapeExpr": {"span": REF, "struct_info_": REF, "values": REF},
    **{
        f"tirx.{op}": _BINARY for op in "Add Sub Mul Div Mod FloorDiv FloorMod Min Max EQ NE LT LE GT GE And Or".split()
    },
    "tirx.Not": {**_EXPR, "a": REF},
    "tirx.Select": {**_EXPR, "condition": REF, "true_value": REF, "false_value": REF},
    "tirx.Ramp": {**_EXPR, "base": REF, "stride": REF, "lanes": REF},
    "tirx.Broadcast": {**_EXPR, "value": REF, "lanes": REF},
    "tirx.Cast": {**_EXPR, "value": REF, "annotations": REF},
    "tirx.Call": {**_EXPR, "op": REF, "args": REF, "annotations": REF},
    "tirx.StringImm": {**_EXPR, "value": TEXT},
    "tirx.Var": {**_EXPR, "name": NAME, "type_annotation": REF},
    "tirx.SizeVar": {**_EXPR, "name": NAME, "type_annotation": REF},
    "tirx.Let": {**_EXPR, "var": REF, "value": REF, "body": REF},
    "tirx.BufferLoad": {**_EXPR, "buffer": REF, "indices": REF, "predicate": REF},
    "tirx.Buffer": {
        "span": REF,
        "data": REF,
        "dtype": DTYPE,
        "shape": REF,
        "strides": REF,
        "axis_separators": REF,
        "elem_offset": REF,
        "name": NAME,
        "data_alignment": INT,
        "offset_factor": INT,
        "buffer_type": INT,
    },
    "tirx.BufferRegion": {"buffer": REF, "region": REF},
    "tirx.MatchBufferRegion": {"buffer": REF, "source": REF},
    "tirx.BufferStore": {**_STMT, "buffer": REF, "value": REF, "indices": REF, "predicate": REF},
    "tirx.Bind": {**_STMT, "var": REF, "value": REF},
    "tirx.Evaluate": {**_STMT, "value": REF},
    "tirx.SeqStmt": {**_STMT, "seq": REF},
    "tirx.IfThenElse": {**_STMT, "condition": REF, "then_case": REF, "else_case": REF},
    "tirx.For": {
        **_STMT,
        "loop_var": REF,
        "min": REF,
        "extent": REF,
        "kind": INT,
        "body": REF,
        "thread_binding": REF,
        "annotations": REF,
        "step": REF,
    },
    "tirx.While": {**_STMT, "condition": REF, "body": REF},
    "tirx.AttrStmt": {**_STMT, "node": REF, "attr_key": ATTR_KEY, "value": REF, "body": REF},
    "tirx.AllocBuffer": {**_STMT, "buffer": REF, "annotations": REF},
    "tirx.DeclBuffer": {**_STMT, "buffer": REF},
    "tirx.IterVar": {"span": REF, "dom": REF, "var": REF, "iter_type": INT, "thread_tag": THREAD_TAG},
    "tirx.SBlock": {
        **_STMT,
        "iter_vars": REF,
        "reads": REF,
        "writes": REF,
        "name_hint": NAME,
        "alloc_buffers": REF,
        "match_buffers": REF,
        "annotations": REF,
        "init": REF,
        "body": REF,
    },
    "tirx.SBlockRealize": {**_STMT, "iter_values": REF, "predicate": REF, "block": REF},
    # T.annotate_layout's shared-memory layouts (make_swizzled_layout): index expressions over their own input
    # variables, _i, _j, ... (names the judge keeps: TileLang looks them up); admit.with_layouts_rebuilt checks them
    "tl.Layout": {"input_size": REF, "forward_index": REF},
    "tirx.PrimFunc": {
        **_STMT,
        "params": REF,
        "ret_type": REF,
        "buffer_map": REF,
        "body": REF,
        "attrs": REF,
        "struct_info_": REF,
    },
}
# Nodes whose data is not a dict of fields: containers of references, boxed values, and strings.
CONTAINERS = ("ffi.Array", "ffi.Map")
BOXES = {"int": INT, "float": FLOAT, "bool": BOOL}
LEAVES = ("ffi.String", "ir.Op", "ir.SourceName", "None")

DTYPE_TEXT = re.compile(
    r"^(bool|handle|void|u?int(1|4|8|16|32|64)|float(16|32|64)|bfloat16|float8_e[45]m[23](fn|fnuz)?)(x\d{1,3})?$"
)
SCOPES = frozenset("global shared shared.dyn local local.fragment local.var".split())
THREAD_TAGS = frozenset(f"{kind}.{axis}" for kind in ("blockIdx", "threadIdx") for axis in "xyz") | {""}
DOTTED_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
# The operations a traced kernel may call, by name: what runs inside a CUDA kernel (tile operations, math, bit
# operations, atomics, shuffles, barriers, PTX instructions), never what TileLang and TVM print into the host code
# the judge compiles with g++ and loads (tl.tvm_ffi_call_with_result printed its name argument there verbatim, and
# the packed calls, tvm_struct_*, tvm_stack_*, lookup_param and TVMBackend* are all host code), nor other targets'
# operations. A TileLang bump that renames one fails tests/test_tir_names.py, which checks each is registered.
ALLOWED_OPS = frozenset(
    # tile operations (T.copy, T.gemm, T.reduce_*, T.fill, T.atomic_add of a tile, T.cumsum, ...)
    """tl.tileop.async_copy tl.tileop.atomicadd tl.tileop.atomicmax tl.tileop.atomicmin tl.tileop.c2d_im2col
    tl.tileop.copy tl.tileop.cummax tl.tileop.cumsum tl.tileop.fill tl.tileop.finalize_reducer
    tl.tileop.finalize_reducer_v2 tl.tileop.gemm tl.tileop.gemm_sp tl.tileop.im2col tl.tileop.reduce
    tl.tileop.reducer_init tl.tileop.tma_copy tl.tileop.transpose tl.tileop.wgmma_gemm tl.tileop.wgmma_gemm_sp
    tl.region tl.access_ptr tl.launch_thread_idx tl.infinity tl.loop_break tl.conflict_hint tl.reducer_update"""
    # element math, conversions and bit operations
    """ tirx.acos tirx.acosh tirx.asin tirx.asinh tirx.atan tirx.atan2 tirx.atanh tirx.ceil tirx.clz tirx.copysign
    tirx.cos tirx.cosh tirx.erf tirx.exp tirx.exp10 tirx.exp2 tirx.fabs tirx.floor tirx.fma tirx.fmod tirx.hypot
    tirx.isfinite tirx.isinf tirx.isnan tirx.ldexp tirx.log tirx.log10 tirx.log1p tirx.log2 tirx.nearbyint
    tirx.nextafter tirx.popcount tirx.pow tirx.round tirx.rsqrt tirx.sigmoid tirx.sin tirx.sinh tirx.sqrt tirx.tan
    tirx.tanh tirx.trunc tirx.bitwise_and tirx.bitwise_not tirx.bitwise_or tirx.bitwise_xor tirx.shift_left
    tirx.shift_right tirx.if_then_else tirx.likely tirx.assume tirx.reinterpret tirx.tvm_tuple tirx.type_annotation
    tirx.large_uint_imm tirx.break_loop tirx.continue_loop tirx.address_of tirx.tvm_access_ptr tirx.dp4a
    tirx.vectorcombine tirx.vectorhigh tirx.vectorlow tirx.undef
    tl.__cos tl.__exp tl.__exp10 tl.__ffs tl.__log tl.__log10 tl.__log2 tl.__sin tl.__tan tl.abs2 tl.add2 tl.clamp
    tl.fast_rcp tl.fma tl.fma2 tl.fmul tl.ieee_add tl.ieee_fdiv tl.ieee_fmaf tl.ieee_frcp tl.ieee_frsqrt
    tl.ieee_fsqrt tl.ieee_mul tl.ieee_sub tl.max2 tl.max2_nan tl.max_nan tl.min2 tl.min2_nan tl.min_nan tl.mul2
    tl.sub2 tl.pow_of_int tl.round_ties_away_from_zero tl.pack_b16 tl.pack_b8x4"""
    # atomics, memory, threads, warps, barriers and PTX inside the kernel
    """ tirx.atomic_add tl.atomic_add_elem_op tl.atomic_add_ret_elem_op tl.atomic_addx2_elem_op
    tl.atomic_addx2_ret_elem_op tl.atomic_addx4_elem_op tl.atomic_addx4_ret_elem_op tl.atomic_load_elem_op
    tl.atomic_max_elem_op tl.atomic_max_ret_elem_op tl.atomic_min_elem_op tl.atomic_min_ret_elem_op
    tl.atomic_or_elem_op tl.atomic_store_elem_op tl.__ldg tl.ldg32 tl.ldg64 tl.ldg128 tl.ldg256 tl.stg32 tl.stg64
    tl.stg128 tl.stg256 tl.lds32 tl.lds64 tl.lds128 tl.sts32 tl.sts64 tl.sts128 tl.get_lane_idx tl.get_warp_idx
    tl.get_warp_idx_sync tl.get_warp_group_idx tl.activemask tl.all_sync tl.any_sync tl.all_of tl.any_of tl.ballot
    tl.ballot_sync tl.match_all_sync tl.match_any_sync tl.shfl_sync tl.shfl_down_sync tl.shfl_up_sync
    tl.shfl_xor_sync tl.sync_warp tl.syncthreads_and tl.syncthreads_count tl.syncthreads_or tl.tl_shuffle_elect
    tl.warp_reduce_bitand tl.warp_reduce_bitor tl.warp_reduce_max tl.warp_reduce_min tl.warp_reduce_sum
    tirx.cuda.__activemask tirx.cuda.__shfl_down_sync tirx.cuda.__shfl_sync tirx.cuda.__shfl_up_sync
    tirx.tvm_storage_sync tirx.tvm_thread_allreduce tirx.tvm_warp_activemask tirx.tvm_warp_shuffle
    tirx.tvm_warp_shuffle_down tirx.tvm_warp_shuffle_up tl.named_barrier_arrive tl.mbarrier_expect_tx
    tl.mbarrier_wait_parity tl.fence_proxy_async tl.cluster_arrive tl.cluster_arrive_relaxed tl.cluster_sync
    tl.cluster_wait tl.block_rank_in_cluster tl.set_max_nreg tl.no_set_max_nreg tl.annotate_consumer_reg_alloc
    tl.annotate_producer_reg_dealloc tl.pdl_sync tl.pdl_trigger tl.rng_init tl.rng_rand tl.rng_rand_float
    tl.tma_load tl.tma_load_im2col tl.tma_load_multicast tl.tma_store tl.tma_store_arrive tl.tma_store_wait
    tl.wait_wgmma tl.warpgroup_arrive tl.warpgroup_commit_batch tl.warpgroup_fence_operand tl.warpgroup_wait
    tl.initialize_wgmma_descriptor tl.increase_descriptor_offset tl.ptx_cp_async tl.ptx_cp_async_barrier_noinc
    tl.ptx_fence_barrier_init tl.ptx_ldmatrix tl.ptx_stmatrix tl.ptx_mma_sm70 tl.ptx_wgmma_ss tl.ptx_wgmma_rs
    tl.ptx_arrive_cluster_barrier tl.ptx_cluster_store tl.ptx_st_bulk_shared tirx.ptx_mma tirx.ptx_mma_sp
    tirx.ptx_ldmatrix tirx.ptx_cp_async tirx.ptx_cp_async_bulk tirx.ptx_commit_group tirx.ptx_wait_group
    tirx.ptx_cp_async_barrier tirx.ptx_init_barrier_thread_count tirx.ptx_arrive_barrier
    tirx.ptx_arrive_barrier_expect_tx tirx.ptx_wait_barrier tirx.ptx_ldg32 tirx.mma_store tirx.mma_fill
    tirx.tvm_mma_sync tirx.tvm_bmma_sync tirx.tvm_fill_fragment tirx.tvm_load_matrix_sync tirx.tvm_store_matrix_sync"""
    # T.call_extern: admitted only for T.print's own callees (grader.pipeline.admit.TILELANG_EXTERNS)
    """ tirx.call_extern tirx.call_pure_extern""".split()
)
# Printf labels, scopes, reduce kinds: no quote, backslash, newline, brace, '#' or ';' can end the C string literal
# a label is printed in, nor start a statement of its own; nor may a comment marker or a digraph (`<%` is `{`)
# appear, should a label ever be printed outside a string literal.
TEXT_VALUE = re.compile(r"^(?!.*(/\*|\*/|//|<%|%>|%:|<:|:>))[A-Za-z0-9_.<>\[\]:, +*/%()=-]{0,200}$")
SOURCE_PATH = re.compile(r"^[A-Za-z0-9_./ +@-]{1,4096}$")  # the learner's file, for line numbers in explanations
IMPORTED_SOURCE = "pragma_import"  # T.import_source: text pasted into the generated code

STRING_RULES = {
    SCOPE: lambda text: text in SCOPES,
    THREAD_TAG: lambda text: text in THREAD_TAGS,
    ATTR_KEY: lambda text: bool(DOTTED_KEY.match(text)) and len(text) <= 100,
    TEXT: lambda text: bool(TEXT_VALUE.match(text)),
}

# A kept name is a plain short identifier that means nothing of its own to C, C++, CUDA or the code TVM and
# TileLang generate around it: keywords, CUDA's built-ins and the runtime's type names are renamed too.
PLAIN_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
# A tl.Layout's input variables: TileLang finds them by these names (_i, _j, ...), so they are kept as they are.
LAYOUT_PLACEHOLDER = re.compile(r"^_[a-z]$")
RESERVED = frozenset(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
    co_await co_return co_yield compl concept const const_cast consteval constexpr constinit continue decltype
    default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
    int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
    reinterpret_cast requires restrict return short signed sizeof static static_assert static_cast struct switch
    template this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
    wchar_t while xor xor_eq main std tl cute cutlass half half_t bfloat16_t float_e4m3_t float_e5m2_t uint uchar
    ushort ulong threadIdx blockIdx blockDim gridDim warpSize dim3 int8_t int16_t int32_t int64_t uint8_t uint16_t
    uint32_t uint64_t size_t NULL TVMValue TVMFFIAny TVMFFIObjectHandle args num_args result resource_handle
    stack_value ret_val""".split()
)


class Refused(Exception):
    """One sentence (after the kernel's name) for what the graph holds that no TileLang kernel does."""


def plain(text: str) -> bool:
    """A learner's name the judge keeps: short, a C identifier, no '__' (reserved to the implementation)."""
    return bool(PLAIN_NAME.match(text)) and "__" not in text and text not in RESERVED


def check_graph(document: Any) -> None:
    """Refused unless every node of the graph is of an allowed kind, with allowed fields and strings."""
    if not isinstance(document, dict) or set(document) - {"root_index", "nodes", "metadata", "attrs", "b64ndarrays"}:
        raise Refused("did not trace to a kernel the grader can read")
    metadata = document.get("metadata", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) and len(v) < 64 for v in metadata.values()):
        raise Refused("did not trace to a kernel the grader can read")
    if document.get("b64ndarrays"):
        raise Refused("traced to a kernel with constant arrays, which no TileLang kernel contains")
    nodes = document.get("nodes")
    if not isinstance(nodes, list) or not isinstance(document.get("root_index"), int):
        raise Refused("did not trace to a kernel the grader can read")
    for node in nodes:
        check_node(node, len(nodes))
    if not 0 <= document["root_index"] < len(nodes) or nodes[document["root_index"]]["type"] != "tirx.PrimFunc":
        raise Refused("did not trace to a kernel")
    for index, uses in string_uses(nodes).items():
        check_string(str(nodes[index]["data"]), uses)
    check_views(nodes, document["root_index"])


def check_node(node: Any, count: int) -> None:
    kind = node.get("type") if isinstance(node, dict) else None
    data = node.get("data") if isinstance(node, dict) else None
    if not isinstance(kind, str) or kind not in (*SCHEMA, *CONTAINERS, *BOXES, *LEAVES):
        raise Refused(f"traced to objects of type {str(kind)[:60]}, which no TileLang kernel contains")
    if kind in SCHEMA:
        if not isinstance(data, dict):
            raise Refused(f"traced to a {kind} the grader cannot read")
        for field, value in data.items():
            check_field(kind, field, value, count)
    elif kind in CONTAINERS:
        if not isinstance(data, list) or not all(is_ref(item, count) for item in data):
            raise Refused(f"traced to a {kind} the grader cannot read")
        if kind == "ffi.Map" and len(data) % 2:
            raise Refused(f"traced to a {kind} the grader cannot read")
    elif kind in BOXES:
        check_plain(kind, BOXES[kind], data)
    elif kind != "None" and not isinstance(data, str):
        raise Refused(f"traced to a {kind} the grader cannot read")
    elif kind == "ir.Op" and data not in ALLOWED_OPS:
        raise Refused(f"calls the operation {data[:60]!r}, which is not one the grader compiles")


def check_field(kind: str, field: Any, value: Any, count: int) -> None:
    expected = SCHEMA[kind].get(field)
    if expected is None:
        raise Refused(f"traced to a {kind} with a field {str(field)[:40]!r} that no TileLang kernel sets")
    if expected in PLAIN:
        check_plain(kind, expected, value)
    elif not is_ref(value, count):
        raise Refused(f"traced to a {kind} the grader cannot read")


def check_plain(kind: str, expected: str, value: Any) -> None:
    fits = {
        DTYPE: lambda: isinstance(value, str) and bool(DTYPE_TEXT.match(value)),
        INT: lambda: isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63,
        FLOAT: lambda: isinstance(value, (int, float)) and not isinstance(value, bool),
        BOOL: lambda: isinstance(value, bool),
    }[expected]
    if not fits():
        raise Refused(f"traced to a {kind} holding {str(value)[:40]!r} where a {expected} belongs")


def is_ref(value: Any, count: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count


def string_uses(nodes: list[dict[str, Any]]) -> dict[int, set[str]]:
    """String node -> the rules of the places that refer to it (an unreferenced string is read as TEXT)."""
    uses: dict[int, set[str]] = {i: set() for i, node in enumerate(nodes) if node["type"] == "ffi.String"}
    for node in nodes:
        for rule, target in references(node):
            if target in uses:
                uses[target].add(rule)
            elif rule != TEXT and node["type"] in SCHEMA:  # a name, scope, tag or key field holds a string
                raise Refused(f"traced to a {node['type']} whose {rule} is not a string")
    return {index: rules or {TEXT} for index, rules in uses.items()}


def references(node: dict[str, Any]) -> list[tuple[str, int]]:
    """(rule, node index) for every reference a node holds: a plain reference that lands on a string (a map's
    value, an array's item, an AttrStmt's node) reads it as TEXT."""
    kind, data = node["type"], node.get("data")
    if kind in SCHEMA:
        rules = SCHEMA[kind]
        return [(TEXT if rules[f] == REF else rules[f], v) for f, v in data.items() if rules[f] not in PLAIN]
    if kind == "ffi.Map":
        return [(ATTR_KEY if i % 2 == 0 else TEXT, value) for i, value in enumerate(data)]
    if kind == "ffi.Array":
        return [(TEXT, value) for value in data]
    return []


def check_string(text: str, uses: set[str]) -> None:
    if text.startswith(IMPORTED_SOURCE) and uses & {ATTR_KEY}:
        raise Refused(f"imports source code (T.import_source, {text[:40]})")
    for rule in sorted(uses - {NAME}):
        if not STRING_RULES[rule](text):
            article = "an" if rule[0] in "aeiou" else "a"
            raise Refused(f"holds the string {text[:40]!r} as {article} {rule}, which TileLang never makes")


def check_views(nodes: list[dict[str, Any]], root: int) -> None:
    """Refused unless every buffer is a tensor of the signature, one the kernel allocates, or a view of a tensor
    that covers exactly its memory (T.reshape: the same type, offset and number of elements). TileLang guards
    a global access by the shape of the buffer it is written through, so a view of C that starts a megabyte
    before it, or runs on past its end, reads and writes the GPU's memory around C unguarded: the judge's own
    copies of the inputs, which the reference is computed from."""
    buffer_map = nodes[root]["data"].get("buffer_map")
    params = nodes[buffer_map]["data"][1::2] if is_ref(buffer_map, len(nodes)) else []
    tensors = {nodes[b]["data"].get("data"): b for b in params if nodes[b]["type"] == "tirx.Buffer"}
    if len(tensors) != len(params):
        raise Refused("declares two of its tensors over the same memory")
    allocated = set()
    for node in nodes:
        if node["type"] == "tirx.AllocBuffer":
            allocated.add(node["data"].get("buffer"))
        elif node["type"] == "tirx.SBlock" and nodes[node["data"].get("alloc_buffers", 0)]["type"] == "ffi.Array":
            allocated.update(nodes[node["data"]["alloc_buffers"]]["data"])
    owned = {nodes[b]["data"].get("data") for b in allocated if nodes[b]["type"] == "tirx.Buffer"}
    for index, node in enumerate(nodes):
        if node["type"] != "tirx.Buffer" or index in params:
            continue
        data = node["data"].get("data")
        tensor = tensors.get(data)
        if tensor is None and data not in owned:
            raise Refused("declares a buffer over memory that is neither one of its tensors nor one it allocates")
        if tensor is not None and not same_memory(nodes, node["data"], nodes[tensor]["data"]):
            raise Refused(
                "views one of its tensors at another offset, type or size than the tensor's own (only T.reshape "
                "to the same number of elements is allowed), which would reach memory outside it"
            )


def same_memory(nodes: list[dict[str, Any]], view: dict[str, Any], tensor: dict[str, Any]) -> bool:
    """Whether a buffer over a tensor's data covers exactly the tensor's elements, in the same type."""
    offsets = [factors(nodes, buffer.get("elem_offset")) for buffer in (view, tensor)]
    return (
        view.get("dtype") == tensor.get("dtype")
        and offsets[0] == offsets[1] == (0, ())
        and contiguous(nodes, view)
        and contiguous(nodes, tensor)
        and size(nodes, view.get("shape")) == size(nodes, tensor.get("shape"))
        and size(nodes, view.get("shape")) is not None
    )


def contiguous(nodes: list[dict[str, Any]], buffer: dict[str, Any]) -> bool:
    """No strides, or the row-major strides of the buffer's own shape (each the product of the extents after it)."""
    strides, shape = buffer.get("strides"), buffer.get("shape")
    if strides is None or not (is_ref(strides, len(nodes)) and nodes[strides]["type"] == "ffi.Array"):
        return strides is None
    steps = nodes[strides]["data"]
    if not steps:
        return True
    extents = nodes[shape]["data"] if is_ref(shape, len(nodes)) and nodes[shape]["type"] == "ffi.Array" else None
    if extents is None or len(extents) != len(steps):
        return False
    return all(factors(nodes, step) == size_of(nodes, extents[axis + 1 :]) for axis, step in enumerate(steps))


def size(nodes: list[dict[str, Any]], shape: Any) -> tuple[int, tuple[str, ...]] | None:
    """A shape's number of elements as (constant factor, sorted symbolic factors), or None if unreadable."""
    if not is_ref(shape, len(nodes)) or nodes[shape]["type"] != "ffi.Array":
        return None
    return size_of(nodes, nodes[shape]["data"])


def size_of(nodes: list[dict[str, Any]], extents: list[Any]) -> tuple[int, tuple[str, ...]] | None:
    """The product of ``extents``, as ``size`` gives it."""
    constant, symbols = 1, []
    for extent in extents:
        part = factors(nodes, extent)
        if part is None:
            return None
        constant, symbols = constant * part[0], symbols + list(part[1])
    return (constant, tuple(sorted(symbols))) if constant else (0, ())


def factors(nodes: list[dict[str, Any]], ref: Any, depth: int = 0) -> tuple[int, tuple[str, ...]] | None:
    """An index expression as a product: (constant, sorted symbolic factors); an absent offset is 0. A variable
    is named by its node (the same variable is one node); any other expression by its own text, read whole."""
    if ref is None:
        return 0, ()
    if not is_ref(ref, len(nodes)) or depth > 64:
        return None
    node = nodes[ref]
    if node["type"] == "ir.IntImm":
        return int(node["data"]["value"]), ()
    if node["type"] in ("tirx.Var", "tirx.SizeVar"):
        return 1, (f"var {ref}",)
    if node["type"] == "tirx.Mul":
        a, b = (factors(nodes, node["data"].get(side), depth + 1) for side in ("a", "b"))
        if a is None or b is None:
            return None
        return (a[0] * b[0], tuple(sorted(a[1] + b[1]))) if a[0] and b[0] else (0, ())
    return 1, (expression_key(nodes, ref),)


def expression_key(nodes: list[dict[str, Any]], ref: int, depth: int = 0) -> str:
    """A text equal for equal expressions (spans left out), so a factor like K - 1 matches itself."""
    node = nodes[ref]
    if node["type"] in ("tirx.Var", "tirx.SizeVar"):
        return f"var {ref}"  # two variables of one name are two variables
    if depth > 64 or node["type"] not in SCHEMA:
        return f"{node['type']}:{node.get('data')!r}"
    parts = [
        f"{field}=" + (expression_key(nodes, value, depth + 1) if SCHEMA[node["type"]][field] == REF else repr(value))
        for field, value in sorted(node["data"].items())
        if field != "span" and is_ref(value, len(nodes)) or SCHEMA[node["type"]].get(field) in PLAIN
    ]
    return f"{node['type']}({', '.join(parts)})"


def judge_names(document: dict[str, Any]) -> dict[str, str]:
    """Point every NAME field at a name the judge made, and make the learner's file path plain: returns
    {judge's name: the learner's text} for the names it changed.

    A made name is the learner's own where it is plain (``plain``), else ``v1``, ``v2``, ...: either way it
    matches [A-Za-z][A-Za-z0-9_]*, one C identifier token with no quote, backslash, newline, '#', '*/' or
    space, so wherever a code generator prints it (a declaration, an expression, a string literal of an error
    message, a comment) it cannot end that place or start another. Equal texts get equal names and different
    texts different ones, so the kernel means what it meant (the simulator looks variables up by name).
    TileLang names a block's thread variables by their tags (``blockIdx.x``) and a layout's input variables
    ``_i``, ``_j``, ...: those fixed texts are kept.
    The names are new string nodes: a string node shared with another place keeps its text there."""
    nodes = document["nodes"]
    only_names = [i for i, rules in string_uses(nodes).items() if rules == {NAME}]
    made: dict[str, int] = {}  # learner's text -> index of the new string node
    originals: dict[str, str] = {}
    taken = {str(nodes[i]["data"]) for node in nodes for rule, i in references(node) if rule == NAME}
    counter = iter(range(1, 1 << 30))
    for node in list(nodes):
        if node["type"] not in SCHEMA:
            continue
        for field, rule in SCHEMA[node["type"]].items():
            if rule == NAME and field in node["data"]:
                text = str(nodes[node["data"][field]]["data"])
                if text not in made:
                    kept = plain(text) or text in THREAD_TAGS - {""} or LAYOUT_PLACEHOLDER.match(text)
                    name = text if kept else fresh(counter, taken)
                    originals[name] = text
                    nodes.append({"type": "ffi.String", "data": name})
                    made[text] = len(nodes) - 1
                node["data"][field] = made[text]
    for index in only_names:  # no longer referred to: the learner's text does not reach TVM at all
        nodes[index]["data"] = ""
    for node in nodes:
        if node["type"] == "ir.SourceName" and not SOURCE_PATH.match(str(node["data"])):
            node["data"] = "kernel.py"
    return {name: text for name, text in originals.items() if name != text}


def fresh(counter: Any, taken: set[str]) -> str:
    while (name := f"v{next(counter)}") in taken:
        pass
    taken.add(name)
    return name
