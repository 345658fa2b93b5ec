"""The worst GPU-time rows of `smoke --preset random` seeds 17-21 (docs/measurements/2026-11-27-h200-s1[01]-random-*):
GEMMs with a handful of output columns (N <= 16: a router, a classifier head) or tiny fp32 products, and softmax over
odd narrow rows. Each row times eager torch, the policy ("auto") and candidate forms, in GPU time (CUDA-graph replay),
every output checked against an fp64 reference; `T:` forms run the transposed problem (C^T = B^T A^T, written through
out=c.T), where a few columns become a few rows and the decode/GEMV paths apply.

    PYTHONPATH=.:benchmarks python benchmarks/cliff_probe.py --json cliff.json [--part gemm|softmax|all]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

import torch
from triton.testing import do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm, layernorm, rmsnorm, softmax
from rocm_triton_doctor.kernels.tolerances import tolerance

F32, BF16, F16 = torch.float32, torch.bfloat16, torch.float16
# (M, K, N, dtype, B^T, epilogue)
SKINNY: list[tuple[int, int, int, torch.dtype, bool, str]] = [
    (1561, 5195, 4, F16, True, "bias_relu"), (8192, 4096, 8, BF16, True, "none"), (16384, 4096, 2, BF16, True, "none"),
    (4096, 11008, 16, BF16, True, "none"), (2048, 4096, 8, F32, True, "none"), (30000, 768, 3, F32, True, "bias"),
    (5000, 4097, 6, BF16, False, "none"), (777, 2000, 12, F16, True, "bias"),
]
TINY: list[tuple[int, int, int, torch.dtype, bool, str]] = [
    (4905, 8, 1367, F32, False, "bias"), (177, 43, 43, F32, True, "none"), (110, 83, 77, F32, True, "none"),
    (2, 6, 2573, F32, False, "bias"), (1109, 2141, 465, BF16, True, "bias_relu"), (1347, 369, 85, F16, True, "bias_relu"),
    (4096, 16, 4096, BF16, False, "none"), (8192, 4, 2048, F32, False, "none"),
]
SOFTMAX = [(35, 17, BF16), (5527, 17, BF16), (200000, 17, BF16), (33, 87, BF16), (476, 3, F16), (100000, 3, F16),
           (50000, 37, BF16), (4000, 5, F32)]
# --part after: the rules of session 12 against the configs they replaced, on other shapes than the ones they came from
WIDER = [(65536, 4096, 64, BF16, True, "none"), (16384, 4096, 32, BF16, True, "bias"), (32768, 8192, 16, BF16, True, "none"),
         (8192, 8192, 64, F16, False, "none"), (4096, 4096, 48, F32, True, "none"), (1200, 4096, 24, BF16, True, "bias"),
         (3000, 4096, 32, BF16, True, "none"), (9000, 2048, 48, F16, True, "none"),
         (2500, 3000, 64, BF16, True, "none"), (4096, 1024, 20, F32, True, "none"), (700, 9000, 40, BF16, False, "none")]
SKINNY_NEW = [(3000, 2048, 10, BF16, True, "bias"), (100000, 512, 4, BF16, True, "none"), (257, 8191, 7, F16, True, "none"),
              (65, 4096, 16, F32, False, "none"), (12000, 1536, 1, BF16, True, "none"), (40, 20000, 9, BF16, True, "none")]
ROWS_NEW = [(9, 33, BF16), (1000, 45, BF16), (20000, 101, F16), (3000, 13, F32), (70000, 29, BF16), (300000, 7, BF16),
            (2048, 255, BF16), (600, 3, F32)]
# --part n128: 65-128 columns, past the skinny rule (policy_waves.SKINNY_N)
N128 = [(3000, 4096, 100, BF16, True, "none"), (8192, 4096, 128, BF16, True, "none"), (1500, 2048, 80, BF16, False, "bias"),
        (20000, 1024, 96, F16, True, "none"), (4096, 2048, 128, F32, True, "none"), (2000, 5000, 72, BF16, True, "none"),
        (600, 8192, 112, BF16, True, "none"), (50000, 768, 65, BF16, True, "none")]
# --part split: few wide rows, one program per row against the split (rows_split.py)
SPLIT_ROWS = [(1, 152064, BF16), (1, 152064, F32), (4, 128256, BF16), (8, 50257, BF16), (6, 288582, F16),
              (2, 262144, F32), (16, 152064, BF16), (32, 65536, F32), (1, 32000, F32), (3, 100000, BF16)]
# the GEMV kernel with many row chunks: fp32 8192x4x2048 took 273 us against 16 for 4905x8x1367 (cliff.json)
GEMV_MANY = [(8192, 4, 2048, F32, False), (8192, 4, 2047, F32, False), (4905, 8, 1368, F32, False),
             (4905, 8, 1367, F32, False), (8192, 8, 2048, F32, True), (1024, 4, 2048, F32, False),
             (8192, 4, 256, F32, False), (60000, 4, 4, F32, False), (512, 64, 64, F32, True), (1000, 32, 32, F32, False),
             (300, 100, 100, F32, True), (64, 256, 256, F32, True), (2000, 50, 30, F32, False), (177, 43, 43, F32, True)]


from rocm_triton_doctor.kernels.policy import SKINNY_N as _SKINNY_N  # noqa: E402


QUICK = False  # --quick: the policy before and after only, no tile variants


def bench(fn: Callable[[], Any]) -> float:
    return float(do_bench_cudagraph(fn, rep=20))


def _old_policy(on: bool) -> None:
    """Switch session 12's skinny-N rule off (on=True) or back on, dropping every cached config and launch plan."""
    from rocm_triton_doctor.kernels import policy

    policy.SKINNY_N = 0 if on else _SKINNY_N
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()


