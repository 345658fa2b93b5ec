"""Where a GEMM's backward loses to eager autograd's (issue #16, hunts 1-10: GEMM rows whose forward ran at or above
eager's speed but whose backward ran at 0.46-0.88x of it, on odd shapes). For each row, every launch of
gemm_autograd's backward (the epilogue's gradient kernel, dA = g·Bᵀ, dB = Aᵀ·g, the bias sum) and of eager's
(gelu_backward / threshold_backward, the bias sum, the two torch.matmul), one at a time (graph replay), beside the
whole forward and backward of each (backward = forward + backward less forward, as backward_hunt.py times it) and our
forward without grad (the fused launch). bias_gelu: the GELU kernels after the GEMM in both forms (row tiles, one flat
stretch). dA and dB also with both operands copied aligned (config ALIGN_COPY). Every product is checked against an
fp64 one first. (Session 34's first run, …-s34-split.json, timed the backward that formed pre again in fp32.)

    PYTHONPATH=. python benchmarks/gemm_backward_split_probe.py [--only EPILOGUE] [--json PATH]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import torch
import triton.testing as tt

from gemm_backward_parts_probe import plan_of
from gemm_longk_probe import save
from rocm_triton_doctor.kernels import gemm, gemm_autograd

# (dtype, M, K, N, epilogue, B given as the transpose of an (N, K) weight): backward_hunt.py's rows (its names read
# m x k x n) whose backward ran under 0.9x eager's in hunts 6-10, and two aligned products for scale.
ROWS: list[tuple[str, int, int, int, str, bool]] = [
    ("bfloat16", 15449, 74, 610, "bias_gelu", False), ("bfloat16", 8054, 29, 27063, "bias_gelu", False),
    ("bfloat16", 9230, 42, 1943, "bias_gelu", True), ("bfloat16", 11997, 558, 43, "bias_gelu", True),
    ("bfloat16", 1052, 849, 75, "bias_gelu", False), ("float32", 920, 10545, 161, "bias_gelu", False),
    ("float32", 16288, 451, 64, "bias_gelu", True), ("float32", 101, 301, 2264, "bias_gelu", True),
    ("float32", 337, 123, 507, "bias_gelu", False), ("bfloat16", 2290, 182, 1077, "bias", False),
    ("bfloat16", 5270, 36, 121, "bias", True), ("fp16", 338, 31, 1561, "bias", False),
    ("bfloat16", 5858, 27, 5239, "bias_relu", True), ("bfloat16", 2834, 4613, 69, "bias_relu", True),
    ("float32", 607, 728, 1241, "none", True), ("fp16", 10317, 215, 1932, "none", False),
    ("float32", 11315, 30, 2042, "bias", False), ("bfloat16", 4096, 4096, 4096, "bias_gelu", True),
    ("bfloat16", 8192, 1024, 4096, "bias_gelu", True),
]
GELU_FLAT = gemm_autograd.gelu_flat
DEVICE = "cuda"  # a CPU dry run (the interpreter) sets it to "cpu"
DT = {"bfloat16": torch.bfloat16, "fp16": torch.float16, "float32": torch.float32}


def us(fn: Callable[[], Any]) -> float:
    return float(tt.do_bench_cudagraph(fn, rep=25)) * 1e3


def checked(name: str, got: torch.Tensor, ref: torch.Tensor, dt: torch.dtype) -> str | None:
    err = float((got.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
    return f"{name} wrong {err:.1e}" if err > (1e-4 if dt == torch.float32 else 2e-2) else None


def run_row(name: str, M: int, K: int, N: int, epi: str, bt: bool, g: torch.Generator) -> dict[str, Any]:
    dt = DT[name]
    a = torch.randn((M, K), generator=g, device=DEVICE).to(dt)
    w = (torch.randn((N, K) if bt else (K, N), generator=g, device=DEVICE) * K ** -0.5).to(dt)
    b = w.t() if bt else w
    bias = torch.randn((N,), generator=g, device=DEVICE).to(dt) if epi != "none" else None
    dy = torch.randn((M, N), generator=g, device=DEVICE).to(dt)
    act = gemm.EPILOGUES[epi] if epi in ("bias_relu", "bias_gelu") else 0
    row: dict[str, Any] = {"row": f"{name} {M}x{K}x{N} {epi}{' B^T' if bt else ''}", "ours": {}, "eager": {},
                           "plan": {}, "problems": []}
    # eager's pieces: the saved pre-activation, its gradient, the bias sum, the two products
    pre = a @ b + bias if bias is not None else a @ b
    ge = dy
    if epi == "bias_gelu":
        row["eager"]["act'"] = us(lambda: torch.ops.aten.gelu_backward(dy, pre, approximate="tanh"))
        ge = torch.ops.aten.gelu_backward(dy, pre, approximate="tanh")
    elif epi == "bias_relu":
        y = torch.relu(pre)
        row["eager"]["act'"] = us(lambda: torch.ops.aten.threshold_backward(dy, y, 0))
        ge = torch.ops.aten.threshold_backward(dy, y, 0)
    if bias is not None:
        row["eager"]["sum"] = us(lambda: ge.sum(0))
    row["eager"]["dA"] = us(lambda: ge @ b.t())
    row["eager"]["dB"] = us(lambda: a.t() @ ge)
    # ours, piece by piece, as GemmFunction.backward runs them (bias_gelu: the forward keeps pre; both GELU forms)
    v = None
    if act == gemm_autograd.GELU:
        v = gemm.gemm(a, b, bias, "bias")
        flat = gemm_autograd.gelu_flat(N, 0.0)
        for form in (flat, not flat):
            gemm_autograd.gelu_flat = lambda *_, f=form: f  # type: ignore[misc]
            tag = "flat" if form else "tiles"
            row["ours"][f"gelu fwd {tag}"] = us(lambda: gemm_autograd.gelu_forward(v, 0.0, 0))
            row["ours"][f"act' {tag}"] = us(lambda: gemm_autograd.epilogue_backward(dy, v, act, 0.0, 0, dt))
        gemm_autograd.gelu_flat = GELU_FLAT
        row["plan"]["act'"] = "flat" if flat else "tiles"
    elif act == gemm_autograd.RELU:
        v = gemm.gemm(a, b, bias, epi)
        row["ours"]["act'"] = us(lambda: gemm_autograd.epilogue_backward(dy, v, act, 0.0, 0, dt))
    if act:
        g_ours, _ = gemm_autograd.epilogue_backward(dy, v, act, 0.0, 0, dt)
    else:
        g_ours = dy
        if bias is not None:
            row["ours"]["sum"] = us(lambda: dy.sum(0, dtype=torch.float32))
    for part, x, y in (("dA", g_ours, b.t()), ("dB", a.t(), g_ours)):
        ref = x.double() @ y.double()
        for label, cfg in ((part, None), (part + " copied", {"ALIGN_COPY": True})):
            bad = checked(label, gemm.gemm(x, y, config=cfg), ref, dt)
            if bad:
                row["problems"].append(bad)
                continue
            row["ours"][label] = us(lambda x=x, y=y, cfg=cfg: gemm.gemm(x, y, config=cfg))
        row["plan"][part] = plan_of(x, y, "auto")
    # the whole backward of each: (forward + backward) - forward, as backward_hunt.py
    leaves = [t.detach().clone().requires_grad_() for t in (a, b) + ((bias,) if bias is not None else ())]

    def ours_f() -> torch.Tensor:
        return gemm_autograd.gemm_autograd(*leaves[:2], leaves[2] if bias is not None else None, epi)

    def eager_f() -> torch.Tensor:
        return gemm.eager(*leaves[:2], leaves[2] if bias is not None else None, epi, 0.0)

    for key, f in (("ours", ours_f), ("eager", eager_f)):
        fb = us(lambda f=f: torch.autograd.grad(f(), leaves, dy))
        row[key]["forward"] = us(lambda f=f: f().detach())
        row[key]["backward"] = fb - row[key]["forward"]
    with torch.no_grad():
        row["ours"]["forward, no grad"] = us(ours_f)
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default=None, help="only the rows of this epilogue (e.g. bias_gelu)")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device=DEVICE).manual_seed(0)
    rows = []
    for spec in ROWS:
        if args.only and spec[4] != args.only:
            continue
        row = run_row(*spec, g)
        rows.append(row)
        o, e = row["ours"], row["eager"]
        fb = (e["forward"] + e["backward"]) / (o["forward"] + o["backward"])
        print(f"{row['row']:36} f+b {fb:.2f}x eager, bwd {e['backward'] / o['backward']:.2f}x, fwd "
              f"{e['forward'] / o['forward']:.2f}x (no grad {e['forward'] / o['forward, no grad']:.2f}x)"
              + "".join(f"\n    {k:16} {v:7.1f}" + (f"  eager {e[k]:7.1f}" if k in e else "")
                        + (f"  [{row['plan'][k]}]" if k in row["plan"] else "") for k, v in o.items())
              + "".join(f"\n    {p}" for p in row["problems"]), flush=True)
        torch.cuda.empty_cache()
    save(args.json, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
