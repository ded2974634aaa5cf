"""The GPU's bits of CUDA's math functions (f32.bin, f16.bin written by probe.cu: run.sh) against this machine's torch,
which the simulator computes with, and against correct rounding. Usage: python scripts/approx_math/analyse.py FOLDER"""

import sys

import numpy as np
import torch

torch.set_num_threads(1)
d = sys.argv[1]
N = 65792
f = torch.from_numpy(np.fromfile(f"{d}/f32.bin", dtype=np.float32).reshape(10, N).copy())
x = f[9]
lanes = lambda t: t.reshape(-1, 1, 1, 1, 1, 1, 1, 1)  # the simulator's lane tensors
names = ["exp", "exp2", "log", "log2", "rsqrt", "tanh", "sigmoid(1/(1+expf))", "pow(x,1.37)", "1/sqrtf"]
ref = [
    torch.exp,
    torch.exp2,
    torch.log,
    torch.log2,
    torch.rsqrt,
    torch.tanh,
    lambda v: 1 / (1 + torch.exp(-v)),
    lambda v: torch.pow(v, torch.tensor(1.37, dtype=v.dtype)),
    lambda v: 1 / torch.sqrt(v),
]
for k, (name, fn) in enumerate(zip(names, ref)):
    gpu = f[k]
    sim = fn(lanes(x)).flatten()
    cr = fn(lanes(x.double())).flatten().float()
    ulps = (gpu.view(torch.int32).long() - cr.view(torch.int32).long()).abs()
    fin = torch.isfinite(cr) & torch.isfinite(gpu)
    attack_torch, attack_correct = int((gpu[:256] != sim[:256]).sum()), int((gpu[:256] != cr[:256]).sum())
    sample_torch = int((gpu[256:] != sim[256:])[fin[256:]].sum())
    sample_correct, worst = int((ulps[256:] > 0)[fin[256:]].sum()), int(ulps[fin].max())
    print(
        f"{name:22s} attack set (256): gpu!=torch {attack_torch:4d}, gpu!=correct {attack_correct:4d}; "
        f"sample (65536): gpu!=torch {sample_torch:6d}, gpu!=correct {sample_correct:6d}, max ulps {worst}"
    )
x1 = x[:256]
print("approximate_rsqrt rows stored on the GPU:", int((f[4][:256] == f[8][:256]).sum()), "of 256")
ex64 = torch.exp(x1.double()).float()  # the GPU's exp(double) rounded: correct rounding nearly always
print(
    "approximate_exp rows stored on the GPU (exp of the double taken as correctly rounded):",
    int((f[0][:256] == ex64).sum()),
    "of 256",
)
h = torch.from_numpy(np.fromfile(f"{d}/f16.bin", dtype=np.int16).reshape(11, 65536).copy())
xs = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(torch.float16)
fin = torch.isfinite(xs)
for k, (name, fn) in enumerate(
    zip(
        ["hexp", "hexp2", "hlog", "hlog2", "hsqrt", "hrsqrt", "htanh"],
        [torch.exp, torch.exp2, torch.log, torch.log2, torch.sqrt, torch.rsqrt, torch.tanh],
    )
):
    sim = fn(xs.float()).half().view(torch.int16)
    ok = fin & torch.isfinite(fn(xs.float()).half())
    print(f"{name:7s} gpu != simulator (torch f32 then f16): {int((h[k] != sim)[ok].sum())} of {int(ok.sum())}")
for k, div in ((7, 3.0), (8, 0.1)):
    sim = (xs / torch.tensor(div, dtype=torch.float16)).view(torch.int16)
    ok = fin & torch.isfinite(xs / torch.tensor(div, dtype=torch.float16))
    print(f"x / {div} fp16: gpu != simulator {int((h[k] != sim)[ok].sum())}")
steps, once = h[9].view(torch.float16), h[10].view(torch.float16)
r = torch.arange(256, dtype=torch.float32)
xa = (r * 0.015625 - 2).half()
idx = xa.view(torch.int16).to(torch.int64) & 0xFFFF
print(
    "fp16 sigmoid steps != f32 sigmoid rounded (all finite fp16):",
    int((steps != once)[fin].sum()),
    "; attack set rows stored:",
    int((steps[idx] == once[idx]).sum()),
    "of 256",
)
