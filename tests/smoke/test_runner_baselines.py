"""The smoke runner's baseline columns: a torch.compile failure on the eager BASELINE is recorded on the row, and the
row (our kernel's result) stands (seen on an H100: an InductorError compiling the linear+cross-entropy eager form)."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created (this file imports kernel modules)

from types import SimpleNamespace

import torch

from rocm_triton_doctor.kernels import add_mul, policy
from rocm_triton_doctor.smoke import runner


class _Timed:
    median_ms = 0.5

    def to_dict(self) -> dict[str, float]:
        return {"median_ms": self.median_ms}


def test_a_failing_torch_compile_baseline_is_recorded_not_raised(monkeypatch) -> None:
    case = add_mul.KERNEL.cases("quick", policy.Target("interpreter", "cpu", 1))[0]
    inputs = case.setup(torch.device("cpu"), torch.Generator().manual_seed(0))
    r = runner.CaseResult(case.kernel, case.name, "float32", "pass")

    def broken_compile(fn):  # what torch.compile does when inductor trips
        raise RuntimeError("InductorError: AssertionError: expected [s39] to have been codegen-ed.")

    monkeypatch.setattr(torch, "compile", broken_compile)
    from rocm_triton_doctor.smoke import timing as real

    timing = SimpleNamespace(bench=lambda fn: _Timed(), bench_graph=lambda fn: 0.001, roofline_us=real.roofline_us,
                             launch_bound=real.launch_bound, compute_bound=real.compute_bound)
    ceilings = SimpleNamespace(copy_gbps=1000.0, matmul_tflops={})
    runner._time_case(case, inputs, r, True, ceilings, torch, timing)
    assert r.compile_ms is None and r.speedup_compile is None
    assert r.compile_error and "InductorError" in r.compile_error
    assert r.triton_ms == {"median_ms": 0.5} and r.eager_ms == {"median_ms": 0.5}


def test_a_case_with_eager_slack_is_not_shown_as_dropout() -> None:
    """The linear cross-entropy case is checked with torch eager's own error as slack; that figure is the row's
    eager_slack_max, not dropout statistics (the table printed a dropout line for it and raised KeyError: 'p' on a
    GPU's `smoke --preset quick`, session 24)."""
    from rich.console import Console

    from rocm_triton_doctor.kernels import linear_cross_entropy
    from rocm_triton_doctor.smoke import correctness, render
    from rocm_triton_doctor.smoke import timing as real
    from rocm_triton_doctor.smoke.runner import SmokeReport

    case = linear_cross_entropy.make_case(24, 16, 300, torch.float32)
    assert case.eager_slack
    r = runner._run_case(case, torch.device("cpu"), False, False, 0, None, torch, correctness, real)
    assert r.status == "pass", r.problems
    assert r.dropout is None and isinstance(r.eager_slack_max, float)
    report = SmokeReport("cpu", "CPU", "interpreter", "quick", {}, [r], {}, {}, [], "2026-11-28T00:00:00Z", 1.0)
    console = Console(record=True, width=200)
    render.table(report, console)
    assert "dropout" not in console.export_text()
