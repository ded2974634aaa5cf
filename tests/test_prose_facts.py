"""Facts in the teaching text of puzzles 02, 07, 08 and 10 that the review of issue 28 found wrong, pinned
against the puzzle specs, the results pages and TileLang itself so they cannot drift back."""

import re

import pytest

from grader.discover import course_root, load_module, load_puzzle, puzzle_files
from grader.i18n import read_po

ROOT = course_root()
SOLUTIONS = puzzle_files(ROOT / "solutions")
STUBS = puzzle_files(ROOT / "puzzles")
HINTS = sorted((ROOT / "puzzles" / "hints").glob("*.json"))
NUMBER_WORDS = {"four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}


def prose(path) -> str:
    """A puzzle file's text with comment markers dropped and whitespace collapsed, so a phrase broken
    across comment lines still reads as one."""
    lines = [re.sub(r"^\s*#\s?", "", line) for line in path.read_text(encoding="utf-8").splitlines()]
    return " ".join(" ".join(lines).split())


def all_teaching_text() -> dict[str, str]:
    files = [*SOLUTIONS.values(), *STUBS.values(), *HINTS, ROOT / "docs" / "learner.md"]
    return {str(path.relative_to(ROOT)): prose(path) for path in files}


@pytest.fixture(scope="module")
def p08():
    return load_puzzle(load_module(SOLUTIONS["08"]))


@pytest.mark.parametrize("phrase", ["five GEMM", "is an error, not a zero", "tens of teraflops"])
def test_retracted_phrases_are_gone(phrase):
    # Review items 9 (six GEMM kernels, not five), 1 (TileLang reads 0 past a tensor's end, puzzle 01)
    # and 10 (the CUDA cores' fp32 peak is ~67 TFLOP/s, not "tens").
    found = [name for name, text in all_teaching_text().items() if phrase.lower() in text.lower()]
    assert not found, f"{phrase!r} is back in {found}"


def test_gemm_kernel_count_matches_the_spec(p08):
    # Review item 9: the count the prose states is the number of GEMM kernels puzzle 08 grades, and the
    # rung table lists each of them.
    text = prose(SOLUTIONS["08"])
    gemms = [k.function for k in p08.kernels if k.function.startswith("matmul_")]
    stated = re.search(r"The (\w+) GEMM kernels climb", text)
    assert stated, "the sentence that counts the GEMM kernels is gone"
    assert NUMBER_WORDS[stated.group(1)] == len(gemms) == 6
    table = re.findall(r"^# \| `(matmul_\w+)` \|", SOLUTIONS["08"].read_text(encoding="utf-8"), re.MULTILINE)
    assert table == gemms


def test_stream_k_chunk_and_atomics_match_the_bench_case(p08):
    # Review item 8: CHUNK "(N in the bench cases)" is the bench cases' CHUNK, and the atomics figure is
    # the pieces of shared tiles the bench schedule adds, not the workspace's size.
    kernel = p08.kernel("matmul_streamk")
    bench = [case for case in kernel.cases if case.bench]
    chunks = {case.params["CHUNK"] for case in bench}
    assert len(chunks) == 1
    (chunk,) = chunks
    text = prose(SOLUTIONS["08"])
    assert f"CHUNK K steps ({chunk} in the bench cases)" in text

    case = next(c for c in bench if c.sizes["M"] == 4096)
    p = case.params
    tiles = (case.sizes["M"] // p["BLOCK_M"]) * (case.sizes["N"] // p["BLOCK_N"])
    steps = case.sizes["K"] // p["BLOCK_K"] // p["CHUNK"]
    rest, sms = tiles % p["SMS"], p["SMS"]
    work = rest * steps
    pieces = {
        (block, c // steps) for block in range(sms) for c in range(block * work // sms, (block + 1) * work // sms)
    }
    tile_kib = p["BLOCK_M"] * p["BLOCK_N"] * 4 / 1024
    workspace_mib, atomics_mib = rest * tile_kib / 1024, len(pieces) * tile_kib / 1024
    assert (rest, len(pieces), workspace_mib, atomics_mib) == (116, 236, 14.5, 29.5)
    assert f"{rest} tiles, 128 KiB of fp32 each, {workspace_mib} MiB" in text
    assert f"make {len(pieces)} such pieces" in text
    assert text.count(f"about {atomics_mib} MiB of") == 2
    assert "14.5 MiB of fp32 atomics" not in text


def test_stream_k_comparison_names_what_else_changes(p08):
    # Review item 8: the stream-K bench case differs from matmul_tuned's in stages and panel too; the
    # prose must say by how much.
    tuned = next(c for c in p08.kernel("matmul_tuned").cases if c.bench).params
    streamk = next(c for c in p08.kernel("matmul_streamk").cases if c.bench).params
    text = prose(SOLUTIONS["08"])
    assert (streamk["STAGES"], tuned["STAGES"]) == (3, 4)
    assert f"{streamk['STAGES']} stages instead of {tuned['STAGES']}" in text
    assert f"panels of {streamk['PANEL']} tile rows instead of {tuned['PANEL']}" in text


def test_guards_agree_with_puzzle_01():
    # Review item 1: puzzle 01 teaches that TileLang guards every load it cannot prove in bounds;
    # puzzle 08 and the matmul_cuda_cores hints must not say the guard is what keeps a read legal.
    text = prose(SOLUTIONS["08"])
    assert "TileLang also guards every load it cannot prove in bounds" in text
    assert "kernel passes without the `if` too" in text
    hints = prose(ROOT / "puzzles" / "hints" / "p08_matrix.json")
    assert "must not read" not in hints
    assert "keeps the edge blocks from reading past A and B" not in hints


def test_one_stage_is_not_called_an_ordinary_loop():
    # Review item 2: under Hopper's warp-specialized lowering one stage still overlaps loads with the
    # softmax (K is released after Q K^T); the H200 sweep measured STAGES = 1 faster than 2. The
    # tensor-core flash attention and its stages experiment moved from puzzle 07 to puzzle 08
    # (flash_attention_tensor_cores); the figures come from its results page.
    p07 = prose(SOLUTIONS["07"])
    assert "ordinary loop" not in p07
    assert "expect it slower" not in p07
    p08 = prose(SOLUTIONS["08"])
    assert "ordinary loop" not in p08
    assert "STAGES = 1 0.1685 ms" in p08 and "STAGES = 2 0.1709 ms" in p08
    assert "One stage cost nothing" in p08
    page = (ROOT / "docs" / "results" / "p08-flash-attention.md").read_text(encoding="utf-8")
    assert "| STAGES = 1 | 0.1685 ms |" in page and "| STAGES = 2 (the bench case) | 0.1709 ms |" in page
    assert "docs/results/p08-flash-attention.md" in p08
    assert "With warp specialization off, `num_stages=1` is no pipeline at all" in p08


def test_gemv_is_not_said_to_share_row_sum_tiled_shape():
    # Review item 3: gemv's reference reduces across threads on every K tile, the variant puzzle 05
    # calls correct but slower.
    text = prose(SOLUTIONS["08"])
    assert "so the kernel has the same shape" not in text
    assert "the variant puzzle 05 calls correct but slower" in text
    assert "only slower" in prose(SOLUTIONS["05"])


def test_wgmma_facts():
    # Review items 4-7: a WGMMA intrinsic emitter exists, wgmma has a no-swizzle mode, the refused
    # annotation is TileLang's layout inference, and BLOCK_K below 16 is not silently accepted.
    import tilelang.language as T

    text = prose(SOLUTIONS["08"])
    assert hasattr(T, "WGMMATensorCoreIntrinEmitter")
    assert "`T.WGMMATensorCoreIntrinEmitter`" in text
    assert "would be an `mma.sync` kernel" not in text
    assert "`wgmma` requires it" not in text
    assert "no-swizzle mode" in text
    assert "wgmma's layout is fixed by the instruction" not in text
    assert "TileLang's layout inference, not the instruction" in text
    assert "does not refuse a smaller one" not in text
    assert "`mma.sync` m16n8k8 instead of `wgmma`" in text


def test_pipelined_cause_is_measured_or_labelled():
    # Review item 12: the slowdown of matmul_pipelined with warp specialization is labelled a
    # hypothesis, and the figures quoted from the H200 profile are the page's.
    text = prose(SOLUTIONS["08"])
    assert "that handshake costs more than it hides" not in text
    assert "is a hypothesis" in text
    page = (ROOT / "docs" / "results" / "h200-profiles.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| 08 | `matmul_pipelined` |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    tensor, occupancy, stall = cells[5], cells[7].split()[0], cells[-1]
    assert (tensor, occupancy, stall) == ("32%", "42%", "long scoreboard 34%")
    assert "docs/results/h200-profiles.md" in text
    assert "Tensor Core pipe busy 32 % of the time" in text
    assert "(long scoreboard, 34 %), occupancy 42 %" in text


def test_p10_baseline_is_called_one_thing():
    # Review item 11: the unpack-then-matmul torch route is not "fair" in one place and what "no server
    # does" in another; the fair comparison is the fp16 matmul on unquantized weights.
    text = prose(SOLUTIONS["10"])
    assert "fair torch alternative" not in text
    assert "no server does" not in text
    assert "The fair comparison is torch's fp16 matmul on unquantized weights" in text


def test_zh_cn_follows():
    # The zh_CN catalogues carry the same corrections (the i18n check pins completeness, not content).
    def translated(puzzle_id: str) -> str:
        return " ".join(entry.msgstr for entry in read_po(ROOT / "i18n" / "zh_CN" / f"p{puzzle_id}.po"))

    p07, p08 = translated("07"), translated("08")
    assert "普通循环" not in p07
    assert "普通循环" not in p08
    assert "五个 GEMM" not in p08 and "六个 GEMM" in p08
    assert "性能测试用例中为 4" in p08
    assert "约 29.5 MiB" in p08
    assert "五级 GEMM" not in (ROOT / "docs" / "zh_CN" / "learner.md").read_text(encoding="utf-8")


def test_the_bank_conflict_07_describes_is_in_the_code_tilelang_generates():
    """Issue 41 N1: 07's experiment 2 says the score loop reads K_tile from 16 key rows 512 bytes apart, one bank,
    quoting the generated index. The reference at its bench case, lowered for sm_90a (TileLang's codegen, no
    nvcc), must read K_tile so; a layout or codegen change that removes the conflict makes the prose wrong."""
    import tilelang
    from tilelang import tvm

    from grader.pipeline.trace import kernel_function, trace_tir

    text = prose(SOLUTIONS["07"])
    assert "`K_tile[(threadIdx.x & 15) * 256 + ... + d]`" in text and "512 bytes apart" in text
    module = load_module(SOLUTIONS["07"])
    kernel = load_puzzle(module).kernel("flash_attention")
    case = next(c for c in kernel.cases if c.bench)
    assert (case.sizes["D"], case.params["BLOCK_N"]) == (64, 64)  # rows of 64 fp16: 4 rows are 512 bytes
    tir = trace_tir(kernel_function(module, kernel), kernel, case, SOLUTIONS["07"])
    target = {"kind": "cuda", "arch": "sm_90a"}
    with tvm.target.Target(target):
        source = tilelang.lower(tir.without_attr("tilelang_out_idx"), target=target).kernel_source
    assert "K_tile)[((((((int)threadIdx.x) & 15) * 256) + ((i_4 & 3) * 64)) + d)]" in source


def _worked_example(puzzle_id: str, opening: str, edits: dict[str, str] | None = None) -> tuple[str, dict, str]:
    """Issue 41 item 5: run a hand-worked example cell ("extra", its first line starting with ``opening``) of
    a stub as a learner would, after replacing the line that starts with each key of ``edits`` by its value;
    (its printout, its names, its source)."""
    import contextlib
    import io

    from grader.course.notebooks import module_cells

    cells = module_cells(STUBS[puzzle_id].read_text(encoding="utf-8"))
    (source,) = [c.text for c in cells if c.kind == "extra" and c.text.startswith(f"# {opening}")]
    for start, new in (edits or {}).items():
        lines = source.splitlines()
        (found,) = [i for i, line in enumerate(lines) if line.startswith(start)]
        source = "\n".join([*lines[:found], new, *lines[found + 1 :]]) + "\n"
    printed, names = io.StringIO(), {}
    with contextlib.redirect_stdout(printed):
        exec(compile(source, f"<{puzzle_id}: {opening}>", "exec"), names)
    return printed.getvalue(), names, source


def _printed_list(printout: str, label: str) -> list[float]:
    import ast

    (line,) = [line for line in printout.splitlines() if line.startswith(label)]
    return ast.literal_eval(line[line.index("[") : line.rindex("]") + 1])


def test_gemv_by_hand_adds_up_to_torch():
    # Each printed partial sum is the block's row times the K tile's piece of B, each row's partial sums add up
    # to its entry of C, and C is torch's A @ B: as the cell stands, and with other sizes a learner may try.
    import torch

    printout, names, source = _worked_example("08", "GEMV by hand")
    A, B = names["A"].double(), names["B"].double()
    assert _printed_list(printout, "C     =") == (A @ B).tolist() == [5, 17, 1, -1]
    assert "C[0:2] = [5, 17]" in source and "C[2:4] = [1, -1]" in source  # the numbers its comment writes out
    partials = re.findall(r"row (\d+): .* = (-?[\d.]+); running sum", printout)
    # block 0 (rows 0 and 1), then block 1 (rows 2 and 3); in each, K tile 0 (columns 0-1), then K tile 1 (2-3)
    assert [(int(r), float(p)) for r, p in partials] == [
        (r, (A[r, k : k + 2] @ B[k : k + 2]).item()) for rows in ((0, 1), (2, 3)) for k in (0, 2) for r in rows
    ]
    assert "T.ceildiv(M, BLOCK_M) blocks" in source and "clear=False" in source

    generator = torch.Generator().manual_seed(41)
    A, B = torch.randn(5, 7, generator=generator), torch.randn(7, generator=generator)
    printout, names, _ = _worked_example(
        "08",
        "GEMV by hand",
        {
            "A = ": f"A = torch.tensor({A.tolist()})",
            "B = ": f"B = torch.tensor({B.tolist()})",
            "BLOCK_M, BLOCK_K = ": "BLOCK_M, BLOCK_K = 2, 3",
        },
    )
    assert printout.count("block ") == 3 and printout.count("K tile ") == 3 * 3  # ceildiv(5, 2), ceildiv(7, 3)
    assert _printed_list(printout, "C     =") == pytest.approx((A @ B).tolist(), abs=1e-4)
    assert printout.rstrip().endswith("the same: True")


def test_online_softmax_by_hand_matches_torch():
    # The cell's walk ends at the row's max and sum, its printed probabilities are torch.softmax's, and the
    # numbers the markdown above it writes out are the cell's.
    import math

    import torch

    printout, names, _ = _worked_example("06", "The online softmax by hand")
    row = torch.tensor(names["row"], dtype=torch.float64)
    softmax = torch.softmax(row, dim=0)
    assert names["m"] == row.max().item() == 5
    assert names["l"] == pytest.approx(torch.exp(row - 5).sum().item(), rel=1e-12)
    assert names["probabilities"] == pytest.approx(softmax.tolist(), abs=1e-12)
    printed = _printed_list(printout, "second walk")
    assert printed == [round(p, 4) for p in softmax.tolist()] == _printed_list(printout, "torch.softmax(row)")
    assert "exp(3 - 5) = 0.135" in printout and "= 1.503" in printout and "= 1.578" in printout

    text = prose(STUBS["06"])
    assert f"$e^{{3 - 5}} = {math.exp(-2):.3f}$" in text
    assert f"= 0.203 + 1.375 = {names['l']:.3f}$" in text
    assert ", ".join(f"{p:.4f}" for p in printed) in text

    # "with the row 5, 4, 0, 1, 3, 2 the second factor is 1"
    assert "(with the row 5, 4, 0, 1, 3, 2 the second factor is 1)" in text
    printout, _, _ = _worked_example(
        "06",
        "The online softmax by hand",
        {"row = ": "row = [5.0, 4.0, 0.0, 1.0, 3.0, 2.0]"},
    )
    assert "exp(5 - 5) = 1.000" in printout
    assert _printed_list(printout, "second walk") == _printed_list(printout, "torch.softmax(row)")
