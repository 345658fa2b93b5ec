"""Is a kernel's output right? Poisoned outputs, an fp32/fp64 reference, a tolerance table, and dropout statistics."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from rocm_triton_doctor.kernels.base import Case, Inputs, dtype_name
from rocm_triton_doctor.kernels.tolerances import tolerance

Z_BOUND = 5.0  # |z| < 5 for the keep-rate: a false alarm about once in 1.7 million runs (kernels.md §7.2)


@dataclass
class CaseVerdict:
    ok: bool
    max_abs: float
    max_rel: float
    atol: float
    rtol: float
    problems: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


def compare(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float,
            slack: torch.Tensor | None = None) -> tuple[bool, float, float, list[str]]:
    """|out - ref| <= atol + rtol·|ref| (+ slack, elementwise) everywhere; NaN never passes; unwritten (still-poisoned)
    elements are named."""
    problems = []
    o = out.detach().double()
    r = ref.detach().double().to(o.device)
    if o.shape != r.shape:
        return False, math.inf, math.inf, [f"shape {tuple(o.shape)} != reference {tuple(r.shape)}"]
    nan_out = torch.isnan(o) & ~torch.isnan(r)
    if nan_out.any():
        problems.append(f"{int(nan_out.sum())} element(s) NaN/unwritten (output was poisoned with NaN before the run)")
    inf_out = torch.isinf(o) & ~torch.isinf(r)
    if inf_out.any():
        problems.append(f"{int(inf_out.sum())} element(s) infinite")
    diff = (o - r).abs()
    finite = torch.isfinite(diff)
    max_abs = float(diff[finite].max()) if finite.any() else 0.0
    rel = diff / r.abs().clamp_min(1e-6)
    max_rel = float(rel[finite].max()) if finite.any() else 0.0
    bound = atol + rtol * r.abs()
    if slack is not None:
        bound = bound + slack.detach().double().to(o.device).nan_to_num(0.0, 0.0, 0.0)  # a NaN slack allows nothing
    bad = (diff > bound) & finite
    if bad.any():
        idx = int(torch.nonzero(bad.flatten())[0])
        problems.append(f"{int(bad.sum())} element(s) outside tolerance (first at flat index {idx}: "
                        f"got {float(o.flatten()[idx]):.6g}, want {float(r.flatten()[idx]):.6g})")
    return not problems, max_abs, max_rel, problems


def check_case(case: Case, inputs: Inputs, device: torch.device, tf32: bool) -> CaseVerdict:
    tol = tolerance(dtype_name(case.dtype), tf32=tf32 and case.tf32)
    shape = case.out_shape(inputs)
    out = case.run(inputs, torch.full(shape, float("nan"), dtype=case.dtype, device=device))
    if case.dropout is None:
        ref = case.reference(inputs)
        slack = None
        if case.eager_slack and case.eager is not None:
            # Torch eager's own error in this dtype, element by element: a kernel is not held to more than the
            # framework computes (base.Case.eager_slack says where; what it allowed is in the details).
            slack = (case.eager(inputs).double().to(ref.device) - ref.double()).abs()
            if case.slack_pool is not None:
                slack = case.slack_pool(slack)
        ok, mabs, mrel, problems = compare(out, ref, tol.atol, tol.rtol, slack)
        details = {} if slack is None else {"eager_slack_max": float(slack.nan_to_num(0.0, 0.0, 0.0).max())}
        return CaseVerdict(ok, mabs, mrel, tol.atol, tol.rtol, problems, details)
    return _check_dropout(case, inputs, out, device, tol.atol, tol.rtol)


def _check_dropout(case: Case, inputs: Inputs, out: torch.Tensor, device: torch.device, atol: float,
                   rtol: float) -> CaseVerdict:
    d = case.dropout
    assert d is not None
    q = 1.0 - d.p
    und = d.undropped(inputs).double().to(out.device)
    obs = d.observed(inputs, out).double()
    # The mask is read off the output: kept elements must equal undropped/(1-p), dropped ones 0. Where the undropped
    # value is ~0 the two look alike, so the keep-rate statistics use only the elements that are clearly decided.
    decided = und.abs() > 1e-2
    expected = d.combine(inputs, torch.where(obs != 0, und / q, torch.zeros_like(und)))
    kept = (obs != 0) & decided
    ok, mabs, mrel, problems = compare(out, expected, atol, rtol)
    n = int(decided.sum())
    k = int(kept.sum())
    z = (k - n * q) / math.sqrt(n * q * (1 - q)) if n else 0.0
    details: dict[str, Any] = {"p": d.p, "keep_rate": k / n if n else None, "z": round(z, 2), "n": n}
    if n and abs(z) >= Z_BOUND:
        problems.append(f"keep rate {k / n:.4f} is {z:+.1f} sigma from {q:.4f} (n={n})")
    again = case.run(inputs, None)
    if not torch.equal(torch.nan_to_num(again), torch.nan_to_num(out)):
        problems.append("same seed gave a different result (mask not reproducible)")
    other = case.run({**inputs, "seed": int(inputs["seed"]) + 1}, None)
    other_kept = (d.observed(inputs, other).double() != 0) & decided
    agree = float((other_kept == kept)[decided].double().mean()) if n else 1.0
    details["other_seed_agreement"] = round(agree, 4)
    if n and agree > 0.999:
        problems.append("a different seed gave the same mask")
    return CaseVerdict(not problems, mabs, mrel, atol, rtol, problems, details)
