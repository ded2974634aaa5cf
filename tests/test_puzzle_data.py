"""Every puzzle's data follows the module format, and stubs stay in sync with solutions."""

import math

import pytest

from grader.course import sync
from grader.discover import course_root, load_module, load_puzzle, puzzle_files
from grader.spec import Puzzle

ROOT = course_root()
SOLUTIONS = puzzle_files(ROOT / "solutions")


@pytest.fixture(scope="module", params=sorted(SOLUTIONS))
def puzzle(request) -> Puzzle:
    return load_puzzle(load_module(SOLUTIONS[request.param]))


def test_ids_match_file_names(puzzle):
    assert SOLUTIONS[puzzle.id].name.startswith(f"p{puzzle.id}_")


def test_every_kernel_has_enough_cases(puzzle):
    for kernel in puzzle.kernels:
        names = [c.name for c in kernel.cases]
        assert len(names) >= 4, kernel.function
        assert len(set(names)) == len(names), f"{kernel.function}: duplicate case names"
        assert len({c.seed for c in kernel.cases}) == len(kernel.cases), f"{kernel.function}: seeds repeat"
        assert any(c.bench for c in kernel.cases), f"{kernel.function}: no bench case"
        assert any(c.simulate for c in kernel.cases), f"{kernel.function}: no small case for a CPU simulator"


def test_cases_include_tails(puzzle):
    """Some case has a tiled output dimension that is not a multiple of its block."""
    for kernel in puzzle.kernels:
        tails = False
        for case in kernel.cases:
            for out in kernel.outputs:
                for dim, block in zip(out.shape, kernel.tile_sizes(out.name, case.params)):
                    if block and case.sizes[dim] % block:
                        tails = True
        assert tails, f"{kernel.function} has no case with a partial tile"


def test_shapes_name_only_declared_sizes(puzzle):
    for kernel in puzzle.kernels:
        for case in kernel.cases:
            for tensor in kernel.inputs + kernel.outputs:
                assert all(dim in case.sizes for dim in tensor.shape), (kernel.function, case.name, tensor.name)
        names = [t.name for t in kernel.inputs + kernel.outputs]
        assert len(set(names)) == len(names)
        assert kernel.outputs, f"{kernel.function} declares no output"


def test_reference_matches_declared_output_shapes(puzzle):
    import torch

    for kernel in puzzle.kernels:
        case = min(kernel.cases, key=lambda c: math.prod(c.sizes.values()))
        inputs = [torch.randn(t.concrete_shape(case.sizes), dtype=torch.float64) for t in kernel.inputs]
        outputs = kernel.reference(*inputs)
        outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
        assert [tuple(o.shape) for o in outputs] == [t.concrete_shape(case.sizes) for t in kernel.outputs]


def test_stubs_and_solutions_are_in_sync():
    assert sync.check_course(ROOT) == []


def test_sync_check_catches_a_leaked_answer_and_drift(tmp_path):
    solution = SOLUTIONS["08"].read_text()
    stub = (ROOT / "puzzles" / "p08_matrix.py").read_text()
    (tmp_path / "solution.py").write_text(solution)
    (tmp_path / "leaky.py").write_text(stub.replace('raise NotImplementedError("gemv")', "T.clear(acc)"))
    (tmp_path / "drift.py").write_text(stub.replace("THREADS: int = 128", "THREADS: int = 256", 1))
    leaky = sync.check_pair(tmp_path / "leaky.py", tmp_path / "solution.py")
    assert any("holds code" in p for p in leaky)
    assert any("does not raise NotImplementedError" in p for p in leaky)
    assert any("outside TODO regions" in p for p in sync.check_pair(tmp_path / "drift.py", tmp_path / "solution.py"))
    (tmp_path / "renamed.py").write_text(stub.replace("# TODO begin", "# TODO begin: something else,", 1))
    renamed = sync.check_pair(tmp_path / "renamed.py", tmp_path / "solution.py")
    assert [p for p in renamed if "TODO region 1's header" in p], renamed


def test_the_instructors_first_command_makes_a_course_of_every_puzzle(tmp_path):
    """`python -m grader nbgrader-course DIR`, as the README's instructor section starts: all ten puzzles."""
    from grader.nbgrader.course import main as make_course

    assert make_course([str(tmp_path / "course")]) == 0
    made = sorted(p.name for p in (tmp_path / "course" / "source" / "ps1").glob("*.ipynb"))
    assert made == sorted(f"{path.stem}.ipynb" for path in SOLUTIONS.values())


def test_every_known_wrong_kernel_declares_what_it_is_about():
    from tests.corpora import wrong_kernels

    for wrong in wrong_kernels(ROOT):
        assert wrong.puzzle_id in SOLUTIONS, wrong.path
        assert wrong.kernel in {k.function for k in load_puzzle(load_module(SOLUTIONS[wrong.puzzle_id])).kernels}
        assert wrong.caught_by in ("compile", "gpu", "generated_code"), wrong.path
