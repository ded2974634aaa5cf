"""The Chinese edition (grader/i18n/__init__.py): catalogues in sync with the English sources, translations
that keep the English's code, math and numbers, generated notebooks that match, the grader's
sentences in Chinese under zh_CN and unchanged in English, and the zh_CN notebooks running top to
bottom for the puzzles whose catalogues are complete (i18n/zh_CN/complete.txt)."""

from __future__ import annotations

import json
import re
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from grader import i18n
from grader.course import translations
from grader.course.generate import expected_notebooks, main, stale_notebooks
from grader.course.translations import BANNER, mismatches, updated, write_po
from grader.discover import puzzle_files
from grader.frontends.render import RED
from grader.i18n import Entry, read_po, tr
from tests.conftest import ROOT

# One worker runs this file (pytest --dist loadgroup): its module fixture executes the zh_CN notebooks, one at
# a time, for the execution tests (marked slow: conftest.py) to read.
pytestmark = pytest.mark.xdist_group("zh_notebooks")

LANG = "zh_CN"
PUZZLES = sorted(puzzle_files(ROOT / "puzzles"))
COMPLETE = translations.complete_list(LANG, ROOT)
# The solved zh_CN notebooks executed here: their code cells are the English ones (checked for all ten below), and
# tests/test_notebooks.py executes every English solution notebook, so what one adds is the Chinese verdicts. A pass
# line in Chinese is one code path, the same sentence in every puzzle: one solved notebook shows it (each more was
# half a minute of CI and nothing of the language). Every stub notebook is executed (no compiles).
SOLVED_SAMPLE = [p for p in ("02",) if p in COMPLETE]
AGAIN = "run: python -m grader i18n update && python -m grader notebooks --lang zh_CN"


@pytest.fixture
def english(monkeypatch):
    monkeypatch.setenv(i18n.ENV, "en")


@pytest.fixture
def chinese(monkeypatch):
    monkeypatch.setenv(i18n.ENV, LANG)


# ------------------------------------------------------------------------------ the .po format


def test_po_files_read_back_what_was_written(tmp_path: Path):
    entries = [
        Entry("p01-spec", "one line", "一行"),
        Entry(
            "p01-spec", 'two\nlines with "quotes" and a \\ backslash', "两行\n译文", fuzzy=True, previous="old\ntext"
        ),
        Entry("hint:copy:1", "untranslated"),
    ]
    path = tmp_path / "x.po"
    assert write_po(path, entries, LANG, "a comment")
    assert not write_po(path, entries, LANG, "a comment")  # unchanged: not rewritten
    back = read_po(path)
    assert [(e.msgctxt, e.msgid, e.msgstr, e.fuzzy, e.previous) for e in back] == [
        (e.msgctxt, e.msgid, e.msgstr, e.fuzzy, e.previous) for e in entries
    ]
    assert "#, fuzzy" in path.read_text() and '#| msgid ""' in path.read_text()


def test_an_edited_paragraph_keeps_its_old_translation_as_fuzzy():
    old = [Entry("p01-spec", "The copy moves bytes.", "拷贝只是搬运字节。"), Entry("p01-spec", "Gone.", "没了。")]
    fresh = [Entry("p01-spec", "The copy moves bytes, nothing else."), Entry("p01-intro-md1", "Gone.")]
    out = updated(fresh, old)
    assert (out[0].msgstr, out[0].fuzzy, out[0].previous) == ("拷贝只是搬运字节。", True, "The copy moves bytes.")
    assert (out[1].msgstr, out[1].fuzzy) == ("没了。", False)  # the same English moved to another cell
    assert [e.done for e in updated(fresh, [])] == [False, False]
    reflowed = updated([Entry("p01-spec", "The copy\nmoves bytes.")], old)[0]  # only the line breaks moved
    assert (reflowed.msgstr, reflowed.fuzzy) == ("拷贝只是搬运字节。", False)


