"""Names in a traced kernel are the judge's (grader.pipeline.tir_graph): C, C++, CUDA, shell and newline payloads
put into the TIR's JSON of a small traced kernel, at every binding site (an unused loop variable, a let-bound
scalar, a buffer never touched and its data variable, the block, the thread binding, the parameters) and at the
strings that are not names (scopes, thread tags, keys, operator names, the file's path), are either refused with
one sentence or compiled for sm_90a (CPU only: nvcc makes the code, nothing runs it) with none of the payload in
the generated host or device source, and nothing a payload would run has run.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import tilelang
import tilelang.language as T
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.discover import load_module, load_puzzle, puzzle_files
from grader.pipeline import tir_graph
from grader.pipeline.admit import admit, load_tir
from grader.pipeline.build import COMPILE_ONLY_TARGET, BuildFailed, Signature, compile_tir
from grader.pipeline.trace import trace
from tests.conftest import ROOT

MARKER = Path("/tmp/tilelang-course-names-payload-ran")  # what every payload would make, were it run
PAYLOADS = (
    f'x; }} }} __attribute__((constructor)) static void tilelang_course_payload() {{ system("touch {MARKER}"); }} '
    "void rest() { { int y",
    f'x = 0; system("touch {MARKER}"); int tilelang_course_payload',
    'x; asm volatile("trap;"); } __global__ void tilelang_course_payload() { int y',
    f'x\n#include "{MARKER}"\n#define tilelang_course_payload 1\nint y',
    f"$(touch {MARKER})",
    f"`touch {MARKER}`; tilelang_course_payload",
    f'x */ "); system("touch {MARKER}"); /* tilelang_course_payload',
    "x\r\n\u2028tilelang_course_payload\\",
    "a" * 40 + "__tilelang_course_payload",
    "int",
)


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        spare = T.alloc_fragment((BLOCK_M,), T.float32)  # noqa: F841 (a binding site nothing reads)
        offset = bx * BLOCK_M
        for unused in T.serial(K // BLOCK_K):  # noqa: B007 (a loop variable nothing reads)
            for i in T.Parallel(BLOCK_M):
                C[offset + i] = T.float16(0)
    return C


@cache
def traced() -> tuple[Any, Any, str]:
    """(kernel spec, case, JSON of the traced TIR) for puzzle 08's gemv at its smallest simulated case."""
    puzzle = load_puzzle(load_module(puzzle_files(ROOT / "solutions")["08"]))
    kernel = next(k for k in puzzle.kernels if k.function == "gemv")
    case = next(c for c in kernel.cases if c.name == "square_256")
    tir = trace(gemv, Signature.of(kernel), {**case.sizes, **case.params}, Path(__file__))
    from tilelang import tvm

    return kernel, case, tvm.ir.save_json(tir)


def string_sites(document: dict[str, Any]) -> dict[int, set[str]]:
    """String node -> the rules of the places it is used in, for every string of the graph."""
    return tir_graph.string_uses(document["nodes"])


def with_payloads(placed: list[tuple[int, str]]) -> str:
    document = json.loads(traced()[2])
    for index, payload in placed:
        document["nodes"][index]["data"] = payload
    return json.dumps(document)


def judged(text: str) -> Any:
    """The compiled kernel, or None where the gate refused the TIR with one plain sentence."""
    kernel, case, _ = traced()
    try:
        tir = admit(load_tir(text, kernel), kernel, case)
    except BuildFailed as refused:
        sentence = refused.args[0]
        assert sentence.startswith("`gemv` ") and "\n" not in sentence and "\r" not in sentence, sentence
        return None
    return compile_tir(tir, COMPILE_ONLY_TARGET, Path(__file__), kernel)


def assert_clean(compiled: Any) -> None:
    sources = compiled.get_kernel_source(kernel_only=False) + compiled.get_host_source()
    for payload in PAYLOADS:
        assert payload not in sources or payload == "int"  # a keyword is renamed too; "int" itself is everywhere
    assert "tilelang_course_payload" not in sources and str(MARKER) not in sources
    assert not MARKER.exists(), "a payload ran"


@pytest.fixture(autouse=True)
def no_marker():
    MARKER.unlink(missing_ok=True)
    yield
    assert not MARKER.exists(), "a payload ran"


