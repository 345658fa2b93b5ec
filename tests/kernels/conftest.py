"""Kernel tests run in Triton's interpreter on the CPU (GPU-only tests are marked `gpu` and skipped without one)."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created (the kernel modules create them)
