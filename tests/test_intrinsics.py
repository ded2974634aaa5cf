"""Puzzle 08's intrinsics rung (scripts/p08/intrinsics.py): the kernels written with TileLang's Tensor Core
emitters compile for sm_90a without a GPU, each to the instructions it was written for, and the results page
is what its generator makes of the data beside it."""

from __future__ import annotations

import pytest

from scripts.p08 import intrinsics, intrinsics_page

VARIANTS = {variant.name: variant for variant in intrinsics.VARIANTS}


def test_mma_sync_variant_is_ldmatrix_and_mma_sync_on_sm_90a():
    variant = VARIANTS["matmul_mma_sync"]
    source = intrinsics.generated_source(variant)
    assert intrinsics.missing_marks(variant, source) == []
    # the fp16 instruction, accumulating in fp32: m16n8k16, A row-major and B column-major ("false, true")
    assert "tl::DataType::kFloat32, 16, 8, 16, false, true>" in source
    # T.gemm would have chosen wgmma for this tile on Hopper; the emitter keeps the warp-level path
    assert "wgmma" not in source
    lines = intrinsics.instruction_lines(source, variant.expected)
    assert any("ldmatrix_x4_trans" in line for line in lines), "B (K x N) is loaded transposed"


def test_wgmma_variant_reads_both_operands_from_shared_memory():
    variant = VARIANTS["matmul_wgmma"]
    source = intrinsics.generated_source(variant)
    assert intrinsics.missing_marks(variant, source) == []
    # 2 warpgroups of 128 x 128: one m64n128k16 per 64 rows and K step of 16
    assert "64, 128, 16, false, true" in source
    assert "ldmatrix" not in source and "mma_sync" not in source


def test_missing_marks_names_what_is_wrong():
    variant = VARIANTS["matmul_mma_sync"]
    assert intrinsics.missing_marks(variant, "tl::wgmma_ss<") == [
        *(f"no {mark}" for mark in variant.expected),
        "unexpected wgmma",
    ]


@pytest.mark.parametrize("variant", intrinsics.VARIANTS, ids=lambda v: v.name)
def test_variants_keep_matmul_tuned_block(variant):
    for name, value in intrinsics.TUNED_BLOCK.items():
        assert variant.params[name] == value


def test_results_page_is_up_to_date():
    page = intrinsics_page.PAGE.read_text(encoding="utf-8")
    assert page == intrinsics_page.page(), "run python scripts/p08/intrinsics_page.py"
    if not intrinsics_page.DATA.is_file():
        assert "Not yet measured on the H200." in page
