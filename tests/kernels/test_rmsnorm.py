"""RMSNorm in the interpreter: the smoke cases and input validation."""

from __future__ import annotations

import pytest
import torch

from rocm_triton_doctor.kernels import rmsnorm
from rocm_triton_doctor.kernels.base import Case
from tests.kernels.helpers import check_in_interpreter, interpreter_cases

CASES = interpreter_cases(rmsnorm.KERNEL)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_interpreter(case: Case) -> None:
    check_in_interpreter(case)


def test_launcher_validates_inputs() -> None:
    # A transposed input was refused ("the last dimension must be contiguous"); it is now read through its strides.
    x = torch.arange(64.0).reshape(8, 8).t()
    torch.testing.assert_close(rmsnorm.rmsnorm(x, torch.ones(8)), rmsnorm.reference(x, torch.ones(8)).float())


# --- every input computed right or refused (issue #16; kernel-edge-cases.md) ---------------------------------------

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.kernels.helpers import assert_matches, param_vector, row_inputs  # noqa: E402


# Shrinking re-runs interpreter launches for minutes: report the failing example as drawn (CI time bound).
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[torch.Tensor, torch.Tensor, dict | None]:
    r = row_inputs(draw)
    return r["x"], param_vector(draw, r["N"], r["dtype"], r["gen"]), r["config"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], phases=NO_SHRINK)
@given(_inputs())
def test_property_any_shape_layout_dtype_and_value(args: tuple[torch.Tensor, torch.Tensor, dict | None]) -> None:
    x, w, config = args
    assert_matches(rmsnorm.rmsnorm(x, w, config=config), rmsnorm.reference(x, w), x.dtype)


@pytest.mark.parametrize("make_w", [lambda: torch.linspace(-2, 2, 200)[::2],  # edge case #1: a strided view
                                    lambda: torch.full((1,), 2.0).expand(100)],  # #2: expanded, stride 0
                         ids=["strided", "expanded"])
def test_weight_views_are_read_through_their_strides(make_w: object) -> None:
    w = make_w()  # type: ignore[operator]
    x = torch.randn(6, 100)
    assert_matches(rmsnorm.rmsnorm(x, w), rmsnorm.reference(x, w), torch.float32)


