"""Facts in the teaching text of puzzles 02, 07, 08 and 10 that the review of issue 28 found wrong, pinned
against the puzzle specs, the results pages and TileLang itself so they cannot drift back."""

import functools
import re
import tempfile
from pathlib import Path

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
    assert "STAGES = 1 0.1650 ms" in p08 and "STAGES = 2 0.1686 ms" in p08
    assert "One stage cost nothing" in p08
    page = (ROOT / "docs" / "results" / "p08-flash-attention.md").read_text(encoding="utf-8")
    assert "| **BLOCK_M 128, BLOCK_N 128, STAGES 1, THREADS 256** | **ok** | **0.1650** |" in page
    assert "| BLOCK_M 128, BLOCK_N 128, STAGES 2, THREADS 256 | ok | 0.1686 |" in page
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


@functools.cache
def _flash_attention_cuda(path: Path) -> tuple[str, int]:
    """The CUDA TileLang generates for sm_90a (its codegen, no nvcc) for ``path``'s flash_attention at 07's bench
    case, and the case's threads; lowered once for the tests that read it."""
    import tilelang
    from tilelang import tvm

    from grader.pipeline.trace import kernel_function, trace_tir

    module = load_module(path)
    kernel = load_puzzle(module).kernel("flash_attention")
    case = next(c for c in kernel.cases if c.bench)
    tir = trace_tir(kernel_function(module, kernel), kernel, case, path)
    target = {"kind": "cuda", "arch": "sm_90a"}
    with tvm.target.Target(target):
        source = tilelang.lower(tir.without_attr("tilelang_out_idx"), target=target).kernel_source
    return source, case.params.get("THREADS", 128)


def test_the_bank_conflict_07_describes_is_in_the_code_tilelang_generates():
    """Issue 41 N1: 07's experiment 2 says the score loop reads K_tile from 16 key rows 512 bytes apart, one bank,
    quoting the generated index. The reference at its bench case, lowered for sm_90a (TileLang's codegen, no
    nvcc), must read K_tile so; a layout or codegen change that removes the conflict makes the prose wrong."""
    text = prose(SOLUTIONS["07"])
    assert "`K_tile[(threadIdx.x & 15) * 256 + ... + d]`" in text and "512 bytes apart" in text
    case = next(c for c in load_puzzle(load_module(SOLUTIONS["07"])).kernel("flash_attention").cases if c.bench)
    assert (case.sizes["D"], case.params["BLOCK_N"]) == (64, 64)  # rows of 64 fp16: 4 rows are 512 bytes
    source, _ = _flash_attention_cuda(SOLUTIONS["07"])
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


# ------------------------------------------------------------------------ issue 41, N3 to N20

RETRACTED_41 = {
    "07": [
        "one result element per thread",  # N9
        "one element of the result per thread and step",  # N9: each thread adds to every element it holds
        "(puzzles 01 and 06)",  # N10
        "unmasked",  # N11
        "Keys of 32 double the per-tile steps",  # N1: 64 x 32 with 128 threads is the fastest block tried
        "leave 128 blocks for 132 SMs, one block each",  # N1: 128 x 32 has 128 blocks and is fast
    ],
    "08": [
        "`T.gemm` takes fp16 operands",  # N12
        "On Hopper the one line gives",  # N14: cp.async only with warp specialization off
        "the guard is what keeps the edge blocks' reads",  # N15: puzzle 01 says TileLang guards loads
        "A piece of a shared tile",  # N16: "shared tile" means shared memory only
        "a shared tile goes through `T.atomic_add`",
        "one tile shared by all",
        "nothing in this kernel overlaps the softmax",  # N6
        "one warpgroup instead of two",  # N5
    ],
    "06": ["for speed, reading the row once (one tile) and multiplying by a reciprocal"],  # N17
    "04": ["puzzle 05's row sum turned on its side"],  # N18: 04 comes before 05
    "09": ["The change from `conv1d_implicit`: the layout."],  # N4
}


@pytest.mark.parametrize(
    ("puzzle_id", "phrase"), [(p, phrase) for p, phrases in RETRACTED_41.items() for phrase in phrases]
)
def test_issue_41_wrong_claims_are_gone(puzzle_id, phrase):
    for files in (SOLUTIONS, STUBS):
        assert phrase not in prose(files[puzzle_id]), f"{phrase!r} is back in puzzle {puzzle_id}"


