"""Races between the blocks of one launch (grader/pipeline/simulate/races.py): the simulator runs blocks one
after another, so without this a block would see every earlier block's writes, which a GPU does not
promise. Each kernel below is one way learners share global elements between blocks."""

from __future__ import annotations

import pytest
import tilelang
import tilelang.language as T
import torch

from grader.pipeline.simulate import SimulationError, simulate
from grader.pipeline.simulate.races import Race


def run(function, tensors: dict[str, torch.Tensor], reverse_blocks: bool = False, **params):
    tir = function.get_tir(**params).without_attr("tilelang_out_idx")
    simulate(tir, tensors, reverse_blocks=reverse_blocks)
    return tensors


def race_of(function, tensors, reverse_blocks: bool = False, **params) -> tuple[Race, str]:
    with pytest.raises(SimulationError) as caught:
        run(function, tensors, reverse_blocks, **params)
    assert caught.value.race is not None, str(caught.value)
    return caught.value.race, str(caught.value)


@tilelang.jit
def total_by_read_add_store(X, BLOCK: int):
    """Each block adds its tile's sum into Y[0] by reading Y[0], adding, storing: the lost update."""
    N = T.const("N")
    X: T.Tensor((N,), T.float32)
    Y = T.empty((1,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=32) as bx:
        tile = T.alloc_fragment((BLOCK,), T.float32)
        part = T.alloc_fragment((1,), T.float32)
        T.copy(X[bx * BLOCK], tile)
        T.reduce_sum(tile, part, dim=0)
        Y[0] = Y[0] + part[0]
    return Y


def test_a_read_add_store_into_one_element_from_every_block_is_a_race_naming_both_blocks():
    tensors = {"X": torch.ones(64), "Y": torch.zeros(1)}
    race, sentence = race_of(total_by_read_add_store, tensors, N=64, BLOCK=16)
    assert (race.buffer, race.element) == ("Y", (0,))
    assert (race.first, race.did_first, race.second, race.did_second) == ((0,), "store", (1,), "read")
    assert "race on `Y[0]`" in sentence and "block 0 stores to it without an atomic and block 1 reads it" in sentence


def test_the_same_race_is_caught_when_the_blocks_run_last_to_first():
    tensors = {"X": torch.ones(64), "Y": torch.zeros(1)}
    race, _ = race_of(total_by_read_add_store, tensors, reverse_blocks=True, N=64, BLOCK=16)
    assert (race.first, race.second) == ((3,), (2,))


@tilelang.jit
def total_by_atomic_add(X, BLOCK: int):
    N = T.const("N")
    X: T.Tensor((N,), T.float32)
    Y = T.empty((1,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=32) as bx:
        tile = T.alloc_fragment((BLOCK,), T.float32)
        part = T.alloc_fragment((1,), T.float32)
        T.copy(X[bx * BLOCK], tile)
        T.reduce_sum(tile, part, dim=0)
        T.atomic_add(Y[0:1], part)
    return Y


def test_atomic_adds_from_every_block_are_no_race():
    out = run(total_by_atomic_add, {"X": torch.arange(64.0), "Y": torch.zeros(1)}, N=64, BLOCK=16)["Y"]
    assert out.item() == sum(range(64))


@tilelang.jit
def clear_then_atomic_add(X, BLOCK: int):
    """Block 0 clears Y while the others already add into it: a store racing atomic adds."""
    N = T.const("N")
    X: T.Tensor((N,), T.float32)
    Y = T.empty((1,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=32) as bx:
        tile = T.alloc_fragment((BLOCK,), T.float32)
        part = T.alloc_fragment((1,), T.float32)
        if bx == 0:
            Y[0] = 0.0
        T.copy(X[bx * BLOCK], tile)
        T.reduce_sum(tile, part, dim=0)
        T.atomic_add(Y[0:1], part)
    return Y


def test_a_plain_store_in_the_launch_that_adds_atomically_is_a_race():
    race, sentence = race_of(clear_then_atomic_add, {"X": torch.ones(64), "Y": torch.full((1,), 5.0)}, N=64, BLOCK=16)
    assert {race.did_first, race.did_second} == {"store", "add"}, race
    assert "adds to it atomically" in sentence


@tilelang.jit
def shifted_last_tile(X, BLOCK: int):
    """Every tile is whole: the last block moves its tile back to end at N, so it overlaps its neighbour
    and both store the same values there (a right kernel; no race)."""
    N = T.const("N")
    X: T.Tensor((N,), T.float32)
    Y = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=32) as bx:
        start = T.min(bx * BLOCK, N - BLOCK)
        for i in T.Parallel(BLOCK):
            Y[start + i] = X[start + i] * 2.0
    return Y


def test_blocks_storing_the_same_value_to_one_element_are_no_race():
    x = torch.randn(40)
    out = run(shifted_last_tile, {"X": x, "Y": torch.full((40,), float("nan"))}, N=40, BLOCK=16)["Y"]
    assert torch.equal(out, x * 2)


@tilelang.jit
def smooth_in_place(X, BLOCK: int):
    """X[i] = (X[i] + X[i + 1]) / 2 in place, a tile per block: the last element of a tile reads the first
    of the next block's tile, which that block overwrites."""
    N = T.const("N")
    X: T.Tensor((N,), T.float32)
    Y = T.empty((N,), T.float32)  # a copy of the result, as the kernel must return a new tensor
    with T.Kernel(T.ceildiv(N, BLOCK), threads=32) as bx:
        tile = T.alloc_shared((BLOCK + 1,), T.float32)
        T.copy(X[bx * BLOCK], tile)
        for i in T.Parallel(BLOCK):
            X[bx * BLOCK + i] = (tile[i] + tile[i + 1]) * 0.5
            Y[bx * BLOCK + i] = (tile[i] + tile[i + 1]) * 0.5
    return Y


def test_a_block_overwriting_what_a_neighbour_reads_is_a_race():
    race, sentence = race_of(smooth_in_place, {"X": torch.arange(32.0), "Y": torch.zeros(32)}, N=32, BLOCK=8)
    assert race.element == (8,) and race.did_first == "read" and race.did_second == "store", race
    assert "block 0 reads it and block 1 stores to it without an atomic" in sentence


@tilelang.jit
def own_tiles_2d(X, BLOCK: int):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), T.ceildiv(M, BLOCK), threads=32) as (bx, by):
        tile = T.alloc_fragment((BLOCK, BLOCK), T.float32)
        T.copy(X[by * BLOCK, bx * BLOCK], tile)
        for i, j in T.Parallel(BLOCK, BLOCK):
            tile[i, j] = tile[i, j] + 1.0
        T.copy(tile, Y[by * BLOCK, bx * BLOCK])
    return Y