def test_paragraphs_keep_fenced_code_whole_and_skip_what_has_no_prose():
    text = "# Title\n\nSome prose.\n\n```python\nx = 1\n\ny = 2\n```\n\n    indented code\n\n$$a + b$$"
    parts = translations.paragraphs(text)
    assert parts == ["# Title", "Some prose.", "```python\nx = 1\n\ny = 2\n```", "    indented code", "$$a + b$$"]
    assert [translations.translatable(p) for p in parts] == [True, True, False, False, False]


def test_a_translation_must_keep_code_math_links_and_numbers():
    english = "Use `T.copy` on $N$ elements, 128 at a time ([docs](https://x.org/a))."
    assert mismatches(english, "对 $N$ 个元素使用 `T.copy`，每次 128 个（[文档](https://x.org/a)）。") == []
    assert mismatches(english, "对 $N$ 个元素使用 `T.copy`，每次 64 个（[文档](https://x.org/a)）。")
    assert mismatches(english, "对 $M$ 个元素使用 `T.copy`，每次 128 个（[文档](https://x.org/a)）。")
    assert mismatches(english, "对 $N$ 个元素使用 T.copy，每次 128 个（[文档](https://x.org/a)）。")
    assert mismatches(english, "对 $N$ 个元素使用 `T.copy`，每次 128 个（[文档](https://x.org/b)）。")


# ------------------------------------------------------------------------------ the catalogues


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_catalogue_is_in_sync_with_the_english(puzzle_id: str):
    """Every paragraph and hint tier of the sources has its entry, and an entry whose English changed
    is marked fuzzy: what `i18n update` would write is what is checked in."""
    path = i18n.puzzle_catalogue_path(puzzle_id, LANG, ROOT)
    have = read_po(path)
    source = puzzle_files(ROOT / "puzzles")[puzzle_id]
    want = updated(translations.puzzle_entries(source, puzzle_id), have)
    key = lambda e: (e.msgctxt, e.msgid, e.msgstr, e.fuzzy)  # noqa: E731
    assert [key(e) for e in have] == [key(e) for e in want], f"{path.name} is stale: {AGAIN}"


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_no_translation_changes_the_code_math_or_numbers(puzzle_id: str):
    path = i18n.puzzle_catalogue_path(puzzle_id, LANG, ROOT)
    problems = [
        f"[{e.msgctxt}] {e.msgid[:50]!r}: {m}" for e in read_po(path) if e.done for m in mismatches(e.msgid, e.msgstr)
    ]
    assert problems == []


@pytest.mark.parametrize("puzzle_id", COMPLETE)
def test_the_catalogues_listed_complete_are_complete(puzzle_id: str):
    assert translations.pending(puzzle_id, LANG, ROOT) == []


def test_the_complete_list_names_every_complete_catalogue_and_only_puzzles():
    assert set(COMPLETE) <= set(PUZZLES), f"complete.txt names unknown puzzles: {set(COMPLETE) - set(PUZZLES)}"
    unlisted = [p for p in PUZZLES if p not in COMPLETE and not translations.pending(p, LANG, ROOT)]
    assert unlisted == [], f"complete catalogues not listed in i18n/{LANG}/complete.txt: {unlisted}"


def test_the_graders_catalogue_is_complete_and_still_matches_what_the_grader_says():
    assert translations.grader_catalogue_problems(LANG, ROOT) == []


