"""Concept checks: every reference kernel follows its puzzle's lesson; each kernel under tests/concept/
gets the numbers right the wrong way and fails with a sentence saying what the puzzle wants."""

from __future__ import annotations

import pytest

from grader import outcome
from grader.discover import ConceptKernel, concept_kernels, load_module, load_puzzle, puzzle_files
from tests.conftest import ROOT
from tests.inprocess import grade_simulated, spec

CONCEPT_KERNELS = concept_kernels(ROOT)


def test_every_reference_kernel_passes_its_concept_checks_in_every_case():
    for path in puzzle_files(ROOT / "solutions").values():
        module = load_module(path)
        for kernel in load_puzzle(module).kernels:
            for case in kernel.cases:
                tir = getattr(module, kernel.function).get_tir(**case.sizes, **case.params)
                missed = [sentence for concept in kernel.concepts if (sentence := concept.check(tir))]
                assert not missed, (path.name, kernel.function, case.name, missed)


def test_every_puzzle_with_concepts_has_a_kernel_that_breaks_them():
    covered = {(c.puzzle_id, k) for c in CONCEPT_KERNELS for k in c.kernels}
    for puzzle_id in puzzle_files(ROOT / "solutions"):
        declared = [k.function for k in spec(puzzle_id).kernels if k.concepts]
        if declared:
            assert any((puzzle_id, k) in covered for k in declared), (puzzle_id, declared)
    for c in CONCEPT_KERNELS:  # and each declaration names kernels whose puzzle checks a concept
        assert c.wants and c.kernels, c.path
        assert all(spec(c.puzzle_id).kernel(k).concepts for k in c.kernels), c.path


@pytest.mark.parametrize(
    ("concept", "kernel"),
    [(c, k) for c in CONCEPT_KERNELS for k in c.kernels],
    ids=lambda value: value.path.stem if isinstance(value, ConceptKernel) else value,
)
def test_right_numbers_the_wrong_way_fail_with_what_the_puzzle_wants(concept: ConceptKernel, kernel: str):
    first = next(c.name for c in spec(concept.puzzle_id).kernel(kernel).cases if c.simulate)
    (result,) = grade_simulated(concept.puzzle_id, concept.path, kernel, [first])
    assert result.status == outcome.FAILED, result
    assert result.message.startswith("the numbers are right, but the puzzle wants "), result.message
    assert concept.wants in " ".join([result.message, *result.details]), (result.message, result.details)
