"""The simulator's model of the Tensor Cores, held against the GPU it stands for. tileops._tensor_core_read says a
float32 T.gemm operand loses its low 13 mantissa bits (TF32 read by truncation, not rounding) and an int8 one is
multiplied exactly; a CPU grade of tf32_gemm.py and integer_gemm.py rests on both. On a GPU each is checked bit for bit
with operands at the rounding points, where truncation and rounding to nearest disagree."""

import pytest
import tilelang
import tilelang.language as T
import torch

from grader.pipeline.simulate.tileops import _tensor_core_read

SIZE = 64


@tilelang.jit
def multiply(X, Y, dtype: str, accum: str):
    X: T.Tensor((SIZE, SIZE), dtype)
    Y: T.Tensor((SIZE, SIZE), dtype)
    Z = T.empty((SIZE, SIZE), accum)
    with T.Kernel(1, threads=128):
        X_s = T.alloc_shared((SIZE, SIZE), dtype)
        Y_s = T.alloc_shared((SIZE, SIZE), dtype)
        Z_f = T.alloc_fragment((SIZE, SIZE), accum)
        T.copy(X, X_s)
        T.copy(Y, Y_s)
        T.gemm(X_s, Y_s, Z_f, transpose_B=True, clear_accum=True)
        T.copy(Z_f, Z)
    return Z


def operands_at_the_rounding_points() -> torch.Tensor:
    """float32 values whose low 13 bits are each pattern that separates truncation from rounding to nearest: under
    half an ulp of TF32, exactly half (a tie, odd and even), over half, and all ones; both signs; random ones too."""
    low_bits = torch.tensor([0x0000, 0x0001, 0x0FFF, 0x1000, 0x1001, 0x1FFF], dtype=torch.int32)
    bases = torch.tensor([1.0, 1.0 + 2**-10, -3.0, 1e-3, 12345.0, -7e5], dtype=torch.float32).view(torch.int32)
    crafted = (bases[:, None] | low_bits[None, :]).flatten().view(torch.float32)
    values = torch.randn(SIZE * SIZE, generator=torch.Generator().manual_seed(7))
    values[: crafted.numel()] = crafted
    return values.view(SIZE, SIZE)


@pytest.mark.gpu
def test_float32_gemm_reads_tf32_by_truncation_as_the_simulator_does():
    x = operands_at_the_rounding_points()
    # Y = I with transpose_B: every output is one product by 1.0 plus zeros, so Z is X as the Tensor Cores read it.
    z = multiply(x.cuda(), torch.eye(SIZE).cuda(), "float32", "float32").cpu()
    expected = _tensor_core_read(x)
    differ = (z.view(torch.int32) != expected.view(torch.int32)).nonzero().tolist()
    assert not differ, [(x[i, j].item(), z[i, j].item(), expected[i, j].item()) for i, j in differ[:8]]


@pytest.mark.gpu
def test_int8_gemm_is_exact_as_the_simulator_does():
    generator = torch.Generator().manual_seed(8)
    x = torch.randint(-128, 128, (SIZE, SIZE), dtype=torch.int8, generator=generator)
    y = torch.randint(-128, 128, (SIZE, SIZE), dtype=torch.int8, generator=generator)
    x[0], y[0] = -128, -128  # the largest dot product int8 rows make, 64 * 2^14, beside random ones of both signs
    z = multiply(x.cuda(), y.cuda(), "int8", "int32").cpu()
    expected = _tensor_core_read(x) @ _tensor_core_read(y).T
    assert torch.equal(z.to(torch.int64), expected)