def test_the_zh_cn_notebooks_match_their_sources():
    expected = expected_notebooks(ROOT / "puzzles", (), LANG)
    assert stale_notebooks(expected, ROOT / "notebooks" / LANG) == [], AGAIN


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_zh_cn_notebooks_have_the_english_cells_ids_and_code(puzzle_id: str):
    name = f"{puzzle_files(ROOT / 'puzzles')[puzzle_id].stem}.ipynb"
    english = json.loads(expected_notebooks(ROOT / "puzzles", (puzzle_id,))[name])
    chinese = json.loads(expected_notebooks(ROOT / "puzzles", (puzzle_id,), LANG)[name])
    assert [c["id"] for c in chinese["cells"]] == [c["id"] for c in english["cells"]]
    for a, b in zip(english["cells"], chinese["cells"]):
        assert a["cell_type"] == b["cell_type"] and a["metadata"] == b["metadata"]
        if a["metadata"]["tilelang_course"]["role"] == "setup":
            code = lambda cell: [x for x in "".join(cell["source"]).splitlines() if not x.startswith("# ")]  # noqa: E731
            assert code(b) == [x + (" --lang zh_CN" if x.startswith("%puzzle") else "") for x in code(a)]
        elif a["cell_type"] == "code":  # the same code; only the comments are translated (tests/test_i18n_comments.py)
            code = lambda cell: translations.without_comments("".join(cell["source"]))  # noqa: E731
            assert code(a) == code(b)


def test_an_untranslated_or_fuzzy_paragraph_shows_the_english_under_the_banner():
    entries = {
        ("c", "First."): Entry("c", "First.", "第一段。"),
        ("c", "Second."): Entry("c", "Second.", "旧", fuzzy=True),
    }
    out = translations.translate_markdown("First.\n\nSecond.\n\nThird.\n\n```\ncode\n```", "c", entries)
    assert out == f"第一段。\n\n{BANNER}\n\nSecond.\n\nThird.\n\n```\ncode\n```"


def test_nbgrader_course_in_chinese_has_the_english_grade_ids():
    from grader.nbgrader.course import source_notebook

    stubs, solutions = puzzle_files(ROOT / "puzzles"), puzzle_files(ROOT / "solutions")
    for puzzle_id in ("01", "05"):
        ids = [
            [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]
            for notebook in (
                source_notebook(solutions[puzzle_id], stubs[puzzle_id], puzzle_id),
                source_notebook(solutions[puzzle_id], stubs[puzzle_id], puzzle_id, lang=LANG),
            )
        ]
        assert ids[0] == ids[1] and any(ids[0])


# ------------------------------------------------------------------------------ the grader's sentences


def test_the_language_comes_from_the_variable_then_the_locale(monkeypatch):
    for name in ("LC_ALL", "LC_MESSAGES", "LANG", i18n.ENV):
        monkeypatch.delenv(name, raising=False)
    assert i18n.current() == "en"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert i18n.current() == LANG
    monkeypatch.setenv(i18n.ENV, "en")
    assert i18n.current() == "en"
    monkeypatch.setenv(i18n.ENV, "zh-CN")
    assert i18n.current() == LANG


def _failed_case():
    from grader.outcome import CaseResult, Status

    return CaseResult(
        puzzle="01",
        kernel="copy_threads",
        case="tail_1000",
        status=Status.FAILED,
        sizes={"N": 1000},
        message="232 of 1000 output elements wrong",
        checked="simulated",
        details=[
            "232 of 1000 elements of B are wrong",
            "B[768] = nan, expected 0.5",
            "wrong tiles: 1 of 4 (3); tile = 256",
            "tile map (x wrong, . right): ...x",
        ],
        hint="The partial tiles at the edge were never written: launch enough blocks to cover the output, "
        "T.ceildiv(size, BLOCK) rather than size // BLOCK.",
    )


def test_english_case_lines_are_unchanged(english):
    from grader.frontends import render as report

    lines = report.case_lines(_failed_case())
    assert lines[0].endswith("simulated on CPU: 232 of 1000 output elements wrong")
    assert lines[-2] == "        hint: " + _failed_case().hint
    assert lines[-1] == "        see inside: python -m grader 01 --explain copy_threads --case tail_1000"
    assert tr("anything at all") == "anything at all"