def test_payloads_at_every_binding_site_compile_under_the_judges_names():
    document = json.loads(traced()[2])
    tensors = {"A", "B", "C"}  # the puzzle's names, which check_signature holds the kernel to (the next test)
    names = [
        index
        for index, rules in string_sites(document).items()
        if rules == {tir_graph.NAME} and document["nodes"][index]["data"] not in tensors
    ]
    sites = {document["nodes"][index]["data"] for index in names}
    assert {"unused", "offset", "spare", "tilelang_root", "bx"} <= sites, sites
    placed = [(index, PAYLOADS[n % len(PAYLOADS)]) for n, index in enumerate(names)]
    compiled = judged(with_payloads(placed))
    assert compiled is not None, "names alone are never refused: the judge renames them"
    assert_clean(compiled)


def test_a_payload_in_a_tensor_name_is_refused_by_the_signature():
    kernel, _, text = traced()
    document = json.loads(text)
    a = next(i for i, node in enumerate(document["nodes"]) if node == {"type": "ffi.String", "data": "A"})
    with pytest.raises(BuildFailed, match="the puzzle expects inputs"):
        admit(load_tir(with_payloads([(a, PAYLOADS[0])]), kernel), kernel, traced()[1])


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_payloads_anywhere_are_refused_or_compile_clean(data: st.DataObject):
    nodes = json.loads(traced()[2])["nodes"]
    sites = sorted(string_sites({"nodes": nodes})) + [
        index for index, node in enumerate(nodes) if node["type"] in ("ir.Op", "ir.SourceName")
    ]
    placed = data.draw(st.lists(st.tuples(st.sampled_from(sites), st.sampled_from(PAYLOADS)), min_size=1, max_size=4))
    compiled = judged(with_payloads(placed))
    if compiled is not None:
        assert_clean(compiled)


def test_every_allowed_operation_is_one_tilelang_registers():
    """The allow-list of operations names TileLang's own: a TileLang bump that renames or drops one shows here."""
    from tvm_ffi import get_global_func

    registered = {str(name) for name in get_global_func("ir.ListOpNames")()}
    assert sorted(tir_graph.ALLOWED_OPS - registered) == []


HOST_OPERATIONS = (
    "tl.tvm_ffi_call_with_result",  # its name argument was printed verbatim into the judge's host C++
    "tirx.tvm_call_packed",
    "tirx.tvm_call_trace_packed",
    "tirx.tvm_struct_get",
    "tirx.tvm_stack_alloca",
    "tirx.lookup_param",
    "tirx.TVMBackendAllocWorkspace",
    "tl.create_tma_descriptor",
    "tirx.call_llvm_intrin",
    "tl.ascend_mad",
)


@pytest.mark.parametrize("operation", HOST_OPERATIONS)
def test_a_call_of_host_or_foreign_code_is_refused_in_one_sentence(operation):
    """Any call of an operation outside the allow-list (host code, the runtime, other targets) is refused before
    anything is compiled, whatever its arguments: tests/attacks/host_code_by_ffi_call.py traces to the first."""
    document = json.loads(traced()[2])
    op = next(i for i, node in enumerate(document["nodes"]) if node["type"] == "ir.Op")
    document["nodes"][op]["data"] = operation
    assert judged(json.dumps(document)) is None


@pytest.mark.parametrize("marker", ["/*", "*/", "//", "<%", "%>", "%:", "<:", ":>"])
def test_a_label_may_not_hold_a_comment_marker_or_a_digraph(marker):
    """A printf label is printed inside a C string literal; comment markers and digraphs (`<%` is `{`) would be code
    anywhere else, so the rule for text refuses them."""
    assert tir_graph.STRING_RULES[tir_graph.TEXT]("row sum")
    assert not tir_graph.STRING_RULES[tir_graph.TEXT](f"row {marker} sum")


def test_a_reply_nested_deeper_than_pythons_stack_is_refused_in_one_sentence():
    """JSON nested 200,000 deep raised RecursionError in json.loads, which neither the reply's reader nor the gate
    caught: the judge ended with a traceback rather than a sentence (the red team, 2026-12-05)."""
    assert judged("[" * 200_000 + "]" * 200_000) is None
