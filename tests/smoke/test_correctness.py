"""smoke/correctness.compare and check_case: the tolerance, NaN and poisoning rules, and eager_slack."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created (this file imports a kernel module)

import torch

from rocm_triton_doctor.kernels import linear_cross_entropy as lce
from rocm_triton_doctor.kernels.base import Case
from rocm_triton_doctor.smoke import correctness


def test_compare_tolerance_and_nan() -> None:
    ref = torch.tensor([1.0, 2.0, 0.0])
    assert correctness.compare(ref + 1e-5, ref, 1e-4, 1e-4)[0]
    ok, _, _, problems = correctness.compare(ref + torch.tensor([0.0, 0.1, 0.0]), ref, 1e-4, 1e-4)
    assert not ok and "1 element(s) outside tolerance" in problems[0]
    assert not correctness.compare(torch.tensor([1.0, float("nan"), 0.0]), ref, 1e-4, 1e-4)[0]


def test_slack_widens_the_bound_per_element_and_a_nan_slack_allows_nothing() -> None:
    ref = torch.tensor([1.0, 2.0, 3.0])
    out = ref + torch.tensor([0.05, 0.05, 0.0])
    assert not correctness.compare(out, ref, 1e-4, 1e-4)[0]
    assert correctness.compare(out, ref, 1e-4, 1e-4, slack=torch.tensor([0.06, 0.06, 0.0]))[0]
    assert not correctness.compare(out, ref, 1e-4, 1e-4, slack=torch.tensor([0.06, 0.0, 0.0]))[0]
    assert not correctness.compare(out, ref, 1e-4, 1e-4, slack=torch.tensor([float("nan"), float("inf"), 0.0]))[0]


def _case(eager_out: torch.Tensor, slack: bool) -> Case:
    ref = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    return Case("t", "t", torch.bfloat16, setup=lambda d, g: {}, run=lambda x, out: torch.tensor(
        [1.0, 2.0625, 3.0], dtype=torch.bfloat16), reference=lambda x: ref, eager=lambda x: eager_out, flops=0.0,
        bytes=0.0, out_shape=lambda x: (3,), eager_slack=slack)


def test_eager_slack_accepts_what_eager_gets_wrong_too_and_only_where_it_does() -> None:
    # 2.0625 against 2.0 is outside bf16's tolerance (0.02 + 0.02·2 = 0.06).
    cpu = torch.device("cpu")
    same = torch.tensor([1.0, 2.0625, 3.0])
    assert not correctness.check_case(_case(same, False), {}, cpu, tf32=False).ok
    v = correctness.check_case(_case(same, True), {}, cpu, tf32=False)
    assert v.ok and v.details["eager_slack_max"] == 0.0625
    # eager wrong somewhere else: no slack where ours is wrong
    assert not correctness.check_case(_case(torch.tensor([1.5, 2.0, 3.0]), True), {}, cpu, tf32=False).ok


def test_linear_cross_entropy_cases_take_the_eager_slack() -> None:
    assert lce.make_case(8, 16, 9, torch.bfloat16).eager_slack


def test_linear_cross_entropy_pools_the_slack_over_each_row_of_its_gradients() -> None:
    case = lce.make_case(2, 3, 2, torch.bfloat16)  # [loss, ∂h (2x3), ∂W (2x3)]
    assert case.slack_pool is not None
    err = torch.tensor([0.5, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.3, 0.0, float("nan"), 0.0, 0.0], dtype=torch.float64)
    pooled = case.slack_pool(err)
    assert pooled[0] == 0.5  # the loss keeps its own
    assert pooled[1:4].tolist() == [0.1] * 3 and pooled[4:7].tolist() == [0.0] * 3  # a row's worst, row by row
    assert pooled[7:10].tolist() == [0.3] * 3 and pooled[10:13].isnan().all()  # a NaN row allows nothing