def test_07_says_what_each_thread_computes_and_that_its_shared_tiles_are_the_first_graded():
    # N9: at the bench case each thread updates BLOCK_M x BLOCK_N / THREADS scores, not one. N10: puzzles 01-06
    # mention T.alloc_shared only in prose; no kernel of theirs allocates one.
    text = prose(SOLUTIONS["07"])
    kernel = load_puzzle(load_module(SOLUTIONS["07"])).kernel("flash_attention")
    p = next(c for c in kernel.cases if c.bench).params
    per_thread = p["BLOCK_M"] * p["BLOCK_N"] // p["THREADS"]
    assert per_thread == 16 and f"each thread updating the scores it holds ({per_thread} at the bench case)" in text
    assert "At each step every thread adds one product to each element of the result it holds." in text
    assert "This is the first graded kernel with shared tiles" in text
    for puzzle_id in ("01", "02", "03", "04", "05", "06"):
        code = [
            line
            for line in SOLUTIONS[puzzle_id].read_text(encoding="utf-8").splitlines()
            if not line.lstrip().startswith("#")
        ]
        assert not any("T.alloc_shared(" in line for line in code), puzzle_id
    assert "the single-head, non-causal version" in text  # N11: 07 does mask (the padded keys)


def test_07s_blocks_experiment_quotes_its_page_and_blames_neither_tiles_nor_blocks_nor_conflicts():
    """N1: experiment 3's measured cell no longer says that 32 keys lose because they double the per-tile steps, or
    128 queries because of their 128 blocks: on the same page 64 x 32 with 128 threads and 128 x 32 with 256 threads
    are the two fastest blocks. The bank-conflict estimate it quotes is the static profile's for those three
    blocks (the reference lowered for sm_90a at the bench case's sizes, no nvcc)."""
    from grader.pipeline.profile.static import bank_conflicts
    from grader.teaching.experiments import kernel_source

    text = prose(SOLUTIONS["07"])
    page = (ROOT / "docs" / "results" / "p07-blocks.md").read_text(encoding="utf-8")
    table = page[page.index("## 07 flash_attention large_16384x4096") :].split("\n## ")[0]
    times = {
        tuple(int(v) for v in re.findall(r"\d+", row.split("|")[1])): row.split("|")[3].strip(" *")
        for row in table.splitlines()
        if row.startswith("| ") and "BLOCK_M" in row
    }
    quoted = {
        (64, 64, 256): "takes {} ms with 64 x 64",
        (64, 32, 256): "BLOCK_N = 32 takes {} ms",
        (128, 64, 256): "BLOCK_M = 128 takes {} ms",
        (64, 32, 128): "With 128 threads, 64 x 32 takes {} ms",
        (128, 32, 256): "128 x 32 with 256 threads takes {} ms",
    }
    for block, phrase in quoted.items():
        assert phrase.format(times[block]) in text, block
    assert min(times.items(), key=lambda item: float(item[1]))[0] == (64, 32, 128)  # "the fastest block tried"
    assert "But neither the key tiles nor the number of blocks explains it alone." in text
    assert "the static profile's worst is 8-way at all three blocks of 32 keys" in text
    assert "Why the blocks differ this much has not been profiled." in text
    sizes = {"M": 16384, "N": 4096, "D": 64}
    module = load_module(SOLUTIONS["07"])
    for m, n, threads in ((64, 32, 256), (64, 32, 128), (128, 32, 256)):
        source = kernel_source(module.flash_attention, **sizes, BLOCK_M=m, BLOCK_N=n, THREADS=threads)
        assert bank_conflicts(source, threads) == (8, "K_tile read"), (m, n, threads)


def test_08s_hint_does_not_say_where_07s_time_went():
    # N1: 07's time is not in its multiply-adds (FMA pipe 26 % busy, 80 % of shared-memory wavefronts replays, its
    # experiment 2); 08's tier-1 hint for flash_attention_tensor_cores says how 07 computed, not where its time went.
    hints = prose(ROOT / "puzzles" / "hints" / "p08_matrix.json")
    assert "Puzzle 07 spent its time on two products" not in hints
    assert "Puzzle 07 did its two products one multiply-add at a time on the CUDA cores" in hints


