"""`smoke --preset random`: the draws (deterministic per seed, within bounds, every kernel) and one seed's cases run
and checked in the interpreter."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"

from rocm_triton_doctor import kernels
from rocm_triton_doctor.smoke import random_shapes
from tests.kernels.helpers import check_in_interpreter


def _names(cases: list) -> list[str]:  # type: ignore[type-arg]
    return [c.id for c in cases]


def test_every_registered_kernel_has_a_draw() -> None:
    assert set(random_shapes.DRAWS) == set(kernels.NAMES)


def test_a_seed_is_one_draw_and_another_seed_another() -> None:
    a = random_shapes.cases(kernels.NAMES, True, 5)
    assert _names(a) == _names(random_shapes.cases(kernels.NAMES, True, 5))
    assert len(a) == random_shapes.PER_KERNEL * len(kernels.NAMES)
    assert len(set(_names(a)) & set(_names(random_shapes.cases(kernels.NAMES, True, 6)))) < len(a) // 4
    # --only picks rows out of the same draw: a failing row is reproducible by its seed alone
    only = random_shapes.cases(("gemm", "softmax"), True, 5)
    assert _names(only) == [n for n in _names(a) if n.startswith(("gemm[", "softmax["))]


def test_gpu_draws_stay_within_their_bounds_and_reach_odd_sizes() -> None:
    cases = [c for seed in range(40) for c in random_shapes.cases(kernels.NAMES, False, seed)]
    assert max(c.bytes for c in cases) < 8 * 2**30  # every tensor of a row together: a few GiB at most
    assert max(c.flops for c in cases if c.kernel in ("gemm", "attention")) <= 4.01e12
    gemm = [c.params for c in cases if c.kernel == "gemm"]
    assert any(p["M"] <= 16 for p in gemm) and any(p["K"] % 8 for p in gemm) and any(p["N"] % 8 for p in gemm)
    att = [c.params for c in cases if c.kernel == "attention"]
    assert {p["D"] for p in att} >= {32, 64, 80, 96, 128, 256} and any(p["S"] != p["S_k"] for p in att)
    assert any(p["H"] != p["H_kv"] for p in att)


def test_a_whole_draw_is_right_in_the_interpreter() -> None:
    for case in random_shapes.cases(kernels.NAMES, True, 1):
        check_in_interpreter(case)


def test_a_smaller_card_draws_smaller_shapes() -> None:
    big = random_shapes.gpu_bounds(80e9)
    small = random_shapes.gpu_bounds(16e9)
    assert small.row_elems == int(big.row_elems / 5) and small.gemm_dim < big.gemm_dim
    assert random_shapes.gpu_bounds(1e9).row_elems == int(big.row_elems * 0.05)  # floor: 1/20
    cases = [c for seed in range(30) for c in random_shapes.cases(kernels.NAMES, False, seed, gpu_bytes=16e9)]
    assert max(c.bytes for c in cases) < 1.5 * 2**30
    lce = [c.params for c in cases if c.kernel == "linear_cross_entropy"]
    assert max(p["N"] * p["V"] for p in lce) <= small.row_elems  # the fp64 reference's logits stay bounded
