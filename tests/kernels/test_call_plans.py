"""Planned calls (kernels/call_plans.py): a signature seen once skips the checks and the policy on later calls, and
those calls compute what the checked path computes. Plans are for GPU tensors; here GPU_ONLY is turned off so the
planned path runs on CPU tensors in the interpreter (its Site then launches through launch(), as on HIP)."""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable, Iterator

import pytest
import torch
import torch.nn.functional as F

from rocm_triton_doctor.kernels import add_mul, bias_gelu_dropout_residual, call_plans, layernorm, rmsnorm, softmax, swiglu


@pytest.fixture
def planned(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(call_plans, "GPU_ONLY", False)
    call_plans.clear()
    yield
    call_plans.clear()


def _no_checked_path(monkeypatch: pytest.MonkeyPatch, *modules: Any) -> None:
    """Later calls must come from a plan: the checked path's first step raises."""
    def boom(*_a: Any, **_k: Any) -> None:
        raise AssertionError("the checked path ran for a planned signature")
    for m in modules:
        monkeypatch.setattr(m, "prepare" if hasattr(m, "prepare") else "check_device", boom)


def _gelu(u: torch.Tensor) -> torch.Tensor:
    return F.gelu(u, approximate="tanh")


def test_signature_of_plain_gpu_tensors_only() -> None:
    x = torch.ones(4, 8)
    assert call_plans.signature(x) is None  # CPU: the checked path
    assert call_plans.signature(x, "not a tensor") is None


def test_signature_keys_shape_strides_dtype_and_grad(planned: None) -> None:
    x = torch.ones(4, 8)
    sigs = {call_plans.signature(t) for t in (x, x.t(), x[:, :4], x.half(), x.reshape(8, 4))}
    assert len(sigs) == 5
    w = torch.ones(8, requires_grad=True)
    assert call_plans.signature(x, w) is None  # autograd records: the checked path refuses it
    with torch.no_grad():
        assert call_plans.signature(x, w) is not None


ROW_CALLS: list[tuple[str, Callable[..., torch.Tensor], Callable[..., torch.Tensor], Any]] = [
    ("rmsnorm", lambda x, w, b: rmsnorm.rmsnorm(x, w),
     lambda x, w, b: x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w, rmsnorm),
    ("layernorm", lambda x, w, b: layernorm.layernorm(x, w, b),
     lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), layernorm),
    ("softmax", lambda x, w, b: softmax.softmax(x), lambda x, w, b: torch.softmax(x, -1), softmax),
]


@pytest.mark.parametrize("name,fn,ref,module", ROW_CALLS, ids=[c[0] for c in ROW_CALLS])
@pytest.mark.parametrize("layout", ["dense", "transposed", "sliced"])
def test_row_kernels_planned_calls_match(planned: None, monkeypatch: pytest.MonkeyPatch, name: str,
                                         fn: Callable[..., torch.Tensor], ref: Callable[..., torch.Tensor], module: Any,
                                         layout: str) -> None:
    gen = torch.Generator().manual_seed(0)

    def inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        base = torch.randn(24, 40, generator=gen)
        x = {"dense": base[:, :37].contiguous(), "transposed": base.t()[:, :19], "sliced": base[3:20:2, 1:38]}[layout]
        return x, torch.randn(x.shape[-1], generator=gen), torch.randn(x.shape[-1], generator=gen)

    x, w, b = inputs()
    torch.testing.assert_close(fn(x, w, b), ref(x.double(), w.double(), b.double()).float(), atol=1e-5, rtol=1e-5)
    assert len(module._PLANS) == 1
    _no_checked_path(monkeypatch, module)
    for _ in range(2):  # new values, same signature: from the plan
        x, w, b = inputs()
        y = fn(x, w, b)
        assert y.is_contiguous() and y.shape == x.shape
        torch.testing.assert_close(y, ref(x.double(), w.double(), b.double()).float(), atol=1e-5, rtol=1e-5)


def test_planned_norm_refuses_a_weight_that_requires_grad(planned: None) -> None:
    x, w = torch.randn(6, 32), torch.randn(32)
    rmsnorm.rmsnorm(x, w)
    with pytest.raises(ValueError, match="requires grad"):
        rmsnorm.rmsnorm(x, w.clone().requires_grad_())