def test_case_lines_in_chinese(chinese):
    from grader.frontends import render as report

    lines = report.case_lines(_failed_case())
    assert lines[0].endswith("CPU 模拟：1000 个输出元素中有 232 个错误")
    assert lines[1:5] == [
        "        B 的 1000 个元素中有 232 个错误",
        "        B[768] = nan，应为 0.5",
        "        出错的分块：4 个中有 1 个（3）；分块 = 256",
        "        分块图（x 错，. 对）：...x",
    ]
    assert (
        lines[5].startswith("        提示：边缘那些不完整的分块从来没有被写过") and "T.ceildiv(size, BLOCK)" in lines[5]
    )
    assert lines[6] == "        看看内部：python -m grader 01 --explain copy_threads --case tail_1000"


def test_the_notebook_summary_in_chinese(chinese):
    from grader.frontends.render import summary
    from grader.outcome import CaseResult

    def cases(status: str, checked: str = "") -> list[CaseResult]:
        return [CaseResult("02", "add", f"c{i}", status, {}, checked=checked, arch="sm_80") for i in range(3)]

    assert tr(summary("add", cases("not_implemented"))[1]) == (
        "add：尚未实现（填好它的 TODO，运行它所在的单元格，再运行这一格）"
    )
    assert tr(summary("add", cases("passed"))[1]) == "add：全部 3 个用例通过"
    built = summary("add", cases("compiled", "compiled"))[1]  # the arch comes from the results' field
    assert tr(built) == "add：通过（0 个用例在 CPU 上模拟，3 个只为 sm_80 编译：它们的数值要在 GPU 上检查）"


def test_unknown_text_stays_english_under_chinese(chinese):
    assert tr("TileLang said something nobody translated") == "TileLang said something nobody translated"


def test_hints_in_chinese_use_the_catalogue_or_fall_back_to_english(chinese):
    from grader import hints

    found = hints.get("01", "copy_serial", 1)
    lines = i18n.hint_lines(found, more='hint("copy_serial", level={level})')
    assert lines[0] == "copy_serial 的提示 1/3（谜题 01）："
    assert lines[-1] == '更多：hint("copy_serial", level=2)'
    translated = i18n.hint_text("01", "copy_serial", 1, found.text, LANG) != found.text
    assert (found.text.split()[0] in " ".join(lines[1:-1])) != translated


# ------------------------------------------------------------------------------ running them

if COMPLETE:
    from tests.test_notebooks import execute, outputs, role


@pytest.fixture(scope="module")
def executed_zh(tmp_path_factory: pytest.TempPathFactory):
    """(puzzle id, "stub" or "solution") -> the future of its executed zh_CN notebook. One at a time: CI runs
    two workers (-n 2), and the other one may be executing tests/test_notebooks.py's English ones."""
    folder = tmp_path_factory.mktemp("zh_notebooks")
    assert main(["--solutions", "--lang", LANG, "--out", str(folder / "solutions"), *SOLVED_SAMPLE]) == 0
    shutil.copytree(ROOT / "notebooks" / LANG, folder / "stubs")
    pool = ThreadPoolExecutor(max_workers=1)
    futures: dict[tuple[str, str], Future] = {}
    # The experiment cells ("extra": compiling kernels to count registers, pictures) are the English
    # notebooks' code, byte for byte (test_zh_cn_notebooks_have_the_english_cells_ids_and_code), and
    # tests/test_notebooks.py runs those: here only what the language changes runs, the grader's output.
    without = ("extra",)
    for puzzle_id in COMPLETE:
        name = f"{puzzle_files(ROOT / 'puzzles')[puzzle_id].stem}.ipynb"
        futures[(puzzle_id, "stub")] = pool.submit(execute, folder / "stubs" / name, without=without)
        if puzzle_id in SOLVED_SAMPLE:
            futures[(puzzle_id, "solution")] = pool.submit(execute, folder / "solutions" / name, without=without)
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("puzzle_id", COMPLETE)
def test_zh_cn_stub_notebook_says_not_implemented_in_chinese(executed_zh, puzzle_id: str):
    notebook = executed_zh[(puzzle_id, "stub")].result()
    checks = [c for c in notebook.cells if role(c) == "check"]
    assert checks
    for cell in checks:
        kernel = cell.metadata["tilelang_course"]["kernel"]
        assert f"{RED}{kernel}：尚未实现" in outputs(cell, "stdout"), outputs(cell, "stdout")
        # a line past 100 columns wraps at a space or between two CJK characters (grader.i18n.wrap_wide), so
        # the sentence is looked for with the spaces and line breaks taken out of both
        unwrapped = re.sub(r"\s+", "", outputs(cell, "stdout"))
        assert re.sub(r"\s+", "", f"尚未实现：本 notebook 里 `{kernel}` 的 TODO 还没有填写") in unwrapped, outputs(
            cell, "stdout"
        )
        assert outputs(cell, "stderr") == ""
    for cell in notebook.cells:
        assert outputs(cell, "error") == "", cell.source[:200]