def test_expanded_weight_on_a_wide_row_reads_no_memory_past_it() -> None:
    # Edge case #2 at N=4096 gave values up to 7.7e35 and NaN (reads past the 1-element storage).
    w = torch.full((1,), 0.5).expand(4096)
    x = torch.randn(3, 4096)
    assert_matches(rmsnorm.rmsnorm(x, w), rmsnorm.reference(x, w), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_activations_with_an_fp32_weight(dtype: torch.dtype) -> None:
    x, w = torch.randn(5, 300).to(dtype), torch.randn(300)
    out = rmsnorm.rmsnorm(x, w)
    assert out.dtype == dtype
    assert_matches(out, rmsnorm.reference(x, w), dtype)


@pytest.mark.parametrize("N,dtype", [(152064, torch.float32), (262144, torch.bfloat16)])
def test_vocabulary_wide_rows_run_looped(N: int, dtype: torch.dtype) -> None:
    x, w = torch.randn(2, N).to(dtype), torch.randn(N).to(dtype)  # refused before: too long for one block
    assert_matches(rmsnorm.rmsnorm(x, w), rmsnorm.reference(x, w), dtype)


def test_narrow_rows_share_a_program_on_the_gpu_policy() -> None:
    from rocm_triton_doctor.kernels.policy import row_config, target_from_name

    for t in ("gfx942", "gfx1100", "sm_90"):
        assert row_config(target_from_name(t), 128, 2, 65536)["ROWS"] > 1
        assert row_config(target_from_name(t), 8192, 2, 65536)["ROWS"] == 1
    # Odd narrow widths (scalar loads) on NVIDIA: one warp over ~512 elements; even widths keep four warps.
    h100 = target_from_name("sm_90")
    assert {k: row_config(h100, 37, 2, 65536)[k] for k in ("BLOCK", "ROWS", "num_warps")} == {"BLOCK": 64, "ROWS": 8,
                                                                                                "num_warps": 1}
    assert row_config(h100, 3, 4, 65536)["ROWS"] == 64 and row_config(h100, 1, 2, 65536)["num_warps"] == 4
    assert row_config(h100, 42, 2, 65536)["num_warps"] == 4 and row_config(target_from_name("gfx942"), 37, 2)["num_warps"] == 4


@pytest.mark.parametrize(("M", "N", "elem", "want"), [
    (35, 17, 2, (8, 4)), (5527, 17, 2, (8, 4)), (200000, 17, 2, (16, 1)), (33, 87, 2, (2, 4)), (476, 3, 2, (64, 4)),
    (100000, 3, 2, (64, 4)), (50000, 37, 2, (8, 1)), (4000, 5, 4, (32, 4)), (2048, 255, 2, (2, 1)), (9, 255, 2, (2, 1))])
def test_odd_narrow_rows_take_one_warp_only_on_large_grids(M: int, N: int, elem: int, want: tuple[int, int]) -> None:
    # H200, softmax (benchmarks/cliff_probe.py): one warp over 512 elements cost a small grid 2-3x (bf16 35x17 4.27 us
    # against 1.36 with four warps over 256), and won on grids of more than ODD_ROW_ONE_WARP_PROGRAMS programs.
    from rocm_triton_doctor.kernels.policy import row_config, target_from_name

    cfg = row_config(target_from_name("sm_90"), N, elem, M)
    assert (cfg["ROWS"], cfg["num_warps"]) == want


@pytest.mark.parametrize(("M", "N", "elem", "want"), [
    (342392, 98, 2, (8, 1)), (266305, 126, 2, (8, 1)), (134217, 250, 2, (8, 1)), (508400, 66, 2, (8, 1)),
    (342392, 98, 4, (16, 4)), (349525, 96, 2, (16, 4)), (335544, 100, 2, (16, 4)), (1000, 98, 2, (4, 4)),
    (800000, 42, 2, (32, 4))])
def test_16_bit_rows_of_4k_plus_2_elements_take_one_warp_on_large_grids(M: int, N: int, elem: int,
                                                                        want: tuple[int, int]) -> None:
    # H100 (benchmarks/narrow_rows_probe.py, docs/measurements/2026-11-28-h100-s16-narrow-even*.json): bf16 rows of
    # 98-250 elements start on 4-byte boundaries; one warp over 8 rows a program 83-95 % of copy against 41-80 % with
    # four warps. fp32 rows of 98 (8-byte aligned), widths of 4k elements, rows of 64 or fewer and small grids keep
    # four warps.
    from rocm_triton_doctor.kernels.policy import row_config, target_from_name

    cfg = row_config(target_from_name("sm_90"), N, elem, M)
    assert (cfg["ROWS"], cfg["num_warps"]) == want
    assert row_config(target_from_name("gfx942"), 98, 2, M)["num_warps"] != 1  # NVIDIA's measurement only


@pytest.mark.parametrize(("M", "N", "elem", "want"), [
    (16777216, 2, 2, (512, 4)), (8388608, 4, 2, (256, 4)), (11184810, 3, 2, (256, 4)), (8388608, 2, 4, (512, 4)),
    (2097152, 8, 4, (64, 4)), (1000, 2, 2, (64, 4)), (632, 58, 4, (8, 4)), (1079, 34, 4, (8, 4)), (367, 100, 4, (4, 4)),
    (3120, 42, 2, (8, 4)), (289262, 58, 4, (32, 4))])
def test_tiny_rows_pack_1024_elements_and_small_grids_512(M: int, N: int, elem: int, want: tuple[int, int]) -> None:
    # H100 (benchmarks/narrow_rows_probe.py, docs/measurements/2026-11-28-h100-s17-narrow-*.json): rows of 1-4 elements
    # on large grids ran at 28-56 % of copy with 64 rows (128-256 elements) over four warps, 97 % with 1024; grids of
    # fewer than two programs an SM at 2048 elements a program ran 1.2-1.8x slower than at 512. Large grids of wider
    # rows, and AMD (not measured), keep 2048 elements.
    from rocm_triton_doctor.kernels.policy import row_config, target_from_name

    cfg = row_config(target_from_name("sm_90"), N, elem, M)
    assert (cfg["ROWS"], cfg["num_warps"]) == want
    assert row_config(target_from_name("gfx942"), N, elem, M)["ROWS"] == max(1, min(1 << (M - 1).bit_length(),
                                                                                   2048 // cfg["BLOCK"], 64))


def test_a_row_count_class_per_power_of_two_for_narrow_rows() -> None:
    from rocm_triton_doctor.kernels.policy import row_class

    assert [row_class(17, m) for m in (1, 35, 64, 65, 5527, 10**9)] == [1, 64, 64, 128, 8192, 1 << 20]
    assert [row_class(4096, m) for m in (3, 64, 5527)] == [4, 64, 64]  # wider rows pack no rows: 64 at most


def test_refusals_are_clear() -> None:
    x, w = torch.randn(3, 8), torch.ones(8)
    with pytest.raises(TypeError, match="eps must be a number"):
        rmsnorm.rmsnorm(x, w, eps="1e-5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="eps must be a number"):
        rmsnorm.rmsnorm(x, w, eps=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="meta"):
        rmsnorm.rmsnorm(x.to("meta"), w.to("meta"))
    with pytest.raises(ValueError, match="0-dim"):
        rmsnorm.rmsnorm(torch.tensor(1.0), torch.ones(()))
    with pytest.raises(ValueError, match="out overlaps weight"):
        buf = torch.ones(3, 8)
        rmsnorm.rmsnorm(torch.randn(3, 8), buf[0], out=buf)
    with pytest.raises(ValueError, match="out overlaps x"):
        buf = torch.randn(4, 8)
        rmsnorm.rmsnorm(buf[:3], w, out=buf[1:])


def test_requires_grad_is_refused_while_autograd_records_and_fine_under_no_grad() -> None:
    x, w = torch.randn(3, 8), torch.nn.Parameter(torch.ones(8))
    with pytest.raises(ValueError, match="no backward"):
        rmsnorm.rmsnorm(x, w)  # edge case #9: the output came back silently detached
    with torch.no_grad():
        assert_matches(rmsnorm.rmsnorm(x, w), rmsnorm.reference(x, w.detach()), torch.float32)


def test_in_place_and_empty_inputs() -> None:
    x, w = torch.randn(4, 33), torch.randn(33)
    ref = rmsnorm.reference(x, w)
    assert_matches(rmsnorm.rmsnorm(x, w, out=x), ref, torch.float32)
    assert rmsnorm.rmsnorm(torch.ones(0, 16), torch.ones(16)).shape == (0, 16)
    assert rmsnorm.rmsnorm(torch.ones(3, 0), torch.ones(0)).shape == (3, 0)


# === backward (issue #17): gradients of every input against fp64 torch autograd, in the interpreter ==================

import torch.nn.functional as F  # noqa: E402

from tests.kernels.grads import assert_grads, dy_like, leaf  # noqa: E402

# (shape, x dtype, weight dtype, config): odd widths, 3-D input, mixed precision, a looped (wide) row by a small BLOCK.
LOOP = {"BLOCK": 64, "ROWS": 1, "num_warps": 4}
BWD = [((7, 33), torch.float32, torch.float32, None), ((2, 3, 45), torch.bfloat16, torch.bfloat16, None),
       ((5, 100), torch.float16, torch.float32, None), ((3, 200), torch.float32, torch.float32, LOOP),
       ((4, 130), torch.bfloat16, torch.float32, {"BLOCK": 32, "ROWS": 1, "num_warps": 4})]


@pytest.mark.parametrize("shape,dt,wdt,cfg", BWD, ids=[f"{s}-{d}-{w}-{'looped' if c else 'block'}" for s, d, w, c in BWD])
def test_backward_matches_fp64_autograd(shape: tuple[int, ...], dt: torch.dtype, wdt: torch.dtype, cfg: dict | None) -> None:
    gen = torch.Generator().manual_seed(3)
    x, w = leaf(torch.randn(shape, generator=gen), dt), leaf(1 + 0.1 * torch.randn(shape[-1], generator=gen), wdt)
    dy = dy_like(x, gen)
    y, rstd = rmsnorm._forward(x.detach(), w.detach(), 1e-6, config=cfg, stats=True)
    assert rstd is not None
    dx, dw = rmsnorm.rmsnorm_backward(dy, x.detach(), w.detach(), rstd, config=cfg)
    assert_grads(lambda xd, wd: F.rms_norm(xd, (shape[-1],), wd, 1e-6), (x, w), dy, (dx, dw))


def test_autograd_function_and_custom_op_give_the_gradients() -> None:
    gen = torch.Generator().manual_seed(4)
    for fn in (lambda x, w: rmsnorm.RMSNormFunction.apply(x, w, 1e-6), rmsnorm.autograd_op, rmsnorm.custom_op_form):
        x, w = leaf(torch.randn(6, 40, generator=gen), torch.float32), leaf(torch.randn(40, generator=gen), torch.float32)
        dy = dy_like(x, gen)
        fn(x, w).backward(dy)
        assert_grads(lambda xd, wd: F.rms_norm(xd, (40,), wd, 1e-6), (x, w), dy, (x.grad, w.grad))


def test_custom_op_opcheck() -> None:
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(4, 24, generator=gen, requires_grad=True)
    w = torch.randn(24, generator=gen, requires_grad=True)
    torch.library.opcheck(rmsnorm._rmsnorm_op, (x, w, 1e-6))
    torch.library.opcheck(rmsnorm._rmsnorm_backward_op, (torch.randn(4, 24), x.detach(), w.detach(), torch.rand(4) + 0.5))


def test_backward_of_strided_and_mixed_precision_inputs_through_the_custom_op() -> None:
    # The forward reads views through their strides; the backward makes them contiguous. A transposed bf16 input
    # with an fp32 weight (mixed precision, as models keep norm weights) and an expanded (stride-0) weight.
    gen = torch.Generator().manual_seed(6)
    base = leaf(torch.randn(40, 6, generator=gen), torch.bfloat16)
    w = leaf(1 + 0.1 * torch.randn(40, generator=gen), torch.float32)
    dy = torch.randn(6, 40, generator=gen).to(torch.bfloat16)
    rmsnorm.autograd_op(base.t(), w, 1e-6).backward(dy)
    assert_grads(lambda bd, wd: F.rms_norm(bd.t(), (40,), wd, 1e-6), (base, w), dy, (base.grad, w.grad))
    w1 = leaf(torch.full((1,), 1.5), torch.float32)
    x = leaf(torch.randn(3, 17, generator=gen), torch.float32)
    dy = torch.randn(3, 17, generator=gen)
    rmsnorm.autograd_op(x, w1.expand(17), 1e-6).backward(dy)
    assert_grads(lambda xd, wd: F.rms_norm(xd, (17,), wd.expand(17), 1e-6), (x, w1), dy, (x.grad, w1.grad))


def test_config_override_is_checked_and_zero_width_rows_backpropagate() -> None:
    # config= (tests, tuning) had surfaced bad values as KeyError or Triton errors; a (3, 0) input's backward had
    # raised torch's reshape error (fuzz round 2026-11-23).
    x, w = torch.randn(4, 8), torch.randn(8)
    for bad, match in (({"BLOCK": 3}, "power of two"), ({"BLOK": 8}, "unknown config keys"), ({"BLOCK": 8, "ROWS": 3},
                                                                                                "ROWS")):
        with pytest.raises(ValueError, match=match):
            rmsnorm.rmsnorm(x, w, config=bad)
    torch.testing.assert_close(rmsnorm.rmsnorm(x, w, config={"BLOCK": 8}), rmsnorm.rmsnorm(x, w))
    xe, we = torch.randn(3, 0, requires_grad=True), torch.randn(0, requires_grad=True)
    rmsnorm.autograd_op(xe, we).sum().backward()
    assert xe.grad is not None and xe.grad.shape == (3, 0)


@pytest.mark.parametrize("shape,dt,wdt,cfg", BWD, ids=[f"{s}-{d}-{w}-{'looped' if c else 'block'}" for s, d, w, c in BWD])
def test_backward_with_output_writes_the_forward_rows(shape: tuple[int, ...], dt: torch.dtype, wdt: torch.dtype,
                                                      cfg: dict | None) -> None:
    # norm_linear's recompute: y written by the backward pass from the saved rstd, equal to the forward's y.
    gen = torch.Generator().manual_seed(4)
    x, w = torch.randn(shape, generator=gen).to(dt), (1 + 0.1 * torch.randn(shape[-1], generator=gen)).to(wdt)
    dy = torch.randn(shape, generator=gen).to(dt)
    y, rstd = rmsnorm._forward(x, w, 1e-6, config=cfg, stats=True)
    assert rstd is not None
    dx0, dw0 = rmsnorm.rmsnorm_backward(dy, x, w, rstd, config=cfg)
    dx, dw, y2 = rmsnorm.rmsnorm_backward_with_output(dy, x, w, rstd, config=cfg)
    assert torch.equal(dx, dx0) and torch.equal(dw, dw0)
    torch.testing.assert_close(y2, y.reshape(-1, shape[-1]), rtol=0, atol=0)
    empty = torch.empty(0, shape[-1], dtype=dt)
    assert rmsnorm.rmsnorm_backward_with_output(empty, empty, w, torch.empty(0))[2].shape == (0, shape[-1])


def test_no_weight_is_no_scale_in_every_form() -> None:
    # F.rms_norm(x, shape, None): a None weight had been refused ("expected torch.Tensor inputs", fuzz round 4).
    import torch.nn.functional as F

    x = torch.randn(5, 37, requires_grad=True)
    ref = F.rms_norm(x, (37,), None, 1e-6)
    g = torch.randn(5, 37)
    want = torch.autograd.grad(ref, [x], g)[0]
    torch.testing.assert_close(rmsnorm.rmsnorm(x.detach(), None), ref.detach(), rtol=1e-5, atol=1e-5)
    for form in (rmsnorm.autograd_op, rmsnorm.custom_op_form):
        y = form(x, None)
        torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(torch.autograd.grad(y, [x], g)[0], want, rtol=1e-5, atol=1e-5)


def test_model_layout_with_three_leading_dims_is_read_in_place() -> None:
    # q of (B, H, S, D) transposed to (B, S, H, D) (a QK-norm after the head split): its leading dims (B, S, H) do not
    # merge; they were refused ("do not fold into two") and are now read through a third folded stride.
    q = torch.randn(2, 3, 5, 16, dtype=torch.float64).float().transpose(1, 2)
    w = torch.randn(16)
    for cfg in (None, {"BLOCK": 8, "ROWS": 2, "num_warps": 4}, {"BLOCK": 4, "ROWS": 1, "num_warps": 4, "SPLIT": 2}):
        torch.testing.assert_close(rmsnorm.rmsnorm(q, w, config=cfg), rmsnorm.reference(q, w).float(),
                                   atol=1e-5, rtol=1e-5)