@pytest.mark.parametrize("reverse_blocks", [False, True])
def test_blocks_on_their_own_tiles_give_the_same_result_in_either_order(reverse_blocks: bool):
    x = torch.randn(20, 36)
    tensors = {"X": x, "Y": torch.full((20, 36), float("nan"))}
    out = run(own_tiles_2d, tensors, reverse_blocks, M=20, N=36, BLOCK=8)["Y"]
    assert torch.equal(out, x + 1)


@tilelang.jit
def rows_into_one_row(X, BLOCK: int):
    """2-D grid: every block row copies its tile into row 0 of Y (the row index forgotten)."""
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK), T.ceildiv(M, BLOCK), threads=32) as (bx, by):
        tile = T.alloc_fragment((BLOCK, BLOCK), T.float32)
        T.copy(X[by * BLOCK, bx * BLOCK], tile)
        T.copy(tile, Y[0, bx * BLOCK])
    return Y


def test_a_race_names_the_blocks_by_their_grid_position():
    race, sentence = race_of(
        rows_into_one_row, {"X": torch.randn(16, 16), "Y": torch.zeros(16, 16)}, M=16, N=16, BLOCK=8
    )
    # (blockIdx.x, blockIdx.y), named as the kernel names them: block rows 0 and 1 of block column 0
    assert race.element == (0, 0) and race.first == (0, 0) and race.second == (0, 1), race
    assert "blocks (bx=0,by=0) and (bx=0,by=1) both store to it, different values, without an atomic" in sentence


def test_a_workspace_cleared_in_one_launch_and_added_to_in_the_next_is_no_race():
    from tests.test_simulate import split_row_sums

    a = torch.randn(4, 22)
    run(split_row_sums, {"A": a, "C": torch.full((4, 4), float("nan"))}, M=4, N=22, SPLIT=3, BLOCK=4)


def test_a_race_reads_in_chinese_piece_by_piece(monkeypatch):
    from grader.i18n import tr
    from grader.pipeline.simulate.races import Race

    monkeypatch.setenv("TILELANG_COURSE_LANG", "zh_CN")
    race = Race("C", (16, 0), (0, 0), "store", (0, 1), "read", ("bx", "by"))
    text = tr("simulated on CPU: " + race.sentence())
    assert "在 `C[16, 0]` 上发生竞争：block (bx=0,by=0) 不用原子操作写入它，而 block (bx=0,by=1) 读取它" in text
    assert "T.atomic_add" in text and "race" not in text