def test_planned_calls_with_statistics_keep_their_own_plan(planned: None) -> None:
    # The autograd forms ask for per-row statistics: a plan of their own (the key has `stats`), gradients right.
    gen = torch.Generator().manual_seed(1)
    for _ in range(3):
        x = torch.randn(5, 48, generator=gen, dtype=torch.float64).float().requires_grad_()
        w = torch.randn(48, generator=gen).requires_grad_()
        b = torch.randn(48, generator=gen).requires_grad_()
        y = layernorm.layernorm_autograd(x, w, b)
        y.square().sum().backward()
        xr, wr, br = (t.detach().double().requires_grad_() for t in (x, w, b))
        F.layer_norm(xr, (48,), wr, br, 1e-5).square().sum().backward()
        for got, want in ((y, F.layer_norm(xr, (48,), wr, br, 1e-5)), (x.grad, xr.grad), (w.grad, wr.grad)):
            torch.testing.assert_close(got.double(), want.detach(), atol=1e-4, rtol=1e-4)
        with torch.no_grad():
            rmsnorm.rmsnorm(x, w)
    assert len(layernorm._PLANS) == 1 and len(rmsnorm._PLANS) == 1


@pytest.mark.parametrize("layout", ["dense", "chunked"])
def test_elementwise_planned_calls_match(planned: None, monkeypatch: pytest.MonkeyPatch, layout: str) -> None:
    gen = torch.Generator().manual_seed(2)

    def halves() -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.randn(7, 2 * 33, generator=gen)
        a, b = h.chunk(2, -1)
        return (a.contiguous(), b.contiguous()) if layout == "dense" else (a, b)

    for i in range(3):
        a, b = halves()
        z = torch.randn(a.shape, generator=gen)
        torch.testing.assert_close(add_mul.add_mul(a, b, z), (a + b) * z)
        torch.testing.assert_close(swiglu.swiglu(a, b), F.silu(a) * b)
        if i == 0:
            assert len(add_mul._PLANS) == 1 and len(swiglu._PLANS) == 1
            _no_checked_path(monkeypatch, add_mul, swiglu)


