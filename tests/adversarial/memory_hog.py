"""Adversarial submission: the file allocates 64 GiB when it is imported, far beyond what grading needs."""

import torch

_HOARD = torch.ones(1 << 36, dtype=torch.uint8)
