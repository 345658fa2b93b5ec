"""rocm-triton-doctor: get PyTorch + Triton working on AMD GPUs under ROCm, and prove it."""

from __future__ import annotations

__version__ = "0.1.0"
