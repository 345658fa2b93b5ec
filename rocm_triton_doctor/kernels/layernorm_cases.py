"""LayerNorm's smoke cases (make_case for the baselines and the sweep's rows) and the shapes the compile-only audit
compiles (aot_specs: the forward with its statistics, the backward's forms). layernorm.py registers both."""

from __future__ import annotations

import torch

from rocm_triton_doctor.kernels import policy, row_grads, row_grads_cols, row_grads_split, rows_split, rows_window
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, randn
from rocm_triton_doctor.kernels.layernorm import _layernorm_backward_kernel, layernorm, layernorm_kernel
from rocm_triton_doctor.kernels.rows import row_aot


def make_case(M: int, N: int, dtype: torch.dtype, strided: bool = False) -> Case:
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        x = randn((M, N + 8 if strided else N), dtype, dev, gen)
        return {"x": x[:, :N] if strided else x, "w": randn((N,), dtype, dev, gen), "b": randn((N,), dtype, dev, gen)}

    elem = torch.empty((), dtype=dtype).element_size()
    return Case("layernorm", f"{str(dtype).replace('torch.', '')} {M}x{N}" + (" row-strided" if strided else ""), dtype,
                setup, run=lambda x, out: layernorm(x["x"], x["w"], x["b"], out=out),
                reference=lambda x: torch.nn.functional.layer_norm(x["x"].double(), (N,), x["w"].double(),
                                                                   x["b"].double(), 1e-5),
                eager=lambda x: torch.nn.functional.layer_norm(x["x"], (N,), x["w"], x["b"], 1e-5),
                flops=8.0 * M * N, bytes=float(elem * (2 * M * N + 2 * N)), out_shape=lambda x: (M, N))


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(9, 1000, torch.float32), make_case(6, 333, torch.float16, strided=True),
                make_case(4, 256, torch.bfloat16)]
    if preset == "sweep":  # the grid lives in smoke/sweep.py, shared by the kernels of this class
        from rocm_triton_doctor.smoke import sweep as grid

        return grid.row_cases(make_case)
    if preset == "seed":
        return []
    if preset == "bench":
        return [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)]
    quick = [make_case(8192, 4096, torch.bfloat16), make_case(4097, 1000, torch.float32)]
    if preset == "quick":
        return quick
    return quick + [make_case(65536, 8192, dt) for dt in (torch.float32, torch.bfloat16)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    # The forward as training runs it (STATS: mean and rstd saved for the backward), then the backward.
    fwd = row_aot("layernorm", layernorm_kernel, ("x_ptr", "w_ptr", "b_ptr", "out_ptr"),
                  {"eps": "fp32", "mean_ptr": "*fp32", "rstd_ptr": "*fp32"}, {"sw": 1, "sb": 1, "STATS": True}, target)
    ptrs = {"dy_ptr": "x", "x_ptr": "x", "w_ptr": "x", "mean_ptr": "*fp32", "rstd_ptr": "*fp32", "dx_ptr": "x",
            "dwp_ptr": "*fp32", "dbp_ptr": "*fp32"}
    return (fwd + row_grads.grad_aot("layernorm", _layernorm_backward_kernel, ptrs, {"sw": 1}, target)
            + rows_split.split_aot("layernorm", target)
            + rows_window.window_aot("layernorm", target) + row_grads_split.split_aot("layernorm", 2, target)
            + row_grads.sums_aot("layernorm", target) + row_grads_cols.cols_aot("layernorm", 2, target))