def test_p_stays_in_registers_and_the_two_math_warpgroups_share_no_barrier():
    """N3: P is a per-thread register array fed to wgmma_rs, converted from S element by element at the same
    index (the accumulator layout of S is the MMA's A-operand layout), so no thread reads another's P.
    N6: inside the key loop the math warpgroups never meet at a barrier: the row reductions run over 4 threads
    of one warp, and there is no __syncthreads; only the TMA mbarriers order the steps."""
    from grader.teaching.experiments import kernel_source

    text = prose(SOLUTIONS["08"])
    assert "Puzzle 07's rule still holds: no thread reads another thread's P." in text
    assert "which is also a valid layout for its left operand" in text
    assert "A tile that other threads must read goes through shared memory" in prose(SOLUTIONS["07"])
    assert "The two math warpgroups share no barrier within a step." in text
    assert "FlashAttention-3 enforces that overlap on Hopper" in text

    module = load_module(SOLUTIONS["08"])
    kernel = load_puzzle(module).kernel("flash_attention_tensor_cores")
    case = next(c for c in kernel.cases if c.bench and c.sizes["H"] == 1)
    source = kernel_source(module.flash_attention_tensor_cores, **case.sizes, **case.params)
    assert re.search(r"\bhalf_t P\[\d+\];", source), "P is no longer a per-thread array"
    assert re.search(r"wgmma_rs<[^;]*\(P \+", source), "P no longer feeds wgmma from registers"
    assert re.search(r"\*\(float4\*\)\(S \+ \((i_\d+) \* 4\)\);.*?\*\(uint2\*\)\(P \+ \(\1 \* 4\)\) =", source, re.S)
    loop = source[source.index("for (int j_1 = 0") :]
    assert "__syncthreads" not in loop
    threads = re.findall(r"AllReduce<tl::\w+Op, (\d+),", loop)
    assert threads and all(int(t) <= 32 for t in threads), threads


def test_matmul_tuned_threads_revert_is_said_to_spill():
    # N5: with 128 threads one math warpgroup holds the whole accumulator, more fp32 values a thread than the
    # 255 registers a thread may have; the figure nvcc gave is on the page the cell names.
    p = next(c for c in load_puzzle(load_module(SOLUTIONS["08"])).kernel("matmul_tuned").cases if c.bench).params
    assert p["BLOCK_M"] * p["BLOCK_N"] // 128 == 256 > 255
    text = prose(SOLUTIONS["08"])
    assert 'bench("matmul_tuned", THREADS=128)' in text
    assert "nvcc spills 2,224 bytes a thread (docs/results/p08-notes.md)" in text
    page = (ROOT / "docs" / "results" / "p08-notes.md").read_text(encoding="utf-8")
    assert re.search(r"^THREADS=128 +256 +240 +24 / 240 +2224 st, 1800 ld ", page, re.M)  # threads launched: 256


def test_warp_specialization_is_defined_where_the_main_path_first_names_it():
    # N8
    from grader.course.notebooks import main_path_cells, parse_cells

    cells = main_path_cells(parse_cells(STUBS["08"].read_text(encoding="utf-8")))
    main = " ".join(" ".join(cell.text.replace("#", " ").split()) for cell in cells)
    first = main.lower().index("warp specialization")
    definition = "TileLang's *warp specialization*: some warps only copy tiles while the others compute."
    assert main.index(definition) == first - len("TileLang's *")


def test_pipelined_gets_cp_async_because_warp_specialization_is_off():
    """N14: "the one line gives cp.async" holds for matmul_pipelined as shipped (warp specialization off); with
    it on, Hopper's copies are TMA, as the prose says."""
    import tilelang
    from tilelang import tvm

    text = prose(SOLUTIONS["08"])
    assert (
        "The one line gives three buffers of each tile" in text and "`cp.async` copies instead of plain loads" in text
    )
    assert "With it on, Hopper's copies would be TMA, not `cp.async`." in text
    module = load_module(SOLUTIONS["08"])
    case = next(c for c in load_puzzle(module).kernel("matmul_pipelined").cases if c.bench)
    tir = module.matmul_pipelined.get_tir(**case.sizes, **case.params)
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    sources = {}
    for off in (True, False):
        with target, tvm.transform.PassContext(opt_level=3, config={"tl.disable_warp_specialized": off}):
            sources[off] = tilelang.lower(tir, target=target).kernel_source
    assert "cp_async_gs" in sources[True] and "tma_load" not in sources[True]
    assert "tma_load" in sources[False] and "cp_async_gs" not in sources[False]
    configs = module.matmul_pipelined.pass_configs or {}
    assert configs.get(tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED) is True


