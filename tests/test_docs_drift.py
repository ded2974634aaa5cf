"""The pages say what the course's data says: the kernel tables are the puzzles' kernels (written by
``python -m grader.course.sync``), and the notebooks' setup cell is the one the guides quote."""

from __future__ import annotations

import re
import shutil

from grader.course import sync
from grader.course.notebooks import setup_source
from grader.discover import course_root, graded_kernels, load_module, load_puzzle, puzzle_files

ROOT = course_root()
PAGES = sorted([*ROOT.glob("README*.md"), *(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "zh_CN").glob("*.md")])


def test_every_kernel_table_lists_the_puzzles_kernels():
    assert sync.table_problems(ROOT) == [], "run python -m grader.course.sync and commit the tables it rewrites"


def test_no_page_lists_a_puzzles_kernels_outside_a_generated_table():
    firsts = {i: graded_kernels(path.read_text())[0] for i, path in puzzle_files(ROOT / "solutions").items()}
    loose = []
    for page in PAGES:
        outside = sync.TABLE.sub("", page.read_text())
        for line in outside.splitlines():
            row = sync.ROW.match(line)
            if row and f"`{firsts.get(row.group(1), '?')}`" in line:
                loose.append(f"{page.relative_to(ROOT)}: {line[:60]}")
    assert not loose, loose


def test_the_tables_kernels_are_the_puzzles_kernels_in_teaching_order():
    """graded_kernels reads the modules without importing them: it agrees with the Puzzle they declare."""
    path = puzzle_files(ROOT / "solutions")["08"]
    declared = [k.function for k in load_puzzle(load_module(path)).kernels]
    assert graded_kernels(path.read_text()) == declared
    assert "flash_attention_tensor_cores" in declared


def test_a_drifted_table_is_reported_then_rewritten_keeping_its_header_and_names(tmp_path):
    shutil.copytree(ROOT / "solutions", tmp_path / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "docs" / "zh_CN").mkdir(parents=True)
    drifted = (
        "intro\n\n"
        f"{sync.TABLE_BEGIN}\n\n"
        "| id | puzzle | kernels |\n| --- | --- | --- |\n"
        "| 01 | copying a vector | `copy_serial` |\n"
        "| 08 | matrix | `gemv`, `matmul_naive` |\n"
        "| 11 | gone | `old_kernel` |\n\n"
        f"{sync.TABLE_END}\n\nafter\n"
    )
    for name in sync.KERNEL_TABLES:
        (tmp_path / name).write_text(drifted)
    (tmp_path / "docs" / "learner.md").write_text("a guide without its table\n")
    problems = sync.table_problems(tmp_path)
    assert any(p.startswith("README.md:") and "differs" in p for p in problems), problems
    assert any(p.startswith("docs/learner.md:") and "has no kernel table" in p for p in problems), problems

    written = sync.write_tables(tmp_path)
    assert tmp_path / "README.md" in written and tmp_path / "docs" / "learner.md" not in written
    text = (tmp_path / "README.md").read_text()
    assert text.startswith("intro\n\n") and text.endswith("\nafter\n")
    assert "| id | puzzle | kernels |" in text  # the header as written
    assert "| 01 | copying a vector | `copy_serial`, `copy_threads`, `copy_tiles` |" in text  # the name as written
    assert "`flash_attention_causal` |" in text and "old_kernel" not in text
    assert "| 10 | dequantized matmul | `dequantize_int4`," in text  # a new row: the puzzle's title
    assert "| 10 | 反量化矩阵乘法 |" in (tmp_path / "README.zh-CN.md").read_text()  # translated (grader.po)
    assert [p for p in sync.table_problems(tmp_path) if "differs" in p] == []
    assert sync.write_tables(tmp_path) == []


def test_the_guides_quote_the_notebooks_setup_cell():
    setup = re.findall(r"%load_ext [\w.]+", setup_source("08"))
    assert setup == ["%load_ext grader.nb"]
    quoted = {(page.name, q) for page in PAGES for q in re.findall(r"%load_ext [\w.]+", page.read_text())}
    assert quoted and all(q == setup[0] for _, q in quoted), quoted
