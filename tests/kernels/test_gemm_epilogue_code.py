"""gemm.epilogue_code: bias_gelu goes through the hardware tanh only where policy.fast_tanh allows it (NVIDIA, 16-bit
C), and the planned launches carry that code; every other epilogue and target keeps its own code."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import torch

from rocm_triton_doctor.kernels import gemm, policy

H200 = policy.Target("cuda", "sm_90", 32)
MI300 = policy.Target("hip", "gfx942", 64)
CPU = policy.target_for_device("cpu")


def test_bias_gelu_takes_the_hardware_tanh_on_nvidia_16_bit_only() -> None:
    c16, c32 = torch.empty(2, 2, dtype=torch.bfloat16), torch.empty(2, 2)
    assert gemm.epilogue_code("bias_gelu", H200, c16) == gemm.GELU_FAST_TANH
    assert gemm.epilogue_code("bias_gelu", H200, torch.empty(1, dtype=torch.float16)) == gemm.GELU_FAST_TANH
    assert gemm.epilogue_code("bias_gelu", H200, c32) == gemm.EPILOGUES["bias_gelu"]  # fp32: the exact form
    for t in (MI300, CPU):  # no tanh.approx there; the interpreter has no inline assembly
        assert gemm.epilogue_code("bias_gelu", t, c16) == gemm.EPILOGUES["bias_gelu"]
    for name, code in gemm.EPILOGUES.items():
        if name != "bias_gelu":
            assert gemm.epilogue_code(name, H200, c16) == code


def test_the_gemv_plan_carries_the_code() -> None:
    a, b = torch.randn(2, 64).half(), torch.randn(128, 64).half().t()
    c, bias = torch.empty(2, 128, dtype=torch.float16), torch.randn(128).half()
    plan = gemm._gemv_plan(a, b, c, bias, "bias_gelu", 0.0, None, H200, a.device)
    part = plan.parts[0]
    assert part.split == 1 and part.kw["EPILOGUE"] == gemm.GELU_FAST_TANH
    plan = gemm._gemv_plan(a, b, c, bias, "bias_gelu", 0.0, None, CPU, a.device)
    part = plan.parts[0]
    assert part.split == 1 and part.kw["EPILOGUE"] == gemm.EPILOGUES["bias_gelu"]