def test_08_names_07s_cuda_core_gemm_and_why_p_is_fp16():
    # N13, N12
    text = prose(SOLUTIONS["08"])
    assert "Puzzle 07's score loop was already such a GEMM, on shared tiles." in text
    assert "The MMA needs P in V's type, fp16." in text


def test_channels_last_names_its_five_changes():
    """N4: conv1d_channels_last differs from conv1d_implicit in layout, loop, where the weights are multiplied
    from (a shared tile: wgmma_ss; a fragment: wgmma_rs), transpose_B, and matmul_tuned's build (its tile and
    threads in the bench case, BLOCK_C 64, a staged store, warp specialization on)."""
    from grader.pipeline.trace import jit_options

    text = prose(SOLUTIONS["09"])
    assert "**Five things change from `conv1d_implicit`, not one.**" in text
    assert "so the MMA is `wgmma_ss`, not `wgmma_rs`" in text
    module = load_module(SOLUTIONS["09"])
    puzzle = load_puzzle(module)
    implicit, last = (
        next(c for c in puzzle.kernel(name).cases if c.bench).params
        for name in ("conv1d_implicit", "conv1d_channels_last")
    )
    assert (implicit["BLOCK_C"], last["BLOCK_C"]) == (16, 64)
    assert (last["BLOCK_L"], last["BLOCK_O"], last["THREADS"]) == (128, 256, 256)
    assert "its tile in the bench case (128 positions x all 256 output channels," in text
    assert "two math warpgroups, 64 channels a step instead of 16), its store staged through shared memory" in text
    implicit_code, last_code = (getattr(module, n).func_source for n in ("conv1d_implicit", "conv1d_channels_last"))
    assert "w_tap = T.alloc_fragment(" in implicit_code and "w_tap = T.alloc_shared(" in last_code
    assert "transpose_B=True" in last_code and "transpose_B" not in implicit_code
    assert "Y_tile = T.alloc_shared(" in last_code and "make_swizzled_layout(Y_tile)" in last_code
    off = "tl.disable_warp_specialized"
    assert jit_options(module.conv1d_implicit)["pass_configs"].get(off) is True
    assert off not in jit_options(module.conv1d_channels_last).get("pass_configs", {})
    assert "warp specialization left on by the decorator" in text


def test_reciprocal_is_said_to_save_instructions_not_time():
    # N17: 06's kernels are memory-bound; one reciprocal a row saves divisions, not bytes.
    text = prose(SOLUTIONS["06"])
    assert text.count("saves instructions, not bytes") == 2


def test_zh_cn_follows_issue_41():
    def translated(puzzle_id: str) -> str:
        return " ".join(entry.msgstr for entry in read_po(ROOT / "i18n" / "zh_CN" / f"p{puzzle_id}.po"))

    p07, p08, p09 = translated("07"), translated("08"), translated("09")
    assert "无掩码" not in p07 and "非因果" in p07  # N11
    assert "每个线程每一步算结果的一个元素" not in p07 and "每个线程给它持有的每个结果元素各加上一个乘积" in p07  # N9
    assert "每块 32 个 key 让每个分块的步骤翻倍" not in p07 and "每个 SM 只有一个 block" not in p07  # N1
    assert "但 key 分块的个数和 block 的个数都不能单独解释这一点" in p07
    assert "这三种 32 个 key 的 block 上都是 8 路" in p07
    assert "谜题 07 的时间花在" not in p08 and "谜题 07 在 CUDA core 上逐次乘加地算它的两个乘积" in p08  # N1
    assert "大部分算力闲置" not in p08  # N20
    assert "SM 只有 97 %" not in p08 and "SM 在 97 % 的时间里都在忙" in p08
    assert "方框" not in p08 and "方框" not in p09
    assert "没有线程读别的线程的 P" in p08  # N3
    assert "改了五处" in p09  # N4


# ------------------------------------------------------------------ issue 41 item 3: 03's "Reading a failure"


