"""Puzzle 09 · Convolution: a 1-D convolution five ways, ending on the Tensor Cores.

A 1-D convolution slides a short filter along a signal. It serves audio filters, the token mixers
of speech and state-space models and the temporal layers of video networks. Like torch's ``conv1d``
it is a cross-correlation (the filter is not flipped), with "same" zero padding. The output is
as long as the input, and the signal is taken as zero outside ``[0, L)``.

Inputs and outputs (fp16 in, fp16 out, every sum accumulated in fp32), with ``P = (K - 1) / 2``:

``conv1d_naive``
    ``X`` is a signal of L, ``W`` a filter of K taps. Output ``Y`` of L with
    ``Y[t] = sum_k W[k] * X[t + k - P]``. One block owns BLOCK_L outputs. They need the input
    window ``X[t0 - P, t0 - P + BLOCK_L + K - 1)``: the tile plus a halo of K - 1 elements.
    Copy that window once into shared memory, then add the K shifted products tap by tap.
    (``T.copy`` fills the part outside the signal with zeros, which is exactly the padding.)

``conv1d_channels``
    ``X`` is C_in x L, ``W`` is C_out x C_in x K. Output ``Y`` of C_out x L with
    ``Y[o, t] = sum_c sum_k W[o, c, k] * X[c, t + k - P]``. A block now owns BLOCK_O output
    channels by BLOCK_L positions. For each input channel it loads that channel's window and
    the BLOCK_O x K slice of W. Every output channel reuses the same window. Still on the
    CUDA cores, one multiply-add at a time.

``conv1d_im2col``
    The same convolution as a matrix product. Number the pairs (c, k) as ``r = c * K + k``.
    Then ``Y = W2 @ cols``, where ``W2`` is W seen as C_out x (C_in * K) (``T.reshape``: the
    same memory). ``cols[r, t] = X[c, t + k - P]`` is the "im2col" matrix, each input
    element copied K times. The block walks the input channels BLOCK_C at a time. It copies
    the windows of BLOCK_C channels and the matching BLOCK_O x (BLOCK_C * K) tile of W2 into
    shared memory. From the windows it builds the (BLOCK_C * K) x BLOCK_L tile of cols, in shared
    memory (never in global memory), and multiplies with ``T.gemm``. The copies are
    pipelined (``T.Pipelined``) so the next windows load while this tile multiplies. The
    windows' halo is rounded up from K - 1 to a multiple of 8 elements. Then each row of a window
    in shared memory starts on a 16-byte boundary. Only the W2 tile loads with 16-byte
    asynchronous copies. A window starts P elements before its tile in global memory, and at the
    edges part of it lies outside X. So TileLang loads it with 4-byte copies that each check the
    bounds. ``python -m grader.teaching.experiments`` shows the generated copies (see the notebook).

``conv1d_implicit``
    The same GEMM without the im2col tile: an implicit GEMM. For each tap k the block copies the
    window of BLOCK_C channels shifted by k - P into a shared tile of its own. That window is
    ``X[c0 : c0 + BLOCK_C, t0 + k - P : t0 + k - P + BLOCK_L]``. The K tiles sit in a Python
    list (K is a constant while tracing). The block picks that tap's weights ``W2[:, c * K + k]``
    out of the W2 tile into a fragment. Then it adds ``T.gemm(w_tap, window, acc)``. That makes K
    small GEMMs into one accumulator. Each window is a whole tile of X, but one whose first column
    is shifted. That shift decides how it is copied (see the notebook).

``conv1d_channels_last``
    The implicit GEMM on the channels-last layout. ``X`` is L x C_in and ``W`` is C_out x K x C_in.
    Output ``Y`` of L x C_out with ``Y[t, o] = sum_k sum_c X[t + k - P, c] * W[o, k, c]``. A tap's
    shift now moves the window by whole rows. Take tap k and a tile of BLOCK_C channels. The window
    ``X[t0 + k - P : t0 + k - P + BLOCK_L, c0 : c0 + BLOCK_C]`` is BLOCK_L rows of contiguous
    channels. The tap's weights ``W[o0 : o0 + BLOCK_O, k, c0 : c0 + BLOCK_C]`` are BLOCK_O rows of
    them. Each (tap, channel tile) step copies one of each into shared memory. Then it adds
    ``T.gemm(window, w_tap, acc, transpose_B=True)``. One ``T.Pipelined`` loop runs over the steps.

What it teaches: halos (a tile that reads more input than it writes output) and zero padding for
free from ``T.copy``'s bounds checks. It reuses one input tile for many outputs. And it shows how a
convolution becomes a GEMM so the Tensor Cores can do it. First comes an im2col tile, then an
implicit GEMM without one. Last comes the layout (channels last) where each shifted window is whole rows.

Preconditions: K is odd (so "same" padding is symmetric). ``BLOCK_C * K`` is a multiple of 16
(the fp16 ``T.gemm`` K step), true whenever BLOCK_C is. In ``conv1d_implicit`` and
``conv1d_channels_last`` the ``T.gemm`` is BLOCK_C deep, so BLOCK_C itself must be. L > BLOCK_L,
so the grid has at least two blocks along L (see the note below). C_in, C_out and L are otherwise
anything. A partial channel block reads zeros for the missing channels from both X and W2. In
``conv1d_channels_last`` it reads them from X and W, whose copies are 16 bytes wide when C_in is a
multiple of 8.

TileLang note, negative indices: TileLang reads an index it can prove negative the Python way,
counted back from the end (``X[-3]`` is ``X[L - 3]``). This happens before ``T.copy``'s bounds
checks see it. The first window starts at ``bx * BLOCK_L - P``. With two or more blocks along L
this is negative only for some blocks, so nothing can be proved. Then ``T.copy`` zero-fills the
part before 0 as it should. With a single block, bx is 0 and the start is the constant -P. The
window would then silently be read from the far end of the signal.
"""

# %% [markdown]
# ## Why this puzzle matters
#
# A convolution is a small filter applied at every position of a signal: audio front ends, the short
# token-mixing convolutions of speech and state-space models, the temporal layers of video networks.
# Two ideas carry over to every stencil-like kernel:
#
# - **halos**: to produce BLOCK_L outputs a block needs BLOCK_L + K - 1 inputs, a tile plus K - 1
#   neighbours it shares with the blocks beside it;
# - **lowering to GEMM**: rearranged (im2col), a convolution *is* a matrix product, and then it runs
#   on the Tensor Cores of puzzle 08. The "implicit GEMM" convolutions of cuDNN and CUTLASS build
#   these tiles on the fly, as the last two kernels here do.
#
# As torch's `conv1d`, the operation is a cross-correlation (the filter is not flipped) with "same"
# padding: `Y[t] = sum_k W[k] X[t + k - P]`, P = (K - 1) / 2, and X read as 0 outside `[0, L)`.

