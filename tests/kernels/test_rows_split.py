"""Few wide rows split over several programs (rows_split.py: softmax, RMSNorm and LayerNorm in two launches) in Triton's
interpreter: against fp64 references over rows, widths, splits (more parts than chunks included), layouts, dtypes and
special values; the same outputs as the one-program-per-row kernels; the norms' saved statistics and gradients; the policy
per target (policy.row_split) and the refusals."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocm_triton_doctor.kernels import layernorm, policy, rmsnorm, softmax
from tests.kernels.test_gemm import assert_matches

DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _ln_ref(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x.double(), (x.shape[-1],), w.double(), b.double(), 1e-5)


def _rows(M: int, N: int, dtype: torch.dtype, layout: str, gen: torch.Generator) -> torch.Tensor:
    if layout == "strided":  # rows sliced out of wider ones
        return (torch.randn(M, N + 24, generator=gen) * 3).to(dtype)[:, 5:N + 5]
    if layout == "3d":  # two leading dims folded by strides
        return (torch.randn(M, 2, N, generator=gen) * 3).to(dtype)[:, 1:2]
    return (torch.randn(M, N, generator=gen) * 3).to(dtype)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(M=st.integers(1, 4), N=st.integers(4097, 21000), split=st.integers(2, 9), dtype=st.sampled_from(DTYPES),
       layout=st.sampled_from(["", "strided", "3d"]), special=st.sampled_from(["", "-inf", "nan", "row -inf"]),
       seed=st.integers(0, 2**16))
def test_split_rows_match_fp64(M: int, N: int, split: int, dtype: torch.dtype, layout: str, special: str,
                               seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    x = _rows(M, N, dtype, layout, g)
    if special == "-inf":
        x[..., N // 3] = float("-inf")
    elif special == "nan":
        x[0, ..., N - 1] = float("nan")
    elif special == "row -inf":
        x[-1] = float("-inf")
    cfg = {"BLOCK": 2048, "SPLIT": split}
    assert_matches(softmax.softmax(x, config=cfg), torch.softmax(x.double(), -1), dtype)
    if special == "":  # a norm of an infinite row is NaN in both; its finite rows are what the split can get wrong
        w = torch.randn(N, generator=g).to(dtype)
        b = torch.randn(N, generator=g).to(dtype)
        assert_matches(rmsnorm.rmsnorm(x, w, config=cfg), rmsnorm.reference(x, w), dtype)
        x = x + 1000  # an offset row: the shifted statistics keep its digits (kernel-edge-cases.md #25)
        assert_matches(layernorm.layernorm(x, w, b, config=cfg), _ln_ref(x, w, b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_rows_equal_the_one_program_rows(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(3)
    x = _rows(3, 30000, dtype, "", g)
    w = torch.randn(30000, generator=g).to(dtype)
    one = {"BLOCK": 4096}
    for split in (2, 5, 64):  # 64: more parts than the row's 8 chunks, the empty ones never launched
        cfg = {**one, "SPLIT": split}
        assert torch.allclose(softmax.softmax(x, config=cfg).float(), softmax.softmax(x, config=one).float(),
                              rtol=1e-5, atol=1e-7)
        y, rstd = rmsnorm._forward(x, w, 1e-6, None, cfg, stats=True)
        y1, rstd1 = rmsnorm._forward(x, w, 1e-6, None, one, stats=True)
        assert torch.allclose(rstd, rstd1, rtol=1e-6) and torch.allclose(y.float(), y1.float(), rtol=1e-2, atol=1e-2)
        y, mean, rstd = layernorm._forward(x, w, w, 1e-5, None, cfg, stats=True)
        y1, mean1, rstd1 = layernorm._forward(x, w, w, 1e-5, None, one, stats=True)
        assert torch.allclose(mean, mean1, rtol=1e-5, atol=1e-6) and torch.allclose(rstd, rstd1, rtol=1e-5)
        assert torch.allclose(y.float(), y1.float(), rtol=1e-2, atol=1e-2)


def test_the_interpreter_policy_splits_a_single_looped_row_and_gradients_hold() -> None:
    t = policy.target_for_device("cpu")
    assert policy.row_split(t, 20000, 4, 1) == 3 and policy.row_split(t, 20000, 4, 2) == 1
    x = torch.randn(1, 20000, dtype=torch.float64).float().requires_grad_()
    w = torch.randn(20000).requires_grad_()
    rmsnorm.rmsnorm_autograd(x, w).sum().backward()  # the forward saves rstd from the split launch
    xr, wr = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    rmsnorm.reference(xr, wr).sum().backward()
    assert torch.allclose(x.grad.double(), xr.grad, rtol=1e-4, atol=1e-6)
    assert torch.allclose(w.grad.double(), wr.grad, rtol=1e-4, atol=1e-5)
    g = torch.Generator().manual_seed(11)
    x, w, b = (torch.randn(*shape, generator=g).requires_grad_() for shape in ((1, 20000), (20000,), (20000,)))
    dy = torch.randn(1, 20000, generator=g)
    (layernorm.layernorm_autograd(x, w, b) * dy).sum().backward()  # mean and rstd saved by the split launch
    xr, wr, br = (t.detach().double().requires_grad_() for t in (x, w, b))
    (_ln_ref(xr, wr, br) * dy.double()).sum().backward()
    for got, want in ((x.grad, xr.grad), (w.grad, wr.grad), (b.grad, br.grad)):
        assert torch.allclose(got.double(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("arch", "M", "N", "elem", "want"), [
    ("sm_90", 1, 152064, 4, 19),    # a decode step's vocabulary row: one part per 8192-wide chunk
    ("sm_90", 6, 288582, 2, 33),    # 8 rows' class: 2 programs per SM over them (0.74x eager unsplit)
    ("sm_90", 32, 152064, 4, 8),
    ("sm_90", 33, 152064, 4, 4),    # 64 rows' class: 4 parts (session 25: 0.84 -> 2.30x at fp16 33x149371)
    ("sm_90", 108, 149371, 2, 8),   # 65-128 rows of 16 chunks or more: 8 parts (0.79 -> 1.03x)
    ("sm_90", 108, 32000, 4, 1),    # ... fewer chunks: one program a row
    ("sm_90", 200, 149371, 2, 1),   # more rows fill the GPU one program each
    ("sm_90", 1, 8192, 2, 1),       # one block: not a looped row
    ("gfx942", 2, 262144, 2, 32),   # an MI300X's 304 CUs: 304 per row, capped by the 32 chunks
    ("gfx1100", 4, 131072, 4, 16),
])
def test_row_split_policy(arch: str, M: int, N: int, elem: int, want: int) -> None:
    assert policy.row_split(policy.target_from_name(arch), N, elem, M) == want


def test_layernorm_splits_only_the_rows_it_was_timed_on() -> None:
    # LayerNorm keeps 32 rows at most (session 13); softmax and RMSNorm split up to 128 (session 25).
    h100 = policy.target_from_name("sm_90")
    up_to = policy.ROW_SPLIT_LAYERNORM_MAX_ROWS
    assert policy.row_split(h100, 152064, 4, 32, up_to) == 8
    assert policy.row_split(h100, 149371, 2, 64, up_to) == 1 and policy.row_split(h100, 149371, 2, 64) == 4


def test_split_refusals_are_clear() -> None:
    x = torch.randn(2, 64)
    for bad in (0, "2", True, 5000):
        with pytest.raises(ValueError, match="SPLIT must be an int"):
            softmax.softmax(x, config={"BLOCK": 64, "SPLIT": bad})
    # the backward walks one whole row a program: SPLIT is ignored there, as ROWS is
    y = softmax.softmax(x)
    assert softmax.softmax_backward(torch.ones_like(y), y, config={"BLOCK": 64, "SPLIT": 2}).shape == x.shape
    with pytest.raises(ValueError, match="SPLIT must be an int"):
        layernorm.layernorm(x, torch.ones(64), torch.zeros(64), config={"BLOCK": 64, "SPLIT": 0})


@pytest.mark.parametrize(("N", "capturing", "split"), [(152064, False, 1), (152064, True, 19), (288582, False, 36)])
def test_narrower_rows_split_only_under_graph_capture(monkeypatch: pytest.MonkeyPatch, N: int, capturing: bool,
                                                      split: int) -> None:
    # Outside a CUDA graph the second launch cost ~45 us of host time on the H200 host (policy.ROW_SPLIT_EAGER_MIN_COLS)
    from rocm_triton_doctor.kernels import rows

    monkeypatch.setattr(rows, "target_of", lambda x: policy.target_from_name("sm_90"))
    monkeypatch.setattr(rows, "_capturing", lambda x: capturing)
    x = torch.empty(1, N, dtype=torch.bfloat16)
    assert rows.prepare("softmax", x, {}, None).split == split


_GPU_SPLIT = r"""
import json, torch
from rocm_triton_doctor.kernels import layernorm, rmsnorm, rows_split, softmax
from rocm_triton_doctor.kernels.tolerances import tolerance
calls = []
for name in ("softmax_split", "rmsnorm_split", "layernorm_split"):
    real = getattr(rows_split, name)
    setattr(rows_split, name, (lambda real, name: lambda *a, **k: (calls.append(name), real(*a, **k))[1])(real, name))
