"""scripts/p08/tuned_ablation.py changes one thing per row, and docs/results/p08-ablation.md is what its JSON gives.

Compiling the variants takes minutes (``python scripts/p08/tuned_ablation.py --compile-only``); these tests only
read the variant list and render the page."""

from __future__ import annotations

import json

from grader.discover import load_module, load_puzzle
from scripts.p08 import ablation_page
from scripts.p08.tuned_ablation import WS_OFF, variants
from tests.conftest import ROOT

KNOBS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "THREADS", "STAGES", "PANEL", "STAGED")


def _bench():
    puzzle = load_puzzle(load_module(ROOT / "solutions" / "p08_matrix.py"))
    return {name: puzzle.kernel(name).case("large_4096").params for name in ("matmul_tuned", "matmul_pipelined")}, {
        "streamk": puzzle.kernel("matmul_streamk").case("large_4096").params
    }


def _settings(variant, bench) -> dict:
    """What a variant builds: every knob, and whether warp specialization is on."""
    name = variant.function.removeprefix("p08.")
    if variant.function.startswith("p08."):
        params = {**bench.get(name, {}), **variant.params}
        params.setdefault("PANEL", 0)  # matmul_pipelined: no T.use_swizzle
        params.setdefault("STAGED", 1 if name == "matmul_tuned" else 0)
        params.setdefault("THREADS", 128)
        ws = name != "matmul_pipelined"  # its decorator turns warp specialization off
    else:
        params = {"STAGED": 1, **variant.params}  # matmul_variant's default: the staged store
        ws = variant.pass_configs != WS_OFF
    return {**{knob: params.get(knob) for knob in KNOBS}, "warp specialization": ws}


def _changed(a: dict, b: dict) -> list[str]:
    return [key for key in a if a[key] != b[key]]


def test_each_revert_and_each_step_changes_one_thing():
    bench, streamk = _bench()
    rows = variants(bench["matmul_tuned"], bench["matmul_pipelined"], streamk["streamk"])
    revert = [v for v in rows if v.group == "revert"]
    path = [v for v in rows if v.group == "path"]
    shipped = _settings(revert[0], bench)
    reverted = [_changed(shipped, _settings(v, bench)) for v in revert[1:]]
    # the tile is one change of three numbers; every other revert is one knob
    assert reverted == [
        ["BLOCK_M", "BLOCK_N", "BLOCK_K"],
        ["THREADS"],
        ["STAGES"],
        ["PANEL"],
        ["STAGED"],
        ["warp specialization"],
    ]
    steps = [_changed(_settings(a, bench), _settings(b, bench)) for a, b in zip(path, path[1:])]
    assert steps == [
        ["warp specialization"],
        ["THREADS"],
        ["BLOCK_M", "BLOCK_N", "BLOCK_K"],
        ["STAGES"],
        ["PANEL"],
        ["STAGED"],
    ]
    assert _settings(path[-1], bench) == shipped and path[-1].same_as == revert[0].label
    assert _settings(path[0], bench)["BLOCK_M"] == bench["matmul_pipelined"]["BLOCK_M"]


def test_the_stream_k_pair_differs_in_the_schedule_only():
    bench, streamk = _bench()
    data_parallel, stream = [
        v
        for v in variants(bench["matmul_tuned"], bench["matmul_pipelined"], streamk["streamk"])
        if v.group == "streamk"
    ]
    sk = streamk["streamk"]
    tuned = {**bench["matmul_tuned"], **data_parallel.params}
    shared = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "THREADS", "STAGES", "PANEL")
    assert {k: tuned[k] for k in shared} == {k: sk[k] for k in shared}
    assert (data_parallel.function, stream.function) == ("p08.matmul_tuned", "p08.matmul_streamk")


def test_the_page_is_what_the_data_gives():
    assert ablation_page.main(["--check"]) == 0, "run python scripts/p08/ablation_page.py"
    if not ablation_page.DATA.is_file():
        assert "Not yet measured on the H200." in ablation_page.PAGE.read_text(encoding="utf-8")


def test_the_tables_hold_the_jsons_figures(tmp_path, monkeypatch):
    def row(group, label, median, **extra):
        ms = {"min": median - 0.001, "median": median, "max": median + 0.002}
        figures = {"check": "ok", "check_after_timing": "ok", "tflops": 2 * 4096**3 / median / 1e9}
        return {"group": group, "label": label, "size": 4096, "ms": ms, "vs_torch": 0.21 / median, **figures, **extra}

    document = {
        "rows": [
            row("revert", "matmul_tuned as shipped", 0.2200),
            row("revert", "3 stages", 0.2420, params={"STAGES": 3}),
            {"group": "revert", "label": "128 threads", "size": 4096, "error": "build: too many registers"},
            row("path", "matmul_pipelined as shipped", 0.4667),
            row("path", "+ warp specialization", 0.9171, check_after_timing="WRONG"),
            {
                "group": "torch",
                "label": "torch",
                "size": 4096,
                "ms": {"min": 0.2, "median": 0.21, "max": 0.22},
                "tflops": 654,
            },
        ]
    }
    data = tmp_path / "p08-ablation.json"
    data.write_text(json.dumps(document))
    monkeypatch.setattr(ablation_page, "DATA", data)
    text = ablation_page.page()
    assert "| 3 stages | stages 3 | yes | 0.2410 | 0.2420 | 0.2440 | 568 | 0.87x | 0.91x |" in text
    assert "| 128 threads |  | no: build: too many registers |" in text
    assert "| + warp specialization |  | no | 0.9161 | 0.9171 | 0.9191 | 150 | 0.23x | 0.51x |" in text
    assert "torch.matmul (cuBLAS): 0.2100 ms median (0.2000-0.2200), 654 TFLOP/s." in text
