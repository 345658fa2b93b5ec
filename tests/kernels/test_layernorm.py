"""LayerNorm in the interpreter: the smoke cases and input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import layernorm
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(layernorm.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


def test_launcher_validates_inputs() -> None:
    with pytest.raises(ValueError, match="must have shape"):
        layernorm.layernorm(torch.ones(3, 8), torch.ones(7), torch.ones(8))


# --- every input computed right or refused (issue #16; kernel-edge-cases.md) ---------------------------------------

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.kernels.helpers import assert_matches, param_vector, row_inputs  # noqa: E402


def _ref(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.layer_norm(x.double(), (x.shape[-1],), w.double(), b.double(), 1e-5)


# Shrinking re-runs interpreter launches for minutes: report the failing example as drawn (CI time bound).
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict | None]:
    r = row_inputs(draw)
    return (r["x"], param_vector(draw, r["N"], r["dtype"], r["gen"]), param_vector(draw, r["N"], r["dtype"], r["gen"]),
            r["config"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=NO_SHRINK)
@given(_inputs())
def test_property_any_shape_layout_dtype_and_value(args: tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict | None]) -> None:
    x, w, b, config = args
    assert_matches(layernorm.layernorm(x, w, b, config=config), _ref(x, w, b), x.dtype)


def test_weight_and_bias_views_are_read_through_their_strides() -> None:
    # Edge cases #1/#2: w[::2] gave 594/600 wrong elements; an expanded bias read past its storage.
    x = torch.randn(6, 100)
    w, b = torch.linspace(-2, 2, 200)[::2], torch.full((1,), 0.25).expand(100)
    assert_matches(layernorm.layernorm(x, w, b), _ref(x, w, b), torch.float32)
    w4096, b4096 = torch.full((1,), 2.0).expand(4096), torch.full((1,), -1.0).expand(4096)
    x = torch.randn(3, 4096)
    assert_matches(layernorm.layernorm(x, w4096, b4096), _ref(x, w4096, b4096), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_activations_with_fp32_weight_and_bias(dtype: torch.dtype) -> None:
    x, w, b = torch.randn(5, 300).to(dtype), torch.randn(300), torch.randn(300)
    assert_matches(layernorm.layernorm(x, w, b), _ref(x, w, b), dtype)


def test_vocabulary_wide_fp32_rows_run_looped() -> None:
    N = 152064  # refused before (fp32 rows over 65536)
    x, w, b = torch.randn(2, N) * 3, torch.randn(N), torch.randn(N)
    assert_matches(layernorm.layernorm(x, w, b), _ref(x, w, b), torch.float32)


def test_looped_statistics_cancel_no_worse_than_torch_eager() -> None:
    # Rows of 1000 + 0.01·randn (edge case #25): an fp32 mean of such values cannot be exact (eager torch is off by
    # 0.03 there); the chunk statistics are merged (no E[x²] - E[x]² form), so the looped kernel stays within eager's
    # error.
    N = 70000
    x, w, b = torch.randn(2, N) * 0.01 + 1000.0, torch.ones(N), torch.zeros(N)
    ref = _ref(x, w, b)
    ours = (layernorm.layernorm(x, w, b).double() - ref).abs().max()
    eager = (torch.nn.functional.layer_norm(x, (N,), w, b, 1e-5).double() - ref).abs().max()
    assert ours <= max(float(eager), 1e-3) * 1.5, (float(ours), float(eager))


def test_looped_path_keeps_the_shift_for_rows_far_from_zero() -> None:
    # Fuzz round 4: pass 2 subtracted mean + shift rounded to fp32 (an ulp of 1e-3 near 1e4): max error 1.9e-2 looped
    # against 7.9e-7 in one block. Both paths now normalise (x - shift) - mean.
    torch.manual_seed(3)
    N = 1000
    x = (1e4 + 0.1 * torch.randn(2, N, dtype=torch.float64)).float()
    w, b = torch.randn(N), torch.randn(N)
    ref = torch.nn.functional.layer_norm(x.double(), (N,), w.double(), b.double(), 1e-5)
    for cfg in (None, {"BLOCK": 256, "ROWS": 1, "num_warps": 4}):
        assert float((layernorm.layernorm(x, w, b, config=cfg).double() - ref).abs().max()) < 1e-4


def test_a_huge_first_element_does_not_turn_the_row_nan() -> None:
    # Fuzz round 4: the shift (the row's first element) of 8.5e37 overflowed the shifted sum: the whole row was NaN.
    x = torch.randn(1, 129)
    x[0, 0] = 8.5e37
    for cfg in (None, {"BLOCK": 32, "ROWS": 1, "num_warps": 4}):
        assert not torch.isnan(layernorm.layernorm(x, torch.ones(129), torch.zeros(129), config=cfg)).any()


def test_looped_path_matches_the_single_block_path() -> None:
    x, w, b = torch.randn(5, 333), torch.randn(333), torch.randn(333)
    one = layernorm.layernorm(x, w, b)
    looped = layernorm.layernorm(x, w, b, config={"BLOCK": 32, "ROWS": 2, "num_warps": 4})
    torch.testing.assert_close(one, looped, rtol=1e-5, atol=1e-5)


def test_refusals_are_clear() -> None:
    x, w, b = torch.randn(3, 8), torch.ones(8), torch.zeros(8)
    with pytest.raises(TypeError, match="eps must be a number"):
        layernorm.layernorm(x, w, b, eps="1e-5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="eps must be > 0"):
        layernorm.layernorm(x, w, b, eps=0.0)
    with pytest.raises(ValueError, match="meta"):
        layernorm.layernorm(x.to("meta"), w.to("meta"), b.to("meta"))
    with pytest.raises(TypeError, match="not supported"):
        layernorm.layernorm(x, w.double(), b)
    with pytest.raises(ValueError, match="no backward"):
        layernorm.layernorm(x.requires_grad_(), w, b)
    with pytest.raises(ValueError, match="out overlaps bias"):
        buf = torch.zeros(3, 8)
        layernorm.layernorm(torch.randn(3, 8), w, buf[1], out=buf)


# === backward (issue #17): gradients of every input against fp64 torch autograd, in the interpreter ==================

import torch.nn.functional as F  # noqa: E402

from tests.kernels.grads import assert_grads, dy_like, leaf  # noqa: E402

LOOP = {"BLOCK": 64, "ROWS": 1, "num_warps": 4}
BWD = [((7, 33), torch.float32, torch.float32, None), ((2, 3, 45), torch.bfloat16, torch.bfloat16, None),
       ((5, 100), torch.float16, torch.float32, None), ((3, 200), torch.float32, torch.float32, LOOP),
       ((4, 130), torch.bfloat16, torch.float32, {"BLOCK": 32, "ROWS": 1, "num_warps": 4})]


def _ln(n: int):  # noqa: ANN202
    return lambda xd, wd, bd: F.layer_norm(xd, (n,), wd, bd, 1e-5)


@pytest.mark.parametrize("shape,dt,wdt,cfg", BWD, ids=[f"{s}-{d}-{w}-{'looped' if c else 'block'}" for s, d, w, c in BWD])
def test_backward_matches_fp64_autograd(shape: tuple[int, ...], dt: torch.dtype, wdt: torch.dtype, cfg: dict | None) -> None:
    gen = torch.Generator().manual_seed(3)
    N = shape[-1]
    x = leaf(3 + torch.randn(shape, generator=gen), dt)  # an offset mean: the saved mean must be the real one
    w, b = leaf(1 + 0.1 * torch.randn(N, generator=gen), wdt), leaf(torch.randn(N, generator=gen), wdt)
    dy = dy_like(x, gen)
    _, mean, rstd = layernorm._forward(x.detach(), w.detach(), b.detach(), 1e-5, config=cfg, stats=True)
    assert mean is not None and rstd is not None
    got = layernorm.layernorm_backward(dy, x.detach(), w.detach(), b.detach(), mean, rstd, config=cfg)
    assert_grads(_ln(N), (x, w, b), dy, got)


def test_autograd_function_and_custom_op_give_the_gradients() -> None:
    gen = torch.Generator().manual_seed(4)
    for fn in (lambda x, w, b: layernorm.LayerNormFunction.apply(x, w, b, 1e-5), layernorm.autograd_op,
               layernorm.custom_op_form):
        x = leaf(torch.randn(6, 40, generator=gen), torch.float32)
        w, b = leaf(torch.randn(40, generator=gen), torch.float32), leaf(torch.randn(40, generator=gen), torch.float32)
        dy = dy_like(x, gen)
        fn(x, w, b).backward(dy)
        assert_grads(_ln(40), (x, w, b), dy, (x.grad, w.grad, b.grad))


def test_custom_op_opcheck() -> None:
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(4, 24, generator=gen, requires_grad=True)
    w, b = torch.randn(24, generator=gen, requires_grad=True), torch.randn(24, generator=gen, requires_grad=True)
    torch.library.opcheck(layernorm._layernorm_op, (x, w, b, 1e-5))
    stats = (torch.randn(4), torch.rand(4) + 0.5)
    torch.library.opcheck(layernorm._layernorm_backward_op, (torch.randn(4, 24), x.detach(), w.detach(), b.detach(), *stats))


@pytest.mark.parametrize("has_w,has_b", [(False, False), (True, False), (False, True)])
def test_missing_weight_or_bias_is_no_scale_or_no_shift(has_w: bool, has_b: bool) -> None:
    # nn.LayerNorm(bias=False) and elementwise_affine=False pass None; it had been refused (fuzz round 4).
    import torch.nn.functional as F

    x = torch.randn(4, 50, requires_grad=True)
    w = torch.randn(50, requires_grad=True) if has_w else None
    b = torch.randn(50, requires_grad=True) if has_b else None
    ref = F.layer_norm(x, (50,), w, b)
    g = torch.randn(4, 50)
    leaves = [t for t in (x, w, b) if t is not None]
    want = torch.autograd.grad(ref, leaves, g)
    with torch.no_grad():
        torch.testing.assert_close(layernorm.layernorm(x, w, b), ref.detach(), rtol=1e-5, atol=1e-5)
    for form in (layernorm.autograd_op, layernorm.custom_op_form):
        y = form(x, w, b)
        torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)
        for got, exp in zip(torch.autograd.grad(y, leaves, g), want):
            torch.testing.assert_close(got, exp, rtol=1e-4, atol=1e-4)


def test_norms_over_several_trailing_dims() -> None:
    # F.layer_norm / F.rms_norm with a normalized_shape of two dims, given by the parameters' shape: x's last two
    # dims as one row (a view), out= in x's shape, gradients in the parameters' shape; dims that do not merge refused.
    import torch.nn.functional as F

    from rocm_triton_doctor.kernels import rmsnorm

    g = torch.Generator().manual_seed(9)
    x = torch.randn(3, 4, 5, 6, generator=g)
    w, b = torch.randn(5, 6, generator=g), torch.randn(5, 6, generator=g)
    torch.testing.assert_close(layernorm.layernorm(x, w, b), F.layer_norm(x, (5, 6), w, b), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(layernorm.layernorm(x, w, None), F.layer_norm(x, (5, 6), w, None), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rmsnorm.rmsnorm(x, w.t().contiguous().t()), F.rms_norm(x, (5, 6), w, 1e-6),
                               atol=1e-5, rtol=1e-5)
    out = torch.empty_like(x)
    assert layernorm.layernorm(x, w, b, out=out) is out
    torch.testing.assert_close(out, F.layer_norm(x, (5, 6), w, b), atol=1e-5, rtol=1e-5)
    for form in (layernorm.layernorm_autograd, layernorm.layernorm_custom_op):
        xa, wa, ba = (t.clone().requires_grad_() for t in (x, w, b))
        (form(xa, wa, ba) ** 2).sum().backward()
        xr, wr, br = (t.double().requires_grad_() for t in (x, w, b))
        (F.layer_norm(xr, (5, 6), wr, br) ** 2).sum().backward()
        for got, want in ((xa.grad, xr.grad), (wa.grad, wr.grad), (ba.grad, br.grad)):
            assert got.shape == want.shape
            torch.testing.assert_close(got.double(), want, atol=1e-4, rtol=1e-4)
    for form in (rmsnorm.rmsnorm_autograd, rmsnorm.rmsnorm_custom_op):
        xa, wa = x.clone().requires_grad_(), w.clone().requires_grad_()
        (form(xa, wa) ** 2).sum().backward()
        xr, wr = x.double().requires_grad_(), w.double().requires_grad_()
        (F.rms_norm(xr, (5, 6), wr, 1e-6) ** 2).sum().backward()
        torch.testing.assert_close(wa.grad.double(), wr.grad, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(xa.grad.double(), xr.grad, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match=r"normalised dims \(5, 6\) of x .* do not merge into one row"):
        layernorm.layernorm(x.transpose(2, 3).contiguous().transpose(2, 3), w, b)


@pytest.mark.parametrize("M,N,dtype,config", [(37, 5, torch.float32, None), (9, 3001, torch.bfloat16, None),
                                              (5, 20000, torch.float32, None), (1, 20000, torch.float32, None),
                                              (3, 30000, torch.float16, {"BLOCK": 4096, "SPLIT": 5}),
                                              (9, 3001, torch.float16, {"BLOCK": 4096, "WINDOW": 1}),
                                              (9, 3001, torch.bfloat16, {"BLOCK": 512, "WINDOW": 1}),
                                              (4, 0, torch.float32, None), (0, 7, torch.float32, None)])
def test_every_forward_path_writes_every_rows_statistics(M: int, N: int, dtype: torch.dtype, config: dict | None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # The saved mean and rstd are allocated uninitialised: NaN-filled buffers show a row a path leaves unwritten
    # (packed narrow rows, odd-width windows, looped rows, the few-wide-rows split, a caller's split; zero width).
    monkeypatch.setattr(layernorm, "_stats", lambda m, x: (torch.full((m,), float("nan")), torch.full((m,), float("nan"))))
    g = torch.Generator().manual_seed(M * 7 + N)
    x = (torch.randn(M, N, generator=g) * 2 + 3).to(dtype)
    w, b = torch.randn(N, generator=g).to(dtype), torch.randn(N, generator=g).to(dtype)
    if config and "WINDOW" in config:  # the odd-width windows (one block, looped) really run
        from rocm_triton_doctor.kernels.rows import prepare
        assert prepare("layernorm", x, {"weight": w, "bias": b}, None, config).window is not None
    _, mean, rstd = layernorm._forward(x, w, b, 1e-5, None, config, stats=True)
    xd = x.double()
    want_mean = xd.mean(-1) if N else torch.zeros(M, dtype=torch.float64)
    want_rstd = 1 / torch.sqrt(xd.var(-1, unbiased=False) + 1e-5) if N else torch.full((M,), 1e-5 ** -0.5).double()
    assert mean.shape == (M,) and rstd.shape == (M,)
    torch.testing.assert_close(mean.double(), want_mean, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(rstd.double(), want_rstd, rtol=1e-4, atol=1e-4)
