"""What one GEMM call signature launches, worked out once by gemm._decide and replayed by every later call of the
signature: the aligned copies of misaligned operands, then one or more parts (row ranges), each a launch Site of
gemm_kernel or gemv_kernel, or a K split into an fp32 workspace and its reduce (issue #16 item 4: only the tensors,
the seed and the dropout threshold/scale change between calls). Split from gemm.py to keep one topic per file."""

from __future__ import annotations

from typing import Any

import torch

from rocm_triton_doctor.kernels.aligned_copy import CopyPlan
from rocm_triton_doctor.kernels.base import dropout_args
from rocm_triton_doctor.kernels.gemm_kernels import _splitk_reduce_kernel, gemm_kernel
from rocm_triton_doctor.kernels.launch_site import DYN, Site


class _Part:
    """One launch set over rows [lo, hi) of A and C: `kern` (gemm_kernel, or gemv_kernel for a few rows) into C
    (split 1), or K-split into an fp32 workspace and _splitk_reduce_kernel into C. ints: the kernel's integer
    arguments; kw: its constexprs and options; rgrid, rints, rkw: the reduce's likewise (held by its Site)."""

    __slots__ = ("lo", "hi", "split", "grid", "ints", "kw", "ws_cols", "kern", "site", "rsite")

    def __init__(self, lo: int, hi: int, split: int, grid: tuple[int, int], ints: tuple[Any, ...], kw: dict[str, Any],
                 ws_cols: int = 0, rgrid: tuple[int, int] = (0, 0), rints: tuple[Any, ...] = (),
                 rkw: dict[str, Any] | None = None, kern: Any = None) -> None:
        self.lo, self.hi, self.split, self.grid, self.ints, self.kw, self.ws_cols = lo, hi, split, grid, ints, kw, ws_cols
        self.kern = gemm_kernel if kern is None else kern
        # Launch sites (launch_site.py): only the tensors, the seed and the dropout threshold/scale change per call.
        if split == 1:  # (A, B, C, bias, ints..., seed, threshold, scale)
            self.site = Site(self.kern, grid, (DYN,) * 4 + ints + (DYN,) * 3, kw)
        else:  # K-split into the workspace (no epilogue), then the reduce with the epilogue into C
            self.site = Site(self.kern, grid, (DYN,) * 4 + ints + (0, 0, 1.0), kw)
            self.rsite = Site(_splitk_reduce_kernel, rgrid, (DYN,) * 3 + rints + (DYN,) * 3, rkw or {})


class _Plan:
    """What one GEMM signature launches: copies of misaligned operands (None: read as it is), then its parts."""

    __slots__ = ("copy_a", "copy_b", "parts", "M", "tkey")

    def __init__(self, copy_a: CopyPlan | None, copy_b: CopyPlan | None, parts: list[_Part], M: int,
                 tkey: tuple[Any, ...] | None) -> None:
        self.copy_a, self.copy_b, self.parts, self.M, self.tkey = copy_a, copy_b, parts, M, tkey

    def run(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None, seed: int,
            p: float) -> None:
        if self.copy_a is not None:
            a = self.copy_a(a)
        if self.copy_b is not None:
            b = self.copy_b(b)
        threshold, scale = dropout_args(p)
        bias_arg = bias if bias is not None else c
        for part in self.parts:
            whole = part.lo == 0 and part.hi == self.M
            ap, cp = (a, c) if whole else (a[part.lo:part.hi], c[part.lo:part.hi])
            if part.split == 1:
                part.site(ap, b, cp, bias_arg, seed, threshold, scale)
                continue
            ws = torch.empty((part.split, part.hi - part.lo, part.ws_cols), dtype=torch.float32, device=a.device)
            part.site(ap, b, ws, ws)
            part.rsite(ws, cp, bias_arg, seed, threshold, scale)