@functools.cache
def _reading_a_failure() -> tuple[str, dict[str, str]]:
    """03's section as prose, and the planted sources its experiment cells bind (their assignments run alone:
    the check_source and explain_source calls are left out)."""
    import ast

    from grader.course.notebooks import puzzle_notebook

    cells = puzzle_notebook(SOLUTIONS["03"], "03").cells
    start = next(i for i, c in enumerate(cells) if c.source.startswith("## Reading a failure"))
    end = next(i for i, c in enumerate(cells) if c.source.startswith("## What you learned"))
    section = cells[start:end]
    names: dict[str, str] = {}
    for cell in section:
        if cell.metadata["tilelang_course"]["role"] == "extra":
            tree = ast.parse(cell.source)
            tree.body = [s for s in tree.body if isinstance(s, ast.Assign)]
            exec(compile(tree, "planted", "exec"), {}, names)
    text = " ".join(" ".join(c.source.split()) for c in section if c.cell_type == "markdown")
    return text, names


def _kernel_text(source: str, name: str) -> str:
    lines = source.splitlines()
    first = lines.index(next(line for line in lines if line.startswith(f"def {name}(")))
    last = next(i for i in range(first, len(lines)) if lines[i].strip() == "return C")
    return "\n".join(line for line in lines[first : last + 1] if "# TODO" not in line)


def test_planted_bugs_are_one_line_each_from_the_solution():
    # Each bug is the one change the prose names, and its fix gives back the solution's outer_add.
    text, planted = _reading_a_failure()
    solution = _kernel_text(SOLUTIONS["03"].read_text(encoding="utf-8"), "outer_add")
    offset, store = planted["a_without_offset"], planted["store_without_offset"]
    assert "reads `A[i]` where `A[row]` belongs" in text and "Write `A[row]` in the string" in text
    assert _kernel_text(offset.replace("A[i]", "A[row]"), "outer_add") == solution != _kernel_text(offset, "outer_add")
    assert "it stores to `C[row, j]`, not `C[row, col]`" in text and "write `C[row, col]`" in text
    assert _kernel_text(store.replace("C[row, j]", "C[row, col]"), "outer_add") == solution


def test_planted_cells_run_once_in_the_solved_twin():
    # CI's budget: the planted checks read nothing the stub and its solved twin define differently.
    from grader.course.notebooks import puzzle_notebook
    from tests.test_notebooks import run_by_the_twin

    stub, solved = puzzle_notebook(STUBS["03"], "03"), puzzle_notebook(SOLUTIONS["03"], "03")
    planted = [c.id for c in stub.cells if "grader.frontends.planted" in c.source]
    assert len(planted) == 3 and set(planted) <= set(run_by_the_twin(stub, solved))


@pytest.fixture(scope="module")
def planted_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("planted")
    _, planted = _reading_a_failure()
    for name, source in planted.items():
        (folder / f"{name}.py").write_text(source)
    return folder


def test_the_quoted_tile_map_and_first_wrong_element_are_what_the_grader_prints(planted_files):
    from grader.frontends import render
    from tests.inprocess import grade_simulated

    text, _ = _reading_a_failure()
    (result,) = grade_simulated("03", planted_files / "a_without_offset.py", "outer_add", ["odd_33x127"])
    lines = [line.strip() for line in render.case_lines(result, layout=render.NOTEBOOK)]
    marks = lines[next(i for i, line in enumerate(lines) if line.startswith("tile map")) + 1 :][:3]
    assert marks == ["..", "xx", "xx"]
    assert "``` .. xx xx ```" in text
    first = next(line for line in lines if line.startswith("C["))
    assert first.startswith("C[16, 0] = ") and "nan" not in first.split(",")[1]  # "a wrong number, not NaN"
    assert "The first wrong element is `C[16, 0]`" in text and "It holds a wrong number, not NaN" in text
    call = render.NOTEBOOK.see_inside.format(puzzle="03", kernel="outer_add", case="odd_33x127")
    assert lines[-1] == f"see inside: {call}" and f"call to make: `{call}`" in text