def test_bias_gelu_planned_calls_draw_a_fresh_mask_unless_seeded(planned: None, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = torch.Generator().manual_seed(3)
    x, r = torch.randn(16, 64, generator=gen), torch.randn(16, 64, generator=gen)
    bias = torch.randn(64, generator=gen)
    f = bias_gelu_dropout_residual.bias_gelu_dropout_residual
    torch.testing.assert_close(f(x, bias, r), r + _gelu(x + bias), atol=1e-5, rtol=1e-5)
    f(x, bias, r, p=0.5)  # plans the dropout signature (its own: HAS_DROPOUT is in the key)
    assert len(bias_gelu_dropout_residual._PLANS) == 2
    _no_checked_path(monkeypatch, bias_gelu_dropout_residual)
    torch.testing.assert_close(f(x, bias, r), r + _gelu(x + bias), atol=1e-5, rtol=1e-5)
    kept = [(f(x, bias, r, p=0.5) - r) != 0 for _ in range(2)]
    assert not torch.equal(kept[0], kept[1])  # seed=None: a new mask every call, planned or not
    assert torch.equal(f(x, bias, r, p=0.5, seed=7), f(x, bias, r, p=0.5, seed=7))
    y = f(x, bias, r, p=0.5, seed=7)
    on = (y - r) != 0
    torch.testing.assert_close((y - r)[on], (_gelu(x + bias) * 2.0)[on], atol=1e-5, rtol=1e-5)
    assert math.isclose(on.float().mean().item(), 0.5, abs_tol=0.1)


def test_plan_table_is_bounded(planned: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(call_plans, "PLAN_LIMIT", 3)
    for n in range(1, 8):
        softmax.softmax(torch.randn(2, n))
        assert len(softmax._PLANS) <= 3


_GPU_PLANS = r"""
import json, torch
import torch.nn.functional as F
from rocm_triton_doctor.kernels import add_mul, bias_gelu_dropout_residual, layernorm, rmsnorm, softmax, swiglu
out = {}
g = torch.Generator(device="cuda").manual_seed(0)
def rel(y, ref):
    return float((y.float() - ref).abs().max() / (ref.abs().max() + 1e-6))
for dt in (torch.bfloat16, torch.float32):
    for i in range(6):
        # the same signatures every round; the first column moves the addresses off 16-byte alignment and back
        big = torch.randn(33, 1 + 4096 + 8, device="cuda", generator=g).to(dt)
        x = big[:, i % 2: i % 2 + 4096]
        w = torch.randn(4096, device="cuda", generator=g)
        b = torch.randn(4096, device="cuda", generator=g)
        r = torch.randn(33, 4096, device="cuda", generator=g).to(dt)
        xf = x.float()
        for name, y, ref in (
            ("rmsnorm", rmsnorm.rmsnorm(x, w), xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + 1e-6) * w),
            ("layernorm", layernorm.layernorm(x, w, b), F.layer_norm(xf, (4096,), w, b, 1e-5)),
            ("softmax", softmax.softmax(x), torch.softmax(xf, -1)),
            ("add_mul", add_mul.add_mul(x, r, x), (xf + r.float()) * xf),
            ("swiglu", swiglu.swiglu(x, r), F.silu(xf) * r.float()),
            ("bgdr", bias_gelu_dropout_residual.bias_gelu_dropout_residual(x, b.to(dt), r),
             r.float() + F.gelu(xf + b.to(dt).float(), approximate="tanh")),
        ):
            key = f"{name} {dt}"
            out[key] = max(out.get(key, 0.0), rel(y, ref))
out["plans"] = sum(len(m._PLANS) for m in (rmsnorm, layernorm, softmax, add_mul, swiglu, bias_gelu_dropout_residual))
# the model layout (B, H, S, D) transposed to (B, S, H, D): three leading dims apart, read through a third stride
from rocm_triton_doctor.kernels import gemm
q = torch.randn(2, 8, 37, 128, device="cuda", generator=g).to(torch.bfloat16).transpose(1, 2)
w = torch.randn(128, device="cuda", generator=g)
qf = q.float()
for name, y, ref in (
    ("rmsnorm", rmsnorm.rmsnorm(q, w), qf * torch.rsqrt(qf.square().mean(-1, keepdim=True) + 1e-6) * w),
    ("layernorm", layernorm.layernorm(q, w, w), F.layer_norm(qf, (128,), w, w, 1e-5)),
    ("softmax", softmax.softmax(q), torch.softmax(qf, -1)),
    ("add_mul", add_mul.add_mul(q, q, q), (qf + qf) * qf),
    ("swiglu", swiglu.swiglu(q, q), F.silu(qf) * qf),
    ("bgdr", bias_gelu_dropout_residual.bias_gelu_dropout_residual(q, w.to(torch.bfloat16), q),
     qf + F.gelu(qf + w.to(torch.bfloat16).float(), approximate="tanh")),
):
    out[f"layout {name}"] = rel(y, ref)
act = torch.randn(2, 37, 1024, device="cuda", generator=g).to(torch.bfloat16)[:, :, :128]  # rows 1024 apart
wt = torch.randn(256, 128, device="cuda", generator=g).to(torch.bfloat16)
y = gemm.gemm(act, wt.t())  # F.linear's (B, S, K) activations: (B, S, N)
out["layout gemm 3-D"] = rel(y.reshape(74, 256), act.reshape(74, 128).float() @ wt.float().t()) + (y.shape != (2, 37, 256))
x = torch.randn(64, 1000, device="cuda", dtype=torch.bfloat16); w = torch.randn(1000, device="cuda")
rmsnorm.rmsnorm(x, w); torch.cuda.synchronize()
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    y = rmsnorm.rmsnorm(x, w)
x.copy_(torch.randn_like(x)); graph.replay(); torch.cuda.synchronize()
xf = x.float()
out["graph replay"] = rel(y, xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + 1e-6) * w)
print(json.dumps(out))
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_planned_calls_on_the_gpu() -> None:  # pragma: no cover - the lent GPU
    """The row and elementwise kernels called again and again with new tensors of one signature (aligned and not):
    right every call, one plan per signature, and under CUDA graph capture."""
    from tests.kernels.helpers import gpu_script_json

    out = gpu_script_json(_GPU_PLANS)
    assert out.pop("plans") == 12, out  # 6 kernels x 2 dtypes (alignment is the Site's key, not a new plan)
    assert all(v < 2e-2 for v in out.values()), out