@pytest.mark.parametrize("puzzle_id", SOLVED_SAMPLE)
def test_zh_cn_solution_notebook_passes_every_check_in_chinese(executed_zh, puzzle_id: str):
    notebook = executed_zh[(puzzle_id, "solution")].result()
    for cell in notebook.cells:
        assert outputs(cell, "error") == "", cell.source[:200] + "\n" + outputs(cell, "error")
    for cell in (c for c in notebook.cells if role(c) == "check"):
        kernel = cell.metadata["tilelang_course"]["kernel"]
        assert f"{kernel}：通过" in outputs(cell, "stdout") or f"{kernel}：全部" in outputs(cell, "stdout")
        assert outputs(cell, "stderr") == ""


def test_chinese_hints_wrap_by_columns_and_never_inside_code():
    text = "用 T.alloc_fragment((BLOCK,), T.float16) 分配 a、b、c；" * 6
    lines = i18n.wrap_wide(text, 40)
    assert all(i18n.text_columns(line) <= 40 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all("T.alloc_fragment((BLOCK,)," in line for line in lines if "alloc" in line)


# ------------------------------------------------------------------------------ the --profile report


def _profiled_cases():
    """Three profiled cases made by hand, their advice from the advice rules: counters read on a GPU (a
    one-block kernel whose warps wait on DRAM), the static estimate of a case that was only compiled, and a
    GPU run whose counters could not be read."""
    from grader.outcome import CaseResult, ProfileReport
    from grader.pipeline.profile import advice
    from grader.pipeline.profile.counters import NO_NCU

    estimate = {
        "grid": 512,
        "sm_count": 132,
        "threads": 256,
        "bound": "memory",
        "floor_us": 28.0,
        "occupancy_pct": 62.5,
        "occupancy_limit": "registers",
        "tensor_cores": "none",
        "copies": "plain loads",
    }
    counted = {
        **estimate,
        "grid": 1,
        "duration_us": 1457.3,
        "dram_pct": 19.0,
        "tensor_pct": 0.0,
        "achieved_occupancy_pct": 12.0,
        "occupancy_limit": "registers and shared memory",
        "stalls": [["long_scoreboard", 53.2], ["barrier", 20.1], ["wait", 9.0]],
    }
    reference = {**counted, "duration_us": 116.7}
    said = [advice.comparison(counted, reference), *advice.advise(counted, reference)]
    assert len(said) == 3 and said[1].startswith("Too little parallelism") and said[2].startswith("Latency-bound")
    return [
        CaseResult("08", "gemv", "large_8192", "passed", {}, profile=ProfileReport("gpu", counted, reference, said)),
        CaseResult(
            "08", "gemv", "large_8192", "compiled", {},
            profile=ProfileReport("static", estimate, estimate, advice.advise(estimate, estimate)),
        ),
        CaseResult(
            "08", "gemv", "large_8192", "passed", {},
            profile=ProfileReport("gpu", estimate, estimate, advice.advise(estimate, estimate), problem=NO_NCU),
        ),
    ]  # fmt: skip


def _printed(cases) -> list[str]:
    """What the CLI and a notebook print: the renderer's lines, each through tr."""
    from grader.frontends import render

    return [tr(line) for line in render.profile_lines(cases)]


TABLE_ROW = re.compile(r"^  (\S.*?) {2,}(\S.*?) {2,}(\S.*)$")  # label, yours, the course kernel's


def test_english_profile_report_is_unchanged(english):
    lines = _printed(_profiled_cases()[1:2])
    assert lines[:4] == [
        "08 gemv, case large_8192 (its verdict: BUILT; a profile never changes it): an estimate from the TIR and "
        "ptxas (no counters)",
        "                            yours         course kernel",
        "  blocks launched           512           512",
        "  threads per block         256           256",
    ]
    assert "  what limits it            registers     registers" in lines
    assert "  global-to-shared copies   plain loads   plain loads" in lines
    assert lines[-1] == (
        "  - No cause stands out in the estimate: it is memory-bound, at least 28.0 us on this GPU generation. On a "
        "GPU, --bench says how close it comes and --profile reads the counters."
    )
    counted = _printed(_profiled_cases()[:1])
    assert counted[0] == "08 gemv, case large_8192: Nsight Compute's counters and an estimate from the TIR"
    assert "long scoreboard 53%, barrier 20%, wait 9%" in "\n".join(counted)


def test_profile_report_in_chinese(chinese):
    gpu, static, unread = (_printed([case]) for case in _profiled_cases())
    assert gpu[0] == "08 gemv，用例 large_8192：Nsight Compute 的计数器，加上根据 TIR 的估算"
    assert static[0] == (
        "08 gemv，用例 large_8192（它的判定：BUILT；profile 从不改变判定）：根据 TIR 和 ptxas 的估算（没有计数器）"
    )
    assert gpu[1].split() == ["你的", "课程的", "kernel"]
    rows = {match.group(1): match.groups()[1:] for line in gpu[2:] if (match := TABLE_ROW.match(line))}
    assert rows["启动的 block 数"] == ("1", "1")
    assert rows["限制占用率的因素"] == ("寄存器和共享内存", "寄存器和共享内存")
    assert rows["这个下限由谁决定"] == ("访存", "访存")
    assert rows["warp 停顿的主要原因"][0] == "等全局内存 53%, 等 barrier 20%, 固定延迟 9%"
    assert rows["profiler 下的用时"] == ("1,457.3 us", "116.7 us")
    # the columns line up on screen: a CJK character takes two columns (grader.i18n.wrap_wide's measure)
    table = [line for line in gpu[1:] if not line.startswith("  -")]
    yours = {i18n.text_columns(line[: line.index(TABLE_ROW.match(line).group(2))]) for line in table[1:]}
    theirs = {i18n.text_columns(line[: line.rindex(TABLE_ROW.match(line).group(3))]) for line in table[1:]}
    assert yours == {i18n.text_columns(table[0][: table[0].index("你的")])}
    assert theirs == {i18n.text_columns(table[0][: table[0].index("课程的")])}
    advice = [line for line in gpu if line.startswith("  - ")]
    assert advice == [
        "  - 在 profiler 下，你的 kernel 用时 1,457.3 us，课程的 kernel 用时 116.7 us（12.49x）。",
        "  - 并行度太低：132 个 SM 只分到 1 个 block，131 个 SM 无事可做。让每个 block 少做一些工作（用更小的"
        "分块，或把一个 block 跑的循环拆给几个 block），使 grid 覆盖每个 SM。 课程的 kernel 在这里启动的也一样少："
        "这个 kernel 是这一课的起点。",
        "  - 延迟受限：warp 的停顿中有 53% 在等全局（或本地）内存加载；在途的加载太少，DRAM 忙不起来（19%）。"
        "让更多 warp 驻留 （实际占用率 12%，受限于寄存器和共享内存），用更宽的向量加载，或者用 T.Pipelined "
        "提前分段加载分块。",
    ]
    assert "  - 估算里看不出突出的原因： 它是访存受限的，在这一代 GPU 上至少要 28.0 us。" in static[-1]
    assert any(line.endswith("  普通加载") for line in static)
    assert not any(re.search(r"[a-z]{4,} [a-z]{4,}", line) for line in static[1:])  # no English words left
    assert unread[-2].startswith("  没有计数器：这台机器的 PATH 里没有 Nsight Compute（ncu）") and "$PATH" in unread[-2]


def test_every_profile_sentence_has_a_translation(chinese):
    """Each branch of the advice and each reason for missing counters comes out in Chinese (no English sentence
    left: nothing but code, names and units in Latin letters)."""
    from grader.pipeline.profile import advice
    from grader.pipeline.profile.counters import HOW_TO_ENABLE, NO_NCU, STALL_WORDS, problem_in

    base = {"sm_count": 132, "registers": 40, "tensor_pct": 10.0, "dram_pct": 30.0, "achieved_occupancy_pct": 20.0}
    cases = [
        {"grid": 4, "sm_count": 132},
        {"spill_bytes": 16, "local_bytes": 3000, "registers": 255},
        {"local_bytes": 3000, "registers": 255},
        {"sector_use_pct": 12.5},
        {"bank_conflict_pct": 40.0},
        {"dram_pct": 90.0, "dram_bytes": 4e9, "compulsory_bytes": 1e9},
        {"dram_pct": 90.0},
        {"bound": "compute", "tensor_cores": "none", "fma_pct": 40.0},
        {"tensor_pct": 80.0, "waves": 3.5},
        {"occupancy_pct": 12.5, "occupancy_limit": "shared memory"},
        {"dram_pct": 75.0, "stalls": [["drain", 30.0]]},
        {"floor_us": 12.0, "bound": "compute"},
        {},
    ]
    for reason in STALL_WORDS:
        for bound in ("memory", "compute"):
            cases.append({**base, "bound": bound, "sm_pct": 80.0, "stalls": [[reason, 40.0]],
                          "occupancy_limit": "registers and threads"})  # fmt: skip
    sentences = [s for figures in cases for s in advice.advise(figures, {"grid": 2})]
    sentences += [advice.comparison({"duration_us": 2.0}, {"duration_us": 1.0})]
    sentences += [advice.advise({"grid": 4, "sm_count": 132}, {"grid": 8})[0]]
    sentences += [HOW_TO_ENABLE, NO_NCU, problem_in("Failed to initialize the profiler"), problem_in("==ERROR== x")]
    english = re.compile(r"\b(?!(?:ptxas|kernel|block|warp|barrier|stage|fragment)\b)[a-z]{3,} [a-z]{3,}\b")
    for sentence in sentences:
        said = tr(f"  - {sentence}")
        assert said != f"  - {sentence}" and not english.search(re.sub(r"`[^`]*`|--\S+|\S+/\S+", "", said)), said


def test_a_name_written_as_code_is_not_translated():
    """A value the English writes as code (`{name}`) is a buffer's or a variable's name: a buffer called `partial`
    stayed `部分和` inside the Chinese sentence, from the pictures' entry for the word."""
    from grader.i18n import tr

    assert tr("partial", lang="zh_CN") != "partial"  # the word alone has an entry
    said = tr(
        "T.copy into `partial` inside the serial loop over `k` overwrites `partial` on every step, and nothing in the "
        "loop reads it, so after the loop `partial` holds the last step's values only: add into it (`+=`), and clear "
        "it once before the loop",
        lang="zh_CN",
    )
    assert said.count("`partial`") == 3 and "部分和" not in said and "`k`" in said, said