def test_explain_opens_at_the_block_and_the_read_the_prose_names(planted_files):
    from grader.frontends import explain_view
    from grader.pipeline.explain.record import unpack
    from tests.test_explain import explained

    text, _ = _reading_a_failure()
    explanation = explained("03", "outer_add", "odd_33x127", planted_files / "a_without_offset.py")
    assert explanation.block == [0, 1] and explanation.target["index"] == [16, 0]
    assert "replays block `(0, 1)`, the one that wrote `C[16, 0]`" in text
    marked = next(s for s in explanation.steps if s.index == explanation.marked)
    (a,) = [t for t in marked.touches if t.buffer == "A" and t.mode == "read"]
    read = unpack(a.mask, a.shape).nonzero().flatten().tolist()
    assert read == list(range(16)) and "colours what the block read: `A[0:16]`, not `A[16:32]`" in text
    assert "was stored at" in explanation.why and "T.Parallel" in marked.source  # "the step that stored it"
    page = explain_view.html_fragment(explanation, lang="en")
    badge = "the wrong element came from here"
    assert f'<span class="badge">{badge}</span>' in page and f'badged "{badge}"' in text
    picture_of_a = page[page.index('aria-label="A (33): read 16"') :].split("</svg>")[0]
    assert picture_of_a.endswith(f'<rect x="0" y="0" width="16" height="1" fill="{explain_view.COLOURS["read"]}"/>')
    assert ">> " + explain_view.step_line(marked, "en") in explain_view.text_lines(explanation, "en")
    assert "prints the same steps, with `>>` at that one" in text


def test_the_quoted_race_is_what_the_grader_says(planted_files):
    from tests.inprocess import grade_simulated

    text, _ = _reading_a_failure()
    (result,) = grade_simulated("03", planted_files / "store_without_offset.py", "outer_add", ["odd_33x127"])
    said = "race on `C[32, 0]`: blocks (bx=1,by=2) and (bx=0,by=2) both store to it, different values"
    assert said in result.message and not result.tile_map
    assert "There is no tile map this time" in text
    assert "Blocks `(bx=1,by=2)` and `(bx=0,by=2)` both store to `C[32, 0]`, with different values" in text


def test_t_print_is_said_to_show_nothing_in_a_check(tmp_path):
    # The simulator skips T.print's calls (a case passes with one in the kernel), and the judge's stdout and stderr
    # go to /dev/null (tests/test_attacks.py's print_from_the_gpu.py forges verdicts with it on a GPU).
    import inspect

    from grader.outcome import Status
    from grader.pipeline.trace import kernel_function, trace_tir
    from grader.processes import judge
    from tests.inprocess import grade_simulated

    text, planted = _reading_a_failure()
    assert "`T.print` is no help in a check: the simulator skips it, and on a GPU the grader discards" in text
    fixed = planted["a_without_offset"].replace("A[i]", "A[row]")
    printing = fixed.replace("        for i, j in", '        T.print(bx, msg="bx")\n        for i, j in')
    (tmp_path / "printing.py").write_text(printing)
    kernel = load_puzzle(load_module(SOLUTIONS["03"])).kernel("outer_add")
    path = tmp_path / "printing.py"
    tir = trace_tir(kernel_function(load_module(path), kernel), kernel, kernel.case("odd_33x127"), path)
    assert '"debug_print_var", "bx"' in str(tir)  # the print is in the kernel the grader admits
    (result,) = grade_simulated("03", tmp_path / "printing.py", "outer_add", ["odd_33x127"])
    assert result.status == Status.PASSED, result.message
    assert "os.devnull" in inspect.getsource(judge.capture_output)