def _timed(row: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The forms of a row that ran (their timings), and the fastest of them."""
    ok = {k: v for k, v in row.items() if isinstance(v, dict) and "ms" in v}
    return ok, min(ok, key=lambda k: ok[k]["ms"])


def _form(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None, epi: str, transposed: bool,
          kern: str, cfg: dict[str, Any] | None) -> Callable[[], Any]:
    if transposed:  # C^T = B^T A^T written through c's transpose (epilogue none)
        return lambda: gemm.gemm(b.t(), a.t(), out=c.t(), kernel=kern, config=cfg)
    return lambda: gemm.gemm(a, b, bias, epi, out=c, kernel=kern, config=cfg)


def gemm_forms(M: int, N: int, K: int, kmajor: bool) -> dict[str, tuple[bool, str, dict[str, Any] | None]]:
    """label -> (transposed, kernel, config)."""
    forms: dict[str, tuple[bool, str, dict[str, Any] | None]] = {"auto": (False, "auto", None),
                                                                  "old": (False, "auto", None)}
    if QUICK:
        return forms
    if min(M, N) <= 16:
        forms["T:auto"] = (True, "auto", None)
        forms["T:gemv"] = (True, "gemv", None)
    for bm in (64, 128):
        for bn in (16, 32, 64, 128):
            if bn > 2 * max(16, N) or (bn == 128 and N <= 64):
                continue
            for sk in (1, 2, 4, 8):
                if sk > 1 and K // sk < 256:
                    continue
                forms[f"{bm}x{bn}x64 s{sk}"] = (False, "pointer", {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 64,
                                                                   "GROUP_M": 8, "SPLIT_K": sk, "num_warps": 4,
                                                                   "num_stages": 3})
    if max(M, N) > 16:
        forms["gemv"] = (False, "gemv", None)
    return forms


def run_gemm(shapes: list[tuple[int, int, int, torch.dtype, bool, str]], dev: torch.device) -> list[dict[str, Any]]:
    g = torch.Generator(device=dev).manual_seed(0)
    rows = []
    for M, K, N, dt, bt, epi in shapes:
        a = torch.randn(M, K, device=dev, dtype=dt, generator=g)
        b = (torch.randn(N, K, device=dev, dtype=dt, generator=g).t() if bt
             else torch.randn(K, N, device=dev, dtype=dt, generator=g)) / K**0.5
        bias = torch.randn(N, device=dev, dtype=dt, generator=g) if epi != "none" else None
        tol = tolerance(str(dt).removeprefix("torch."))
        name = f"{str(dt).removeprefix('torch.')} {M}x{K}x{N} {epi}{' B^T' if bt else ''}"
        row: dict[str, Any] = {"name": name}
        for e in dict.fromkeys((epi, "none")):
            eb = bias if e != "none" else None
            row[f"eager {e}"] = bench(lambda eb=eb, e=e: gemm.eager(a, b, eb, e, 0.0))
        ref = gemm.reference(a.double(), b.double(), None, "none")
        for label, (tr, kern, cfg) in gemm_forms(M, N, K, bt).items():
            # transposed forms and tile variants run epilogue "none" (the transposed launch has no column bias yet)
            e, eb = (epi, bias) if label in ("auto", "old") else ("none", None)
            r = ref if e == "none" else gemm.reference(a.double(), b.double(), bias.double(), epi)
            c = torch.empty(M, N, device=dev, dtype=dt)
            # "old": the policy before session 12's skinny rule, captured with the rule switched off
            fn = _form(a, b, c, eb, e, tr, kern, cfg)
            try:
                if label == "old":
                    _old_policy(True)
                fn()
                excess = float(((c.double() - r).abs() - (tol.atol + tol.rtol * r.abs())).max())
                ms = bench(fn)
                row[label] = {"ms": ms, "ok": excess <= 0, "epilogue": e}
            except Exception as exc:  # noqa: BLE001 - a probe records what failed and goes on
                row[label] = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
            finally:
                if label == "old":
                    _old_policy(False)
        ok = {k: v for k, v in row.items() if isinstance(v, dict) and "ms" in v and v["ok"]}
        best = min((k for k in ok if k != "auto"), key=lambda k: ok[k]["ms"], default=None)
        bad = [k for k, v in row.items() if isinstance(v, dict) and "ms" in v and not v["ok"]]
        en = row["eager none"]
        print(f"{name:40s} eager {row[f'eager {epi}'] * 1e3:7.1f} (none {en * 1e3:6.1f}) us | auto "
              f"{row['auto'].get('ms', float('nan')) * 1e3:7.1f} old {row['old'].get('ms', float('nan')) * 1e3:7.1f} | "
              + " ".join(f"{k} {ok[k]['ms'] * 1e3:.1f}" for k in ok if k.startswith("T:") or k == "gemv")
              + (f" | best {best} {ok[best]['ms'] * 1e3:.1f} ({en / ok[best]['ms']:.2f}x eager none)" if best else "")
              + (f" | WRONG {bad}" if bad else ""), flush=True)
        rows.append(row)
    return rows


def run_softmax(dev: torch.device, shapes: list[tuple[int, int, torch.dtype]] = SOFTMAX, kernel: str = "softmax",
                all_cfgs: bool = True) -> list[dict[str, Any]]:
    rows = []
    for M, N, dt in shapes:
        x = torch.randn(M, N, device=dev, dtype=dt)
        w = torch.randn(N, device=dev, dtype=dt)
        if kernel == "softmax":
            ref = torch.softmax(x.double(), -1)
            eager, run = (lambda: torch.softmax(x, -1)), (lambda c: softmax.softmax(x, config=c))
        else:
            ref = rmsnorm.reference(x, w).double()
            eager, run = (lambda: rmsnorm.eager(x, w)), (lambda c: rmsnorm.rmsnorm(x, w, config=c))
        row: dict[str, Any] = {"name": f"{kernel} {str(dt).removeprefix('torch.')} {M}x{N}", "eager": bench(eager)}
        blk = 1 << (N - 1).bit_length()
        # "one warp": the odd-width rule of session 8 that session 12's replaced for small grids
        cfgs: dict[str, Any] = {"auto": None, "one warp": {"BLOCK": blk, "ROWS": max(1, min(64, 512 // blk)),
                                                          "num_warps": 1}}
        for r in (1, 2, 4, 8, 16, 32, 64) if all_cfgs else ():
            for wp in (1, 2, 4):
                if r * blk >= 32 * wp or r == 1:
                    cfgs[f"R{r} w{wp}"] = {"BLOCK": blk, "ROWS": r, "num_warps": wp}
        for label, cfg in cfgs.items():
            try:
                y = run(cfg)
                err = float((y.double() - ref).abs().max())
                row[label] = {"ms": bench(lambda cfg=cfg: run(cfg)), "err": err}
            except Exception as exc:  # noqa: BLE001
                row[label] = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
        ok, best = _timed(row)
        print(f"{row['name']:26s} eager {row['eager'] * 1e3:6.2f} us | auto {ok['auto']['ms'] * 1e3:6.2f} "
              f"({row['eager'] / ok['auto']['ms']:.2f}x) | best {best} {ok[best]['ms'] * 1e3:6.2f} "
              f"({row['eager'] / ok[best]['ms']:.2f}x)", flush=True)
        rows.append(row)
    return rows


def run_split(dev: torch.device) -> list[dict[str, Any]]:
    """Softmax and RMSNorm over few wide rows: the policy (split), one program per row (SPLIT 1), eager; GPU time
    (graph replay) and host-inclusive time (back-to-back calls, event-timed)."""
    from triton.testing import do_bench

    from rocm_triton_doctor.kernels import policy, rows

    out = []
    for M, N, dt in SPLIT_ROWS:
        g = torch.Generator(device=dev).manual_seed(M)
        x = torch.randn(M, N, device=dev, dtype=dt, generator=g) * 3
        w = torch.randn(N, device=dev, dtype=dt, generator=g)
        cfg = rows._config(rows.target_of(x), N, dt.itemsize, policy.row_class(N, M))
        one = {"BLOCK": cfg["BLOCK"], "ROWS": 1, "num_warps": cfg["num_warps"], "SPLIT": 1}
        for name in ("softmax", "rmsnorm", "layernorm"):
            if name == "softmax":
                ref = torch.softmax(x.double(), -1)
                ours, eager = (lambda c: softmax.softmax(x, config=c)), (lambda: torch.softmax(x, -1))
            elif name == "layernorm":
                ref = torch.nn.functional.layer_norm(x.double(), (N,), w.double(), w.double())
                ours = lambda c: layernorm.layernorm(x, w, w, config=c)  # noqa: E731
                eager = lambda: torch.nn.functional.layer_norm(x, (N,), w, w)  # noqa: E731
            else:
                ref = rmsnorm.reference(x, w).double()
                ours, eager = (lambda c: rmsnorm.rmsnorm(x, w, config=c)), (lambda: rmsnorm.eager(x, w))
            tol = tolerance(str(dt).removeprefix("torch."))
            row: dict[str, Any] = {"name": f"{name} {str(dt).removeprefix('torch.')} {M}x{N}",
                                   "split": rows.prepare(name, x, {}, None).split if name == "softmax" else None,
                                   "eager": bench(eager), "eager_event": float(do_bench(eager, rep=30))}
            for label, c in (("auto", None), ("one program", one)):
                y = ours(c).double()
                ok = bool(((y - ref).abs() <= tol.atol + tol.rtol * ref.abs()).all())
                row[label] = {"ms": bench(lambda c=c: ours(c)), "event_ms": float(do_bench(lambda c=c: ours(c), rep=30)),
                              "ok": ok}
            out.append(row)
            a, o = row["auto"], row["one program"]
            print(f"{row['name']:28s} split {row['split']} | graph us: eager {row['eager'] * 1e3:7.1f} one "
                  f"{o['ms'] * 1e3:7.1f} auto {a['ms'] * 1e3:7.1f} ({row['eager'] / a['ms']:.2f}x eager) | event us: "
                  f"eager {row['eager_event'] * 1e3:6.1f} one {o['event_ms'] * 1e3:6.1f} auto {a['event_ms'] * 1e3:6.1f}"
                  + ("" if a["ok"] and o["ok"] else " WRONG"), flush=True)
    return out


def run_gemv_many(dev: torch.device) -> list[dict[str, Any]]:
    """GEMV against the policy and cuBLAS where M is many chunks of 8 rows; a few GEMV tiles each."""
    from rocm_triton_doctor.kernels import policy

    t = policy.target_for_device("cuda")
    cus = torch.cuda.get_device_properties(0).multi_processor_count
    g = torch.Generator(device=dev).manual_seed(1)
    out = []
    for M, K, N, dt, bt in GEMV_MANY:
        a = torch.randn(M, K, device=dev, dtype=dt, generator=g)
        b = (torch.randn(N, K, device=dev, dtype=dt, generator=g).t() if bt
             else torch.randn(K, N, device=dev, dtype=dt, generator=g))
        ref = gemm.reference(a.double(), b.double(), None, "none")
        tol = tolerance(str(dt).removeprefix("torch."))
        base = dict(policy.gemv_config(t, min(M, 8), N, K, dt.itemsize, bt, cus))
        forms: dict[str, tuple[str, Any]] = {"auto": ("auto", None), "gemv": ("gemv", None)}
        for bn in (16, 32, 64, 128):
            for bk in sorted({base["BLOCK_K"], 16, 32}):
                forms[f"gemv {bn}x{bk}"] = ("gemv", {**base, "BLOCK_N": bn, "BLOCK_K": bk, "SPLIT_K": 1})
        row: dict[str, Any] = {"name": f"fp32 {M}x{K}x{N}{' B^T' if bt else ''}", "policy_gemv": base,
                               "eager": bench(lambda: gemm.eager(a, b, None, "none", 0.0))}
        for label, (kern, cfg) in forms.items():
            try:
                c = gemm.gemm(a, b, kernel=kern, config=cfg)
                ok = bool(((c.double() - ref).abs() <= tol.atol + tol.rtol * ref.abs()).all())
                row[label] = {"ms": bench(lambda kern=kern, cfg=cfg: gemm.gemm(a, b, kernel=kern, config=cfg)), "ok": ok}
            except Exception as exc:  # noqa: BLE001
                row[label] = {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
        ok, best = _timed(row)
        print(f"{row['name']:24s} eager {row['eager'] * 1e3:7.1f} | auto {ok['auto']['ms'] * 1e3:7.1f} | gemv "
              f"{ok['gemv']['ms'] * 1e3:7.1f} {base['BLOCK_N']}x{base['BLOCK_K']} | best {best} "
              f"{ok[best]['ms'] * 1e3:7.1f}" + (" WRONG" if not all(v["ok"] for v in ok.values()) else ""), flush=True)
        out.append(row)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--part", default="all", choices=("gemm", "softmax", "all", "after", "n128", "split"))
    ap.add_argument("--quick", action="store_true", help="GEMM rows: eager, the policy and the old policy only")
    args = ap.parse_args()
    global QUICK
    QUICK = args.quick
    dev = torch.device("cuda")
    print(torch.cuda.get_device_name(0), torch.__version__, flush=True)
    out: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    if args.part in ("softmax", "all"):
        out["softmax"] = run_softmax(dev)
    if args.part in ("gemm", "all"):
        out["skinny"] = run_gemm(SKINNY, dev)
        out["tiny"] = run_gemm(TINY, dev)
    if args.part == "split":
        out["split"] = run_split(dev)
    if args.part == "n128":
        out["n128"] = run_gemm(N128, dev)
    if args.part == "after":
        out["rows"] = (run_softmax(dev, SOFTMAX + ROWS_NEW, "softmax", False)
                       + run_softmax(dev, SOFTMAX + ROWS_NEW, "rmsnorm", False))
        out["skinny"] = run_gemm(SKINNY + SKINNY_NEW, dev)
        out["wider"] = run_gemm(WIDER + N128 + [(65536, 4096, 128, BF16, True, "none"),
                                                (16384, 8192, 128, F16, False, "bias")], dev)
        if not args.quick:
            out["gemv_many"] = run_gemv_many(dev)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