out = {}
def worst(y, ref, dt):
    tol = tolerance(str(dt).removeprefix("torch."))
    return float(((y.double() - ref).abs() / (tol.atol + tol.rtol * ref.abs())).max())
for M, N, dt in ((1, 152064, torch.bfloat16), (6, 288582, torch.float16), (3, 100000, torch.float32)):
    x = torch.randn(M, N, device="cuda", dtype=dt) * 3
    w = torch.randn(N, device="cuda", dtype=dt)
    calls.clear()
    out[f"softmax {M}x{N} eager"] = worst(softmax.softmax(x), torch.softmax(x.double(), -1), dt)
    out[f"rmsnorm {M}x{N} eager"] = worst(rmsnorm.rmsnorm(x, w), rmsnorm.reference(x, w).double(), dt)
    lref = lambda: torch.nn.functional.layer_norm(x.double(), (N,), w.double(), w.double())
    out[f"layernorm {M}x{N} eager"] = worst(layernorm.layernorm(x, w, w), lref(), dt)
    out[f"{M}x{N} split outside a graph"] = len(calls)
    calls.clear()
    g = torch.cuda.CUDAGraph()
    from rocm_triton_doctor.kernels import rows
    real_capturing, rows._capturing = rows._capturing, lambda t: True
    softmax.softmax(x); rmsnorm.rmsnorm(x, w); layernorm.layernorm(x, w, w)  # compiled and loaded before the capture
    rows._capturing = real_capturing
    torch.cuda.synchronize()
    calls.clear()
    with torch.cuda.graph(g):
        y = softmax.softmax(x)
        z = rmsnorm.rmsnorm(x, w)
        u = layernorm.layernorm(x, w, w)
    x.mul_(0.5)
    g.replay()
    torch.cuda.synchronize()
    out[f"softmax {M}x{N} graph"] = worst(y, torch.softmax(x.double(), -1), dt)
    out[f"rmsnorm {M}x{N} graph"] = worst(z, rmsnorm.reference(x, w).double(), dt)
    out[f"layernorm {M}x{N} graph"] = worst(u, lref(), dt)
    out[f"{M}x{N} split in a graph"] = len(calls)
print(json.dumps(out))
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_split_rows_on_the_gpu_and_under_graph_capture() -> None:  # pragma: no cover - the lent GPU
    # The compiled split kernels against fp64, and the gate: rows under ROW_SPLIT_EAGER_MIN_COLS split only while a
    # CUDA graph is captured, wider rows always. In a subprocess (no interpreter).
    from tests.kernels.helpers import gpu_script_json

    out = gpu_script_json(_GPU_SPLIT)
    assert all(v <= 1.0 for k, v in out.items() if "split" not in k), out
    assert out["1x152064 split outside a graph"] == 0 and out["1x152064 split in a graph"] == 3
    assert out["6x288582 split outside a graph"] == 3 and out["6x288582 split in a graph"] == 3