def test_07s_profiling_exercise_finds_the_conflict_and_the_padding_removes_most_of_it():
    """Issue 41 item 2: 07's experiment 4 has the learner profile (static, no GPU), find "16-way, K_tile read", pad
    K_tile's rows by one word with the two lines the prose gives, and see 2-way. The estimate is read from the code
    TileLang generates for the bench case, the reference's and the reference with those two lines."""
    from grader.pipeline.profile.static import bank_conflicts

    text = prose(SOLUTIONS["07"])
    allocation = "K_tile = T.alloc_shared((BLOCK_N, D + 2), T.float16)"
    fill = "T.copy(K[j * BLOCK_N : (j + 1) * BLOCK_N, 0:D], K_tile[:, 0:D])"
    assert f"`{allocation}`" in text and f"`{fill}`" in text and '"16-way, K_tile read"' in text
    assert "drops to 2-way" in text
    # The time and the counters it quotes are its results page's (written from the device call's raw output).
    page = (ROOT / "docs" / "results" / "p07-k-tile-padded.md").read_text(encoding="utf-8")
    rows = {row.split("|")[1].strip(): row.split("|")[2:4] for row in page.splitlines() if row.startswith("| ")}
    course = [r.split("|")[3].strip() for r in page.splitlines() if "| `flash_attention` (the course's) |" in r]
    padded = [r.split("|")[3].strip() for r in page.splitlines() if "| `K_tile` padded to D + 2 |" in r]
    assert f"takes {padded[0]} and {padded[1]} ms at the bench case against {course[0]} and {course[1]} ms" in text
    ratio = min(float(c) / float(p) for c, p in zip(course, padded))
    assert f"{ratio:.1f} times as fast" in text and "docs/results/p07-k-tile-padded.md" in text
    fma, replays = rows["FMA pipe busy"], rows["shared-memory wavefronts lost to bank conflicts"]
    assert f"busy {fma[0].strip()} of the time instead of {fma[1].strip()}" in text
    assert f"{replays[0].strip()} of the shared-memory wavefronts are replays instead of {replays[1].strip()}" in text
    assert "short scoreboard 63%" in rows["top warp stall reasons"][1] and "(short scoreboard, 63%" in text

    def worst(path: Path) -> tuple[int, str]:
        return bank_conflicts(*_flash_attention_cuda(path))

    assert worst(SOLUTIONS["07"]) == (16, "K_tile read")
    original = SOLUTIONS["07"].read_text()
    at = original.index("def flash_attention(")
    body = original[at:].replace("K_tile = T.alloc_shared((BLOCK_N, D), T.float16)", allocation, 1)
    body = body.replace("T.copy(K[j * BLOCK_N, 0], K_tile)", fill, 1)
    assert allocation in body and fill in body
    with tempfile.TemporaryDirectory() as folder:
        padded = Path(folder) / "p07_padded.py"
        padded.write_text(original[:at] + body)
        assert worst(padded)[0] == 2
        # "The kernel still passes": a simulated case with a key tail and a padded tile that is partly filled
        from tests.inprocess import grade_simulated

        (result,) = grade_simulated("07", padded, "flash_attention", ["few_keys_50x37"])
        assert result.status == "passed", result.message


def test_10s_one_token_rung_reduces_across_threads_once_and_fits_its_grid_in_one_wave():
    """Kernel 4 of puzzle 10 says that at its bench block each thread holds whole runs of 8, so the run sums are a
    loop inside each thread and only the final T.reduce_sum crosses threads; and its case's comment says that the
    block's registers let all 1024 blocks sit on 132 SMs at once. The reference lowered for sm_90a (TileLang's
    codegen) must hold one cross-thread reduction, and ptxas's register count must fit 8 blocks of 128 threads in
    an SM's 65,536 registers (8 x 132 >= 1024 blocks)."""
    import tilelang
    from tilelang import tvm

    from grader.pipeline.trace import kernel_function, trace_tir
    from scripts.p10.sass import build_cubin

    text = prose(SOLUTIONS["10"])
    assert "each thread holds whole runs: the first `T.reduce_sum` is a loop inside each thread" in text
    assert "53 registers a thread, so all 1024 blocks fit on 132 SMs at once" in text
    module = load_module(SOLUTIONS["10"])
    kernel = load_puzzle(module).kernel("dequant_gemv")
    case = kernel.case("decode_1x8192x8192_g128")
    threads = case.params.get("THREADS", 128)
    tir = trace_tir(kernel_function(module, kernel), kernel, case, SOLUTIONS["10"])
    target = {"kind": "cuda", "arch": "sm_90a"}
    with tvm.target.Target(target):
        source = tilelang.lower(tir.without_attr("tilelang_out_idx"), target=target).kernel_source
    assert source.count("tl::AllReduce<") == 1, "the run sums must stay inside each thread"
    with tempfile.TemporaryDirectory() as scratch:
        registers = build_cubin(source, Path(scratch) / "kernel.cubin")
    blocks_per_sm = 65536 // (-(-registers // 8) * 8 * threads)  # registers are given out 8 at a time
    assert blocks_per_sm * 132 >= 8192 // case.params["BLOCK_N"], registers


def test_08_says_which_rungs_change_one_thing_and_which_change_five():
    """Issue 41's 'one change per rung': matmul_tuned changes five settings, so 08 may not say that every later rung
    changes one thing (English and zh_CN)."""
    text = prose(SOLUTIONS["08"])
    assert "accumulator and changes one thing" not in text
    assert "`matmul_tuned` changes five settings, the others one thing each" in text
    zh = (ROOT / "i18n" / "zh_CN" / "p08.po").read_text(encoding="utf-8")
    assert "每次只改一处。" not in zh and "`matmul_tuned` 改了五项设置，其余每一级只改一处" in zh
