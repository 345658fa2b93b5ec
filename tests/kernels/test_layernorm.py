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