# %%
from __future__ import annotations

import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout  # noqa: F401 (conv1d_channels_last's output tile)

from grader.concepts import gemm_operand_copied, pipelined, uses_tile_op
from grader.spec import Case, Kernel, Puzzle, Tensor, tensor_bytes

# ---------------------------------------------------------------- references (run on float64)


def conv1d_reference(X, W):
    import torch.nn.functional as F

    K = W.shape[-1]
    return F.conv1d(X[None, None], W[None, None], padding=(K - 1) // 2)[0, 0]


def conv1d_channels_reference(X, W):
    import torch.nn.functional as F

    K = W.shape[-1]
    return F.conv1d(X[None], W, padding=(K - 1) // 2)[0]


def conv1d_channels_last_reference(X, W):
    """X is L x C_in, W is C_out x K x C_in; Y is L x C_out. The same convolution as
    conv1d_channels_reference, on the tensors seen channels-first."""
    import torch.nn.functional as F

    K = W.shape[1]
    return F.conv1d(X.T[None], W.permute(0, 2, 1), padding=(K - 1) // 2)[0].T


def torch_conv1d(X, W):
    """What --bench times against: torch's conv1d (cuDNN) at fp16."""
    import torch.nn.functional as F

    return F.conv1d(X[None, None], W[None, None], padding=(W.shape[-1] - 1) // 2)[0, 0]


def torch_conv1d_channels(X, W):
    """What --bench times against: torch's conv1d (cuDNN) at fp16, one batch."""
    import torch.nn.functional as F

    return F.conv1d(X[None], W, padding=(W.shape[-1] - 1) // 2)[0]


def torch_conv1d_channels_last(X, W):
    """What --bench times against: torch's convolution (cuDNN) at fp16 on the same channels-last layout.
    torch's conv1d makes a channels-last input contiguous (a transpose) before it runs, so this is conv2d
    on a one-row image: X seen as 1 x C_in x 1 x L and W as C_out x C_in x 1 x K are views of the same
    memory in torch's ``channels_last`` format (no copy), and so is the output, L x C_out."""
    import torch.nn.functional as F

    x = X.T[None, :, None, :]  # N, C, H, W = 1, C_in, 1, L; channels_last: C is the contiguous axis
    w = W.permute(0, 2, 1)[:, :, None, :]  # C_out, C_in, 1, K; channels_last as well
    return F.conv2d(x, w, padding=(0, (W.shape[1] - 1) // 2))[0, :, 0, :].T


# -------------------------------------------------------------------------------- kernels


# %% [markdown]
# ## Kernel 1: `conv1d_naive`, a window with a halo
#
# One block owns outputs `t0 .. t0 + BLOCK_L - 1` and needs inputs from `t0 - P` to
# `t0 + BLOCK_L - 1 + P`. Copy that window into shared memory once (`T.alloc_shared`). Every thread
# reads K neighbouring elements of it, elements other threads loaded. Copy the K taps too. Then add the
# K shifted products tap by tap into an fp32 fragment: `acc[i] += window[i + k] * taps[k]`.
#
# The zero padding is free: `T.copy` fills the part of the window before 0 or past L with zeros,
# exactly the "same" padding.
#
# Store the outputs from the fp32 fragment, `T.copy(acc, Y[...])`, or from an fp16 fragment. Do not
# convert them into an fp16 shared tile and `T.copy` that to Y. On Hopper TileLang makes that 1-D
# store a TMA store, which writes on to the next 16-byte boundary past Y's end. Puzzle 01's "Who
# guards the edge" says more.
#
# What to watch for: fp32 accumulation (the `fir_100000_k1001` case sums 1001 terms). There is also a
# TileLang trap, described in the spec. A start index that TileLang can *prove* negative is read
# Python-style from the end of the tensor. With two or more blocks along L the window start
# `bx * BLOCK_L - P` is negative only for block 0. Nothing can be proved, so `T.copy` zero-fills as it
# should.


# %% conv1d_naive
@tilelang.jit
def conv1d_naive(X, W, BLOCK_L: int, THREADS: int = 128):
    L, K = T.const("L, K")
    X: T.Tensor((L,), T.float16)
    W: T.Tensor((K,), T.float16)
    Y = T.empty((L,), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), threads=THREADS) as bx:
        # TODO begin: one block computes BLOCK_L outputs from one shared window of the input
        # One block computes BLOCK_L consecutive outputs. Load once, into shared memory, the stretch
        # of X that those outputs read (their positions plus the taps' reach on both sides) with a
        # single T.copy, whose zeros outside the signal are exactly the padding; load the K taps
        # too. Then accumulate in a cleared float32 fragment, one tap at a time in a T.serial loop,
        # with a T.Parallel update of every output.
        raise NotImplementedError("conv1d_naive")
        # TODO end

    return Y


# %% [markdown]
# ## Kernel 2: `conv1d_channels`: many channels, one window reused
#
# Now X has C_in channels and W holds a filter per (output channel, input channel):
#
# $$Y_{o,t} = \sum_{c}\sum_{k} W_{o,c,k}\, X_{c,\,t+k-P}$$
#
# A block owns BLOCK_O output channels x BLOCK_L positions. For each input channel it loads that
# channel's window and the BLOCK_O x K slice of W. All BLOCK_O output channels reuse the same window.
# So each input element is loaded once per block instead of once per output channel. Still one
# multiply-add at a time on the CUDA cores, C_in·K of them per output.
#
# Give `T.copy` the taps as a slice on every axis of W, `W[o0 : o0 + BLOCK_O, c, 0:K]`. Given only
# their first element, `W[o0, c, 0]`, it fits the 2-D tile to W's last two axes (input channel, tap).
# It then fills the tile with the taps of BLOCK_O input channels of output channel `o0`: the right
# shape, the wrong numbers.


# %% conv1d_channels
@tilelang.jit
def conv1d_channels(X, W, BLOCK_O: int, BLOCK_L: int, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        # TODO begin: one block computes BLOCK_O channels x BLOCK_L positions, one input channel at a time
        # Now many input and output channels: one block computes BLOCK_O output channels at BLOCK_L
        # positions, adding up the input channels one at a time in a T.serial loop. For each input
        # channel, copy its window of X and the block's taps of that channel into shared memory; one
        # window serves all BLOCK_O output channels. Accumulate in a cleared float32 (BLOCK_O,
        # BLOCK_L) fragment.
        raise NotImplementedError("conv1d_channels")
        # TODO end

    return Y


# %% [markdown]
# ## Kernel 3: `conv1d_im2col`, the convolution as a GEMM
#
# Number the pairs (c, k) as `r = c * K + k`. Then the double sum is one sum over r, a matrix product
#
# $$Y = W_2 \cdot \mathrm{cols}, \qquad W_2[o, r] = W[o, c, k], \qquad \mathrm{cols}[r, t] = X[c,\, t + k - P]$$
#
# with `W2` just W seen as C_out x (C_in·K) (`T.reshape`, the same memory). `cols` is the *im2col*
# matrix: each input element copied K times, once per tap that reads it. The picture shows `cols` for
# 2 channels, K = 3 and L = 8: row (c, k) is channel c shifted by k - P, zeros where the shift runs
# off the signal.

# %% [notebook]
# from grader.teaching.pictures import im2col
#
# im2col(2, 3, 8)

# %% [markdown]
# The kernel never writes `cols` to global memory, which would multiply the input traffic by K. The
# block walks the input channels BLOCK_C at a time. It copies the windows of BLOCK_C channels and the
# matching BLOCK_O x (BLOCK_C·K) tile of W2 into shared memory. A `T.Parallel` loop builds the
# (BLOCK_C·K) x BLOCK_L tile of `cols` from the windows, in shared memory. Then the block multiplies
# with `T.gemm`. The loop is `T.Pipelined`, so the next windows load while this tile multiplies
# (puzzle 08).
#
# What to watch for: BLOCK_C·K must be a multiple of 16 (the fp16 `T.gemm` K step). A partial block
# of channels reads zeros for the missing channels from both X and W2, so it adds nothing. The
# windows' halo is rounded up from K - 1 to a multiple of 8 elements, so each window row starts on a
# 16-byte boundary in shared memory.
#
# How do the tiles travel from global memory? `cp.async` copies 4, 8 or 16 bytes at a time, and a
# wide copy needs both ends aligned to its width. A row of the W2 tile starts on a 16-byte boundary in
# global memory. A window starts P elements before its tile, and at the signal's edges part of it
# lies outside X. Predict: which width will TileLang pick for the W2 tile, and which for the windows?
# The cell below lowers the reference kernel for sm_90a (no GPU) and lists the copies it generates.

# %% [notebook]
# import re
#
# from grader.teaching.experiments import kernel_source
# from solutions.p09_conv1d import conv1d_im2col as reference_im2col
#
# # The reference kernel at the bench case's sizes, lowered for sm_90a with its own pass configs.
# cuda = kernel_source(
#     reference_im2col, C_in=256, L=1 << 17, C_out=256, K=5, BLOCK_O=128, BLOCK_L=128, BLOCK_C=32, STAGES=3
# )
# for copy in sorted(set(re.findall(r"cp_async_gs\w*<\d+>", cuda))):
#     print(copy, "(bytes per copy)")

# %% [measured]
# Two widths: the W2 tile loads with 16-byte copies, the windows with 4-byte copies, each checking
# the bounds, since a window is neither 16-byte aligned in global memory nor always inside X. On the
# H200 this kernel runs at 0.47x cuDNN (0.45x in a second run; docs/results/h200-bench.md). Its
# profile (docs/results/h200-profiles.md) points at shared memory more than at these copies: the
# Tensor Cores are busy 16% of the time, and the most common stall (46%) is a wait on shared memory,
# where the block builds the im2col tile, K copies of every window element. The next kernel removes
# that tile.


# %% conv1d_im2col
# Warp specialization off: its build with TMA copies stops with "illegal instruction" on Hopper
# (docs/results/p09-p10-notes.md); without it the copies are cp.async and the kernel is correct.
@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def conv1d_im2col(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        # TODO begin: build the im2col tile in shared memory and multiply it with T.gemm
        # Turn the convolution into a matrix multiply so T.gemm can do it on the Tensor Cores: view
        # W as a matrix with one column per (input channel, tap) pair (T.reshape), and for each
        # block of BLOCK_C input channels build in shared memory the im2col tile, whose row for
        # (channel, tap) holds that channel's inputs shifted by the tap. Then T.gemm of the weight
        # tile and the im2col tile adds into a float32 accumulator, in a T.Pipelined loop over the
        # channel blocks.
        raise NotImplementedError("conv1d_im2col")
        # TODO end

    return Y


# %% [markdown]
# ## Kernel 4: `conv1d_implicit`, an implicit GEMM
#
# The im2col tile is a detour. The block writes K copies of every window element into shared memory and
# reads them back. All that only hands the Tensor Cores a matrix whose rows are shifted copies of one
# another. Split the GEMM's sum over r = (c, k) by tap instead:
#
# $$Y = \sum_{k=0}^{K-1} W_{:,:,k} \cdot S_{k-P}X, \qquad (S_{s}X)[c, t] = X[c,\, t + s]$$
#
# K small GEMMs, each the BLOCK_O x BLOCK_C weights of one tap times the BLOCK_C x BLOCK_L window of X
# shifted by that tap. They are all added into the same fp32 accumulator. This is an *implicit* GEMM:
# the same products as `conv1d_im2col`, but the im2col matrix is never built, in global or in shared
# memory. Per step of BLOCK_C channels the block copies the W2 tile once. For each tap k it copies the
# window `X[c0 : c0 + BLOCK_C, t0 + k - P : t0 + k - P + BLOCK_L]` into a shared tile of its own.
# Then, tap by tap, it picks that tap's columns `W2[:, c * K + k]` out of the W2 tile into a register
# fragment. And it calls `T.gemm(w_tap, window, acc)`.
#
# The K shared tiles are a Python list, `[T.alloc_shared(...) for _ in range(K)]`, and the taps loop
# over that list, `for k, window in enumerate(windows)`. This works because K is a constant when the
# kernel is traced (`T.const` makes each size a Python int). The list has K tiles, and the loop over it
# is plain Python that runs while tracing. So the kernel gets K copies and K `T.gemm` calls, each on
# its own tile. Write `for k in range(K)` instead and TileLang's frontend turns it into a `T.serial`
# loop. Then k is a loop variable, which cannot index a Python list (a `TypeError` at that line).
#
# What the shifted copy buys: each window is an ordinary tile of X whose columns start k - P from the
# block's. It lands at the start of its own tile, ready for the Tensor Cores. There is no halo, and no
# gather from shared memory into shared memory. What it costs depends on how the copy is built. On
# Hopper a TMA box may start at any column. But TileLang issues TMA copies only in its warp-specialized
# build, and that build of this kernel stops with "illegal instruction" on Hopper
# (docs/results/p09-p10-notes.md).
# So the kernel is compiled with warp specialization off, as `conv1d_im2col` is, and its copies are
# `cp.async`, whose width depends on alignment. A row of X starts on a 16-byte boundary; at K = 5 the
# windows are shifted by -2, -1, 0, 1 and 2 columns of 2 bytes each.
#
# Predict: which width does each window's copy get, and does any window miss `cp.async` (at least 4
# bytes) altogether? Then: with the im2col tile gone, is this kernel faster than `conv1d_im2col` on
# the H200? The cell below lowers the reference kernel at the bench case for sm_90a (no GPU) and says
# how each tile is copied.

# %% [notebook]
# import re
#
# from grader.teaching.experiments import kernel_source
# from solutions.p09_conv1d import conv1d_implicit as reference_implicit
#
# # The reference kernel at the bench case's sizes and block, lowered for sm_90a (no compile, no GPU).
# cuda = kernel_source(
#     reference_implicit, C_in=256, L=1 << 17, C_out=256, K=5, BLOCK_O=128, BLOCK_L=128, BLOCK_C=16, STAGES=3
# )
# for tile in sorted(set(re.findall(r"void\* (w_tile|window\w*) =", cuda))):
#     copies = sorted(set(re.findall(rf"(cp_async_gs\w*<\d+>)\(\(&\(\(\(half_t\*\){tile}\)", cuda)))
#     plain = re.search(rf"\(\(half_t\*\){tile}\)\[[^;]*\] = ", cuda)
#     print(f"{tile:9}", ", ".join(copies) or ("plain loads and stores, one element each" if plain else "?"))
# print("TMA loads:", cuda.count("tma_load("), "| T.gemm with A from registers (wgmma_rs):", "wgmma_rs" in cuda)

# %% [measured]
# The unshifted window moves in 16-byte copies, the windows shifted by 2 columns (4 bytes) in 4-byte
# copies, and the ones shifted by 1 column (2 bytes, below `cp.async`'s minimum) element by element,
# with plain loads and stores that do not overlap with the Tensor Cores. On the H200 the kernel takes
# 0.6009 ms at the bench case, 0.43x cuDNN, against `conv1d_im2col`'s 0.45x in the same run
# (docs/results/h200-bench.md): no faster. The wait has moved (docs/results/h200-profiles.md): the
# most common stall is now on global memory (38%), and 25% of the shared-memory accesses are replayed
# for bank conflicts.
#
# So the implicit GEMM removes the im2col tile and its K-fold copy in shared memory, and the time stays
# where it was. The windows' copies, two of five element by element, are the likely limit now: the
# global-memory stalls point at them, though no experiment has isolated them yet. What would
# help is a copy of X that stays 16-byte aligned whatever the shift, with the shift applied on the
# way to the Tensor Cores; TileLang's `T.gemm` takes a shared operand only from the start of an
# aligned tile, which is why `conv1d_im2col` builds its shifted copies in shared memory instead.

# %% [markdown]
# What to watch for: the shift of tap k is k - P, not k. The pick is column c * K + k of the W2 tile
# (c the channel within the step). BLOCK_C is now the `T.gemm`'s K step, so it must be a multiple of 16.


# %% conv1d_implicit
# Warp specialization off, as for conv1d_im2col: its build with TMA copies stops with "illegal
# instruction" on Hopper (docs/results/p09-p10-notes.md); without it the kernel is correct.
@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def conv1d_implicit(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        # TODO begin: one T.gemm per tap, of the tap's weights and a window of X shifted by the tap
        # Skip the im2col tile. For each block of BLOCK_C input channels, copy the block's weight tile
        # once and, for each tap, the window of X shifted by that tap into a shared tile of its own (a
        # Python list of K tiles, filled in a Python loop over the taps: K is a constant). Then, tap by
        # tap, pick that tap's weights out of the weight tile into a float16 fragment and T.gemm them
        # with the tap's window, all into one float32 accumulator, in a T.Pipelined loop over the
        # channel blocks.
        raise NotImplementedError("conv1d_implicit")
        # TODO end

    return Y


# %% [markdown]
# ## Kernel 5: `conv1d_channels_last`, windows of whole rows
#
# **Five things change from `conv1d_implicit`, not one.** The sums and the fp32 accumulator stay.
#
# - **The layout**: which axis of each tensor is contiguous in memory (below).
# - **The loop**: one pipelined step per (tap, channel tile), not K taps inside each channel step.
# - **The weights' place**: shared memory, not a register fragment, so the MMA is `wgmma_ss`, not
#   `wgmma_rs`.
# - **`transpose_B=True`**: both tiles hold the channels along their rows.
# - **`matmul_tuned`'s build**: its tile in the bench case (128 positions x all 256 output channels,
#   two math warpgroups, 64 channels a step instead of 16), its store staged through shared memory, and
#   warp specialization left on by the decorator, so that a producer warpgroup issues the copies.
#
# So a timing against `conv1d_implicit` measures the five together, not the layout alone.
#
# The layout first. X becomes L x C_in, one row per position with its channels side by side ("channels
# last", torch's `channels_last`, cuDNN's NHWC). The output Y becomes L x C_out. Then the next layer
# can read it the same way, and the accumulator, positions by output channels, is stored as it is. And
# W becomes C_out x K x C_in:
#
# $$Y_{t,o} = \sum_{k}\sum_{c} X_{t+k-P,\,c}\, W_{o,k,c}, \qquad Y = \sum_{k=0}^{K-1} (S_{k-P}X)\, W_{:,k,:}^{T}$$
#
# Shifting by a tap now moves the window by whole rows, not by elements. For each tap k and each tile
# of BLOCK_C channels the window is `X[t0 + k - P : t0 + k - P + BLOCK_L, c0 : c0 + BLOCK_C]`:
# BLOCK_L rows, each BLOCK_C contiguous channels. Every such row starts on a 16-byte boundary whenever
# C_in is a multiple of 8, whatever the shift, so `T.copy` can move every window in 16-byte pieces. In
# `conv1d_implicit` the shift ran along the contiguous axis, by 2 bytes per column, and decided the
# width of each window's copy.
#
# Why W as C_out x K x C_in: the tap's weights for this step,
# `W[o0 : o0 + BLOCK_O, k, c0 : c0 + BLOCK_C]`, are then BLOCK_O rows of BLOCK_C contiguous channels,
# whole 16-byte pieces as well. It is also the order of torch's `channels_last` weights (output
# channel, tap, input channel), so the baseline below reads the same bytes as the kernel, with no
# reordering. Both tiles hold the channels, the sum's index, along their rows, so the product is
# `window @ w_tap^T`: `T.gemm(window, w_tap, acc, transpose_B=True)`, as puzzle 08's flash attention
# multiplies Q by the K tile. K x C_in x C_out would give whole rows too, BLOCK_C rows of BLOCK_O
# outputs, and no transpose. But torch would then reorder W on every call of the baseline.
#
# One step is now one (tap, channel tile) pair: one window, one weight tile, one `T.gemm`. A single
# `T.Pipelined` loop runs over the K·⌈C_in / BLOCK_C⌉ steps, tap `s // STEPS` and channel tile
# `s % STEPS` at step s. So each stage holds one window and one weight tile. The next steps' copies
# load while this one multiplies. The block owns BLOCK_L positions x BLOCK_O output channels; its
# fp32 accumulator is BLOCK_L x BLOCK_O, stored after the loop through a shared tile, `Y_tile`, as
# `matmul_tuned` stores C. That tile gets a swizzled layout,
# `T.annotate_layout({Y_tile: make_swizzled_layout(Y_tile)})`: at the bench block its rows are 512
# bytes, so unswizzled, the 16-byte rows one `stmatrix` writes at once would all fall in the same four
# banks, 8 ways over (`--profile --static` shows it).
#
# Predict: how will each window and each weight tile be copied now, and does any copy fall back to plain
# loads? Then: against `conv1d_implicit` at the same sizes (the bench cases are the same work, 86
# GFLOP), should this kernel be faster, and how close to cuDNN given the same layout? The cell below
# lowers the reference kernel at the bench case for sm_90a (no GPU) and lists its copies, its store and
# its MMA.

# %% [notebook]
# import re
#
# from grader.teaching.experiments import kernel_source
# from solutions.p09_conv1d import conv1d_channels_last as reference_channels_last
#
# # The reference kernel at the bench case's sizes and block, lowered for sm_90a (no compile, no GPU).
# sizes = dict(C_in=256, L=1 << 17, C_out=256, K=5)
# cuda = kernel_source(reference_channels_last, **sizes, BLOCK_O=256, BLOCK_L=128, BLOCK_C=64, STAGES=3, THREADS=256)
# for tile in ("window", "w_tap"):
#     ways = ["TMA"] if re.search(rf"tma_load\([^;]*\(half_t\*\){tile}\)", cuda) else []
#     ways += sorted(set(re.findall(rf"(cp_async_gs\w*<\d+>)\(\(&\(\(\(half_t\*\){tile}\)", cuda)))
#     plain = re.search(rf"\(\(half_t\*\){tile}\)\[[^;]*\] = ", cuda)
#     print(f"{tile:7}", ", ".join(ways), "| plain loads and stores too" if plain else "| no plain loads and stores")
# print("Y_tile  written by", sorted(set(re.findall(r"(ptx_stmatrix\w*)\(\(&\(\(\(half_t\*\)Y_tile", cuda))))
# print("        stored by", "TMA" if "tma_store" in cuda else "plain stores")
# print("MMA:", sorted(set(re.findall(r"\b(wgmma_\w+?|mma_sync\w*)<", cuda))))
# print("threads a block:", re.search(r"__launch_bounds__\((\d+)", cuda)[1])

# %% [measured]
# Each window and each weight tile is one TMA copy a step, issued by the producer warpgroup (384
# threads a block: the two math warpgroups of THREADS = 256 and TileLang's producer). The window's box
# starts at row `t0 + k - P`, negative for the first block's first taps, and TMA fills the rows outside
# X with zeros: the padding. The accumulator goes into `Y_tile` by `stmatrix` and leaves by TMA
# stores; the MMA is `wgmma` with both operands in shared memory. So, as predicted from the layout, no
# tile is copied element by element. (The 16-byte rows are what allows TMA: a tensor's strides must be
# multiples of 16 bytes, so at C_in = 20, 40 bytes a row, the copies fall back to 8-byte `cp.async`.)
#
# The prediction was: faster than `conv1d_implicit` at the same work, since every window now moves in
# whole-tile copies that overlap the Tensor Cores, and the per-tap pick of the weights into registers
# is gone. The compiler's side of it (`python -m grader 09 --solutions --profile conv1d_channels_last
# --static`, no GPU): 168 registers a thread and 148 KB of shared memory a block, one block an SM, as
# for `conv1d_implicit` (241 registers, 120 KiB).
#
# On the H200 (docs/results/h200-bench-2026-12-03.md, `large_256_131072_k5`), this kernel's first
# version (128 x 128 tiles, one math warpgroup, no staged store, warp specialization off) took 0.2179
# ms, 394.2 TFLOP/s, against 0.6007 ms for `conv1d_implicit`; cuDNN at the same layout took 0.1464 ms,
# so it reached 0.67x. On H100s (docs/results/p09-channels-last-tuning.md) each part of `matmul_tuned`'s
# build was timed against that version: warp specialization is most of the gain, the swizzled output
# tile takes it from 0.82-0.87x to 0.88-0.95x cuDNN, and the kernel as written here runs at 0.89-0.91x
# cuDNN, 547.4 TFLOP/s. Closer, and still short of the field's best.

# %% [markdown]
# What to watch for: copy the weight tile with slices written out,
# `W[o0 : o0 + BLOCK_O, k, c0 : c0 + BLOCK_C]`. Given only a corner, `W[o0, k, c0]`, `T.copy` fits a 2-D
# tile to the last two axes of W, so it would read BLOCK_O taps of one output channel. The window's
# first row is `t0 + k - P`, negative for the first block's first taps, which `T.copy` fills with
# zeros, as before. STEPS counts the partial channel tile too (`T.ceildiv`): its missing channels read
# zeros from X and W. BLOCK_C is the `T.gemm`'s K step, a multiple of 16.
#
# The layout is the caller's choice, and it is not free where the data arrive channels-first. Turning
# X from C_in x L into L x C_in is one more read and write of all of X. Networks that use it choose it
# once, for every layer, as torch's `channels_last` memory format does.


# %% conv1d_channels_last
# Warp specialization on, unlike its siblings: one warpgroup issues the TMA copies, the others multiply, as in
# matmul_tuned. Its builds pass every case on an H100 (docs/results/p09-channels-last-tuning.md); the
# siblings' stop with "illegal instruction" on Hopper (docs/results/p09-p10-notes.md).
@tilelang.jit
def conv1d_channels_last(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((L, C_in), T.float16)
    W: T.Tensor((C_out, K, C_in), T.float16)
    Y = T.empty((L, C_out), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        # TODO begin: one T.gemm per (tap, channel tile), of a window of whole rows and the tap's weights
        # Same implicit GEMM, new layout: X is one row of channels per position, so a window shifted by
        # a tap is whole rows of X. Walk the (tap, channel tile) pairs in one T.Pipelined loop; at each
        # step copy the window of BLOCK_L rows and BLOCK_C channels and that tap's BLOCK_O x BLOCK_C
        # weights into shared memory, and T.gemm them into a float32 (BLOCK_L, BLOCK_O) accumulator.
        # Store it as matmul_tuned stores C, through a shared tile, here with a swizzled layout
        # (T.annotate_layout with make_swizzled_layout).
        raise NotImplementedError("conv1d_channels_last")
        # TODO end

    return Y


# %% cases
# ---------------------------------------------------------------------------------- cases

_X1 = Tensor("X", ("L",), "float16")
_W1 = Tensor("W", ("K",), "float16")
_Y1 = Tensor("Y", ("L",), "float16")
_X = Tensor("X", ("C_in", "L"), "float16")
_W = Tensor("W", ("C_out", "C_in", "K"), "float16")
_Y = Tensor("Y", ("C_out", "L"), "float16")
_X_LAST = Tensor("X", ("L", "C_in"), "float16")
_W_LAST = Tensor("W", ("C_out", "K", "C_in"), "float16")
_Y_LAST = Tensor("Y", ("L", "C_out"), "float16")


def _conv_flops(s):
    return 2.0 * s["C_out"] * s["C_in"] * s["K"] * s["L"]


def _sizes(c_in, c_out, length, taps):
    return {"C_in": c_in, "L": length, "C_out": c_out, "K": taps}


def puzzle() -> Puzzle:
    naive = {"BLOCK_L": 256}
    channels = {"BLOCK_O": 32, "BLOCK_L": 128}
    im2col = {"BLOCK_O": 64, "BLOCK_L": 64, "BLOCK_C": 16, "STAGES": 2}
    implicit = {"BLOCK_O": 32, "BLOCK_L": 64, "BLOCK_C": 16, "STAGES": 2}
    channels_last = {"BLOCK_O": 32, "BLOCK_L": 64, "BLOCK_C": 16, "STAGES": 2}
    channel_io = dict(
        inputs=(_X, _W),
        outputs=(_Y,),
        reference=conv1d_channels_reference,
        baseline=torch_conv1d_channels,
        flops=_conv_flops,
        bytes_moved=lambda s: tensor_bytes((_X, _W, _Y), s),
        tiles={"Y": ("BLOCK_O", "BLOCK_L")},
    )
    return Puzzle(
        id="09",
        title="Convolution",
        kernels=(
            Kernel(
                function="conv1d_naive",
                title="One channel: a window with a halo, K taps",
                inputs=(_X1, _W1),
                outputs=(_Y1,),
                reference=conv1d_reference,
                baseline=torch_conv1d,
                flops=lambda s: 2.0 * s["L"] * s["K"],
                bytes_moved=lambda s: tensor_bytes((_X1, _W1, _Y1), s),
                tiles={"Y": ("BLOCK_L",)},
                cases=(
                    Case("tail_1000_k3", {"L": 1000, "K": 3}, naive, seed=9101, simulate=True),
                    # The window (62 inputs) is wider than the signal: padding on both sides.
                    Case("short_37_k31", {"L": 37, "K": 31}, {"BLOCK_L": 32}, seed=9102, simulate=True),
                    Case("odd_4099_k7", {"L": 4099, "K": 7}, naive, seed=9103, simulate=True),
                    # A long FIR filter: 1001-term sums, which an fp16 accumulator cannot keep.
                    Case("fir_100000_k1001", {"L": 100000, "K": 1001}, naive, seed=9104),
                    # The same lesson at a size the CPU simulator runs in about a second (two wide
                    # blocks: the simulator's cost is per block and tap).
                    Case("fir_2000_k501", {"L": 2000, "K": 501}, {"BLOCK_L": 1024}, seed=9106, simulate=True),
                    Case(
                        "large_2e24_k31",
                        {"L": 1 << 24, "K": 31},
                        {"BLOCK_L": 1024, "THREADS": 256},
                        seed=9105,
                        bench=True,
                    ),
                ),
            ),
            Kernel(
                function="conv1d_channels",
                title="Many channels on the CUDA cores: one window, BLOCK_O filters",
                cases=(
                    Case("small_4to8_256_k3", _sizes(4, 8, 256, 3), channels, seed=9201, simulate=True),
                    Case(
                        "odd_3to5_37_k9",
                        _sizes(3, 5, 37, 9),
                        {"BLOCK_O": 32, "BLOCK_L": 32},
                        seed=9202,
                        simulate=True,
                    ),
                    Case("tail_16to40_1000_k5", _sizes(16, 40, 1000, 5), channels, seed=9203),
                    # 200 channels x 7 taps: 1400-term sums.
                    Case("deep_200to24_700_k7", _sizes(200, 24, 700, 7), channels, seed=9204),
                    # BLOCK_O != BLOCK_L, a tail in C_out and L and several tiles of each: swapped
                    # tile offsets fail on the CPU too
                    Case(
                        "rect_3to40_300_k5",
                        _sizes(3, 40, 300, 5),
                        {"BLOCK_O": 16, "BLOCK_L": 64},
                        seed=9206,
                        simulate=True,
                    ),
                    Case(
                        "large_128_65536_k5",
                        _sizes(128, 128, 65536, 5),
                        {"BLOCK_O": 64, "BLOCK_L": 256, "THREADS": 256},
                        seed=9205,
                        bench=True,
                    ),
                ),
                **channel_io,
            ),
            Kernel(
                function="conv1d_im2col",
                concepts=(
                    uses_tile_op(
                        "tl.tileop.gemm", "the W2 tile times the im2col tile computed with T.gemm (the Tensor Cores)"
                    ),
                ),
                title="im2col in shared memory and T.gemm on the Tensor Cores",
                cases=(
                    Case("small_20to24_300_k3", _sizes(20, 24, 300, 3), im2col, seed=9301, simulate=True),
                    Case(
                        "odd_3to5_37_k9",
                        _sizes(3, 5, 37, 9),
                        {"BLOCK_O": 64, "BLOCK_L": 32, "BLOCK_C": 16, "STAGES": 2},
                        seed=9302,
                        simulate=True,
                    ),
                    Case("tail_40to72_1000_k5", _sizes(40, 72, 1000, 5), im2col, seed=9303),
                    # 300 channels x 7 taps: 2100-term sums.
                    Case("deep_300to64_999_k7", _sizes(300, 64, 999, 7), im2col, seed=9304, simulate=True),
                    # BLOCK_O != BLOCK_L, a tail in C_in, C_out and L
                    Case(
                        "rect_40to72_150_k5",
                        _sizes(40, 72, 150, 5),
                        {"BLOCK_O": 32, "BLOCK_L": 64, "BLOCK_C": 16, "STAGES": 2},
                        seed=9306,
                        simulate=True,
                    ),
                    # 86 GFLOP: W2 is 256 x 1280, cols 1280 x 131072. 128 x 128 output tiles,
                    # 32 channels (160 im2col rows) per step: the best of a sweep on the H200.
                    Case(
                        "large_256_131072_k5",
                        _sizes(256, 256, 1 << 17, 5),
                        {"BLOCK_O": 128, "BLOCK_L": 128, "BLOCK_C": 32, "STAGES": 3, "THREADS": 128},
                        seed=9305,
                        bench=True,
                        # 185.5 KiB on Hopper; 137 on an A100, 92 on RTX 30xx/40xx and L4, 48 on a T4
                        for_gpus={
                            "sm_80": {"STAGES": 2},
                            "sm_86 sm_89": {"BLOCK_C": 16},
                            "sm_75": {"BLOCK_O": 64, "BLOCK_C": 16, "STAGES": 2},
                        },
                    ),
                ),
                **channel_io,
            ),
            Kernel(
                function="conv1d_implicit",
                concepts=(
                    uses_tile_op("tl.tileop.gemm", "each tap's weights times its shifted window computed with T.gemm"),
                    gemm_operand_copied(
                        1,
                        "each tap's window copied from X into its own shared tile with T.copy and handed to T.gemm "
                        "as it is, not an im2col tile built in shared memory",
                    ),
                ),
                title="Implicit GEMM: one T.gemm per tap on a shifted window, no im2col tile",
                cases=(
                    # a tail in C_in (20 = 16 + 4), C_out (24 < 32) and L (300 = 4 x 64 + 44)
                    Case("small_20to24_300_k3", _sizes(20, 24, 300, 3), implicit, seed=9401, simulate=True),
                    # one tap (P = 0, no shift): a plain GEMM of W[:, :, 0] and X
                    Case("pointwise_24to40_150_k1", _sizes(24, 40, 150, 1), implicit, seed=9402, simulate=True),
                    # nine windows wider than the signal's tail: padding on both sides
                    Case(
                        "odd_3to5_37_k9",
                        _sizes(3, 5, 37, 9),
                        {"BLOCK_O": 32, "BLOCK_L": 32, "BLOCK_C": 16, "STAGES": 2},
                        seed=9403,
                        simulate=True,
                    ),
                    # BLOCK_O != BLOCK_L, several tiles of each, a tail in C_in, C_out and L
                    Case(
                        "rect_40to72_150_k5",
                        _sizes(40, 72, 150, 5),
                        {"BLOCK_O": 64, "BLOCK_L": 32, "BLOCK_C": 16, "STAGES": 2},
                        seed=9404,
                        simulate=True,
                    ),
                    # 300 channels x 7 taps: 2100-term sums, which an fp16 accumulator cannot keep.
                    Case("deep_300to32_130_k7", _sizes(300, 32, 130, 7), implicit, seed=9405, simulate=True),
                    Case("tail_40to72_1000_k5", _sizes(40, 72, 1000, 5), implicit, seed=9406),
                    # conv1d_im2col's bench sizes; 128 x 128 output tiles, 16 channels (5 windows of
                    # 16 x 128) per step, 3 stages: the best of the sweep on the H200.
                    Case(
                        "large_256_131072_k5",
                        _sizes(256, 256, 1 << 17, 5),
                        {"BLOCK_O": 128, "BLOCK_L": 128, "BLOCK_C": 16, "STAGES": 3, "THREADS": 128},
                        seed=9407,
                        bench=True,
                        # 120 KiB on Hopper and an A100; 80 on RTX 30xx/40xx and L4, 60 on a T4
                        for_gpus={"sm_86 sm_89": {"STAGES": 2}, "sm_75": {"BLOCK_O": 64, "STAGES": 2}},
                    ),
                ),
                **channel_io,
            ),
            Kernel(
                function="conv1d_channels_last",
                concepts=(
                    uses_tile_op("tl.tileop.gemm", "each step's window times the tap's weights with T.gemm"),
                    gemm_operand_copied(0, "each window copied from X into a shared tile with T.copy, whole rows"),
                    gemm_operand_copied(1, "each tap's weight tile copied from W into a shared tile with T.copy"),
                    pipelined(2, "the (tap, channel tile) loop to be T.Pipelined(..., num_stages=2 or more)"),
                ),
                title="Channels last: every tap's window is whole rows, one T.gemm per (tap, channel tile)",
                inputs=(_X_LAST, _W_LAST),
                outputs=(_Y_LAST,),
                reference=conv1d_channels_last_reference,
                baseline=torch_conv1d_channels_last,
                flops=_conv_flops,
                bytes_moved=lambda s: tensor_bytes((_X_LAST, _W_LAST, _Y_LAST), s),
                tiles={"Y": ("BLOCK_L", "BLOCK_O")},
                cases=(
                    # a tail in C_in (20 = 16 + 4), C_out (24 < 32) and L (300 = 4 x 64 + 44)
                    Case("small_20to24_300_k3", _sizes(20, 24, 300, 3), channels_last, seed=9501, simulate=True),
                    # one tap (P = 0, no shift): a plain GEMM of X and W[:, 0, :] transposed
                    Case("pointwise_24to40_150_k1", _sizes(24, 40, 150, 1), channels_last, seed=9502, simulate=True),
                    # odd sizes everywhere, rows of 6 bytes; nine windows wider than the signal's tail
                    Case(
                        "odd_3to5_37_k9",
                        _sizes(3, 5, 37, 9),
                        {"BLOCK_O": 32, "BLOCK_L": 32, "BLOCK_C": 16, "STAGES": 2},
                        seed=9503,
                        simulate=True,
                    ),
                    # BLOCK_O != BLOCK_L, several tiles of each, a tail in C_in, C_out and L; 3 channel
                    # tiles a tap and 5 taps, so a step decoded with the two counts swapped misses pairs
                    Case(
                        "rect_40to72_150_k5",
                        _sizes(40, 72, 150, 5),
                        {"BLOCK_O": 64, "BLOCK_L": 32, "BLOCK_C": 16, "STAGES": 2},
                        seed=9504,
                        simulate=True,
                    ),
                    # 300 channels x 7 taps: 2100-term sums, which an fp16 accumulator cannot keep.
                    Case("deep_300to32_130_k7", _sizes(300, 32, 130, 7), channels_last, seed=9505, simulate=True),
                    Case("tail_40to72_1000_k5", _sizes(40, 72, 1000, 5), channels_last, seed=9506),
                    # conv1d_implicit's bench sizes (the same 86 GFLOP). matmul_tuned's tile, 128 positions x
                    # all 256 output channels, two math warpgroups; 64 channels (one T.gemm 64 deep) a step,
                    # 3 stages of 48 KiB (docs/results/p09-channels-last-tuning.md: the sweep on an H100).
                    Case(
                        "large_256_131072_k5",
                        _sizes(256, 256, 1 << 17, 5),
                        {"BLOCK_O": 256, "BLOCK_L": 128, "BLOCK_C": 64, "STAGES": 3, "THREADS": 256},
                        seed=9507,
                        bench=True,
                        # 144 KiB on Hopper and an A100; 2 stages, 96 KiB, on RTX 30xx/40xx and L4 (99 KiB a
                        # block there); 32 channels, 64 KiB, on a T4, which has no cp.async, so that stages
                        # add nothing there
                        for_gpus={"sm_86 sm_89": {"STAGES": 2}, "sm_75": {"BLOCK_C": 32, "STAGES": 2}},
                    ),
                ),
            ),
        ),
    )


# %% [markdown]
# ## What you learned
#
# - Halos: a tile that reads more input than it writes output, loaded once into shared memory.
# - Zero padding for free from `T.copy`'s bounds checks (and the negative-index trap).
# - Reusing one input tile for many outputs.
# - im2col: a convolution rearranged into a GEMM, built tile by tile in shared memory, so it runs
#   on the Tensor Cores.
# - An implicit GEMM: the same GEMM as K small ones over shifted windows, one accumulator, no im2col
#   tile; a Python loop over a list of tiles, unrolled while tracing.
# - A layout chosen for the copies: channels last, each tap's window is whole rows of 16 bytes, and one
#   pipelined loop over (tap, channel tile) steps feeds one `T.gemm` a step.
#
# **Next:** puzzle 10 builds a GEMM operand in shared memory too, unpacking it from 4-bit weights.

# %% [bench]

# %% [markdown]
# ## Experiments to try
#
# Each cell runs as it stands: predict its result first, run it, then open "What we measured" below
# it. Change the numbers and run it again. `bench(kernel, NAME=value, ...)` times your kernel on
# its bench case with those block parameters in place of the case's (it checks the kernel on that
# case first; the graded cases keep theirs); without a GPU it prints one line. The cells that
# compile need nvcc but no GPU.
#
# **1. What a stage costs.** The cell traces the reference `conv1d_im2col` at the bench case's sizes and
# block with one to four stages and counts the shared memory one block asks for, as TileLang allocates
# it (the count `python -m grader fit` uses; no compile, no GPU). Predict: what does one more stage
# add, and which depth no longer fits in the shared memory a Hopper block may have?

# %% [notebook]
# from grader.devices import profile_named
# from grader.pipeline.shared_memory import shared_memory_plan
# from solutions.p09_conv1d import conv1d_im2col as reference_im2col
#
# # The bench case's sizes and block at four depths of pipeline, traced (no compile): the shared memory
# # one block asks for, counted as TileLang allocates it (what `python -m grader fit` counts).
# sizes = {"C_in": 256, "L": 1 << 17, "C_out": 256, "K": 5, "BLOCK_O": 128, "BLOCK_L": 128, "BLOCK_C": 32}
# limit = profile_named("sm_90").shared_per_block
# for stages in (1, 2, 3, 4):
#     shared = shared_memory_plan(reference_im2col.get_tir(**sizes, STAGES=stages)).total
#     verdict = "fits" if shared <= limit else "does not fit"
#     print(f"STAGES={stages}: {shared / 1024:6.1f} KiB per block, {verdict} in Hopper's {limit / 1024:.0f} KiB")

# %% [measured]
# Each stage holds one tile of windows, BLOCK_C x (BLOCK_L + the halo rounded up to 8) fp16 values,
# 32 x 136 x 2 bytes = 8.5 KiB, and one W2 tile, BLOCK_O x BLOCK_C·K values, 128 x 160 x 2 bytes =
# 40 KiB: 48.5 KiB, the step between the rows. The rest, 40 KiB, is the im2col tile, built once per
# step and not multi-buffered. Four stages ask for 234 KiB, more than a Hopper block may have.

# %% [markdown]
# **2. Stages on the GPU.** The bench case uses STAGES = 3: 0.5680 ms, 151.2 TFLOP/s, 0.47x cuDNN on
# the H200 (docs/results/h200-bench.md). With two stages one step's copies overlap one step's math.
# Predict: is that already enough to hide them? And what happens to four stages, which experiment 1
# found too large?

# %% [notebook]
# bench("conv1d_im2col", STAGES=2)
# bench("conv1d_im2col", STAGES=4)

# %% [measured]
# Four stages never launch: the check that runs before the timing fails on the bench case and prints
# the amounts (the README's "Which GPU" describes this gate). Two stages: the course has no H200 time
# for this setting on a results page yet; your run is the measurement.

# %% [markdown]
# **3. Channels per step.** Sixteen channels a step make twice as many steps. Each `T.gemm` is half as
# deep (80 rows of the im2col tile instead of 160), and the block takes about half the shared memory.
# To see how much, rerun the cell of experiment 1 with `BLOCK_C=16` in `sizes`. Deeper steps keep the Tensor Cores
# busier per copy; smaller blocks leave room for more of them on an SM. Predict: which effect wins on
# the H200?

# %% [notebook]
# bench("conv1d_im2col", BLOCK_C=16)

# %% [measured]
# The course has no H200 time for `BLOCK_C=16` on a results page yet; your run is the measurement.
# This is the setting of the RTX 30xx/40xx and L4 profile, whose blocks may use 99 KiB.
