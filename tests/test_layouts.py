"""grader.teaching.layouts, puzzle 08's layout experiment: the bank map and what TileLang 0.1.15's lowering does
with and without T.annotate_layout, as the notebook's prose describes it."""

from __future__ import annotations

from grader.teaching import layouts


def test_row_major_rows_conflict_four_ways_and_both_swizzles_are_conflict_free():
    rows = {r.layout: r for r in layouts.bank_rows(64, 32)}
    assert rows["row_major"].groups == (0, 4, 0, 4, 0, 4, 0, 4) and rows["row_major"].passes == 4
    assert sorted(rows["default"].groups) == list(range(8)) and rows["default"].passes == 1
    assert rows["mma_swizzle"].passes == 1
    text = layouts.bank_table(list(rows.values()))
    assert text.splitlines()[1].startswith("row_major") and text.splitlines()[1].endswith("4")


def test_tilelangs_default_swizzle_and_the_mma_swizzle_place_every_element_alike():
    tile = layouts._tile_layouts(64, 32)
    for row in range(64):
        for col in range(32):
            default = layouts.element_offset(tile["default"], row, col)
            assert default == layouts.element_offset(tile["mma_swizzle"], row, col), (row, col)


def test_the_annotation_changes_the_sm80_addresses_and_wgmma_refuses_it():
    plain = layouts.lower_layout("row_major", "sm_80")
    assert not plain.refused
    assert any("(((int)threadIdx.x) * 8)" in line for line in plain.lines if "A_tile) +" in line)
    swizzled = layouts.lower_layout("mma_swizzle", "sm_80")
    assert any("^" in line for line in swizzled.lines if "A_tile) +" in line)
    refused = layouts.lower_layout("mma_swizzle", "sm_90a")
    assert refused.refused.startswith("Get different layout for A_tile") and not refused.lines
    default = layouts.lower_layout("default", "sm_90a")
    assert any("initialize_wgmma_descriptor<2," in line for line in default.lines)  # A: 64-byte swizzle
