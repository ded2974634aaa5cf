"""T.annotate_layout in a learner's kernel (puzzle 09's conv1d_channels_last swizzles its output tile): the judge
admits a shared layout that is integer arithmetic of its own inputs, rebuilds it after the JSON round trip (which
TileLang 0.1.15's layouts do not survive), and refuses one whose indices read memory or kernel variables, or that lays
out a tile outside shared memory."""

from __future__ import annotations

import json

import pytest
from tilelang import tvm

from grader.discover import load_module, load_puzzle
from grader.pipeline.admit import load_tir
from grader.pipeline.build import COMPILE_ONLY_TARGET, BuildFailed
from grader.pipeline.profile.static import bank_conflicts
from grader.tir import layout_annotations
from tests.conftest import ROOT

SMALL = {"C_in": 20, "L": 300, "C_out": 24, "K": 3, "BLOCK_O": 32, "BLOCK_L": 64, "BLOCK_C": 16, "STAGES": 2}


def _traced() -> tuple[dict, object, object]:
    """The solution's kernel at a small case as the tracer sends it (JSON), its Kernel spec, and the TIR as traced."""
    module = load_module(ROOT / "solutions" / "p09_conv1d.py")
    kernel = load_puzzle(module).kernel("conv1d_channels_last")
    tir = module.conv1d_channels_last.get_tir(**SMALL)
    return json.loads(tvm.ir.save_json(tir)), kernel, tir


def _layouts(tir) -> list:
    return [layout for _, layout in layout_annotations(tir.body)]


def test_a_swizzled_layout_is_admitted_as_the_kernel_wrote_it():
    document, kernel, traced = _traced()
    admitted = load_tir(json.dumps(document), kernel)
    (wrote,), (got,) = _layouts(traced), _layouts(admitted)
    assert [int(n) for n in got.get_output_shape()] == [int(n) for n in wrote.get_output_shape()] == [1, 8, 256]
    loaded_as_is = _layouts(tvm.ir.load_json(json.dumps(document)))[0]
    assert not all(isinstance(n, tvm.tirx.IntImm) for n in loaded_as_is.get_output_shape())  # why it is rebuilt
    import tilelang

    with tvm.target.Target(COMPILE_ONLY_TARGET):
        source = tilelang.compile(admitted, target=COMPILE_ONLY_TARGET).get_kernel_source()
    assert "ptx_stmatrix" in source and "Y_tile" not in bank_conflicts(source, 384)[1]  # the swizzle reached it


def _forward_index(document: dict) -> list[int]:
    nodes = document["nodes"]
    (layout,) = [node for node in nodes if node["type"] == "tl.Layout"]
    return nodes[layout["data"]["forward_index"]]["data"]


def test_a_layout_whose_indices_read_memory_is_refused():
    document, kernel, _ = _traced()
    nodes = document["nodes"]
    load = next(i for i, node in enumerate(nodes) if node["type"] == "tirx.BufferLoad")
    _forward_index(document)[-1] = load
    with pytest.raises(BuildFailed, match="annotates a layout with BufferLoad in its indices"):
        load_tir(json.dumps(document), kernel)


def test_a_layout_over_a_kernel_variable_is_refused():
    document, kernel, _ = _traced()
    nodes = document["nodes"]
    names = {i: nodes[node["data"]["name"]]["data"] for i, node in enumerate(nodes) if node["type"] == "tirx.Var"}
    block = next(i for i, name in names.items() if name == "bx")
    _forward_index(document)[-1] = block
    with pytest.raises(BuildFailed, match="over variables other than its own inputs"):
        load_tir(json.dumps(document), kernel)


def test_a_layout_of_a_tile_outside_shared_memory_is_refused():
    """A layout on X (global memory) would move the kernel's reads of it wherever its indices say: refused."""
    document, kernel, _ = _traced()
    nodes = document["nodes"]
    (layout,) = [i for i, node in enumerate(nodes) if node["type"] == "tl.Layout"]
    (pairs,) = [node["data"] for node in nodes if node["type"] == "ffi.Map" and layout in node["data"][1::2]]

    def scope(var: dict) -> str:
        pointer = nodes[var["data"]["type_annotation"]]
        return nodes[pointer["data"]["storage_scope"]]["data"] if pointer["type"] == "ir.PointerType" else ""

    x = next(i for i, node in enumerate(nodes) if node["type"] == "tirx.Var" and scope(node) == "global")
    pairs[pairs.index(layout) - 1] = x
    with pytest.raises(BuildFailed, match="annotates the layout of a tile outside shared memory"):
        load_tir(json.dumps(document), kernel)


def test_the_profiling_process_loads_the_admitted_layouts_as_admitted():
    """--profile hands the admitted TIR to an Nsight Compute process as JSON: it remakes the layouts too."""
    from grader.processes.profiler import admitted_tir

    document, kernel, traced = _traced()
    admitted = load_tir(json.dumps(document), kernel)
    (again,) = _layouts(admitted_tir(tvm.ir.save_json(admitted), kernel))
    assert [int(n) for n in again.get_output_shape()] == [int(n) for n in _layouts(traced)[0].get_output_shape()]
