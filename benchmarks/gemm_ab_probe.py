"""A/B of this session's GEMM changes on random shapes nobody tuned for (shape_hunt.py's GEMM draws, a fresh seed):
per shape, in GPU time by CUDA-graph replay against eager torch (cuBLAS, then the epilogue ops; allow_tf32 off):
* "old": as before the session: IEEE fp32 products (precision="ieee"), a copied B masked at column N (B_PAD off);
* "new": the default: fp32 through the 3xTF32 split and its tiles on NVIDIA (policy_fp32.py), a copied B read in
  whole vectors to its zero padding (gemm_kernel's B_PAD);
* "new, B masked at N": the default without B_PAD (isolates it; equal to "new" where B is not copied).
The default call's output is checked against the case's reference; the old one's error is recorded.
(A first version also timed an unmasked K loop for interior tiles behind a run-time branch: 16-bit medians fell from
1.21x to 0.71x eager, seed 9, docs/measurements/2026-11-27-h100-s9-gemm-ab-interior.json, so it was dropped.)

    PYTHONPATH=.:benchmarks python benchmarks/gemm_ab_probe.py --seed 9 --json ab.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from typing import Any

import torch
from triton.testing import do_bench, do_bench_cudagraph

from rocm_triton_doctor.kernels import gemm
from rocm_triton_doctor.kernels.aligned_copy import misaligned
from rocm_triton_doctor.smoke import correctness
from shape_hunt import draw_gemm

VARIANTS: dict[str, dict[str, Any]] = {"old": {"precision": "ieee", "config": {"B_PAD": False}}, "new": {},
                                       "new, B masked at N": {"config": {"B_PAD": False}}}
# --ab gemv (session 11): "old" = the tensor-core tiles (kernel="pointer", the path every GEMM took before the GEMV
# kernel), "new" = the default (the GEMV kernel where policy_gemv.gemv_takes says so). Rows the GEMV rule does not
# take run the same code in both columns: their spread is the noise.
AB_GEMV: dict[str, dict[str, Any]] = {"old": {"kernel": "pointer"}, "new": {}}
# --ab s12 (session 12): "old" = the policy with the skinny-N tiles (policy_waves.gemm_skinny_config) and the GEMV for
# fp32 against a small misaligned B (policy_gemv.GEMV_FP32_SMALL_B_BYTES) switched off, captured that way; "new" =
# the default. --skinny draws N from 1 to 64 (the rows those rules take) instead of shape_hunt's 16 to 32768.
AB_S12: dict[str, dict[str, Any]] = {"old": {"_s12": False}, "new": {}}
# --ab s13 (session 13): "old" = the copy rule before (a misaligned weight copied only from 256 rows and 2^30 FLOPs;
# the GEMV for fp32 misaligned weights up to 96 rows), "new" = the default (policy.ALIGN_COPY_MIN_ROWS). Both columns
# run the session's copy kernel and DIV_K. --midm draws M from 33 to 255 (the rows the rule changed).
AB_S13: dict[str, dict[str, Any]] = {"old": {"_s13": False}, "new": {}}
# --ab copy: "old" = the default, "new" = every misaligned operand copied (config ALIGN_COPY): where would a copy pay
# that the policy does not make? Rows with nothing misaligned run the same code in both columns.
AB_COPY: dict[str, dict[str, Any]] = {"old": {}, "new": {"config": {"ALIGN_COPY": True}}}
# --ab s13b: "old" = the tail split at any K and 65-128 columns unsplit on the general tiles (policy_waves.TAIL_MIN_K
# and SKINNY_UNSPLIT_MAX_K off), "new" = the default.
AB_S13B: dict[str, dict[str, Any]] = {"old": {"_s13b": False}, "new": {}}
# --ab fp32skinny (with --skinny --fp32-odd): fp32 against misaligned operands with 1-64 columns, the weakest class of
# the draws: "old" = the default, "new" = the tensor-core tiles (kernel="pointer", never the GEMV), and both copied,
# and IEEE products.
# --ab nosplit (with --tiny, session 14): products of a few µs, where a K split's second launch (the reduce pass) may
# cost more than the split saves: "old" = the default, "new" = the policy's tiles with SPLIT_K forced to 1.
AB_NOSPLIT: dict[str, dict[str, Any]] = {"old": {}, "new": {"_split": False}}
# --ab splits (with --tiny): the policy's tiles with SPLIT_K forced to 1, 2, 4, 8 ("old" = the default).
AB_SPLITS: dict[str, dict[str, Any]] = {"old": {}, "new": {"_split": 1}, "s2": {"_split": 2}, "s4": {"_split": 4},
                                        "s8": {"_split": 8}}
# --ab s14 (session 14): "old" = misaligned operands on the policy's tiles as they were (policy.misaligned_depth off),
# "new" = the default (32-deep K blocks where a thread would load more than 48 elements a step), "new s1" = the
# default without a K split. The first runs (seeds 53-56) took the rule on every NVIDIA tile; the final rule (4-warp
# tiles, K <= 4096) ran with --ab s14final ("new s1" left out).
AB_S14: dict[str, dict[str, Any]] = {"old": {"_s14": False}, "new": {}, "new s1": {"_split": False}}
AB_S14_FINAL: dict[str, dict[str, Any]] = {"old": {"_s14": False}, "new": {}}
# --ab s15 (session 15): BLOCK_K from the compiled kernel's spills (gemm._spilled_bytes, policy.spill_checked) against
# session 14's load count (policy.misaligned_depth): "old" = the load count only (as session 14 left it), "spill" =
# the spill check only, "both" = the load count, then the spill check; "spill0" = the spill check halving on any spill
# (MISALIGNED_SPILL_LIMIT 0).
AB_S15: dict[str, dict[str, Any]] = {"old": {"_s15": "static"}, "spill": {"_s15": "spill"}, "both": {"_s15": "both"},
                                     "spill0": {"_s15": "spill0"}}
# --ab s15fp32 (with --fp32-narrow): fp32 against a misaligned operand with 17-128 columns: "old" = the 64-row tiles
# (policy_fp32.FP32_MISALIGNED_NARROW_N 0), "new" = the default (32-row tiles).
AB_S15_FP32: dict[str, dict[str, Any]] = {"old": {"_s15fp32": False}, "new": {}}
AB_FP32_SKINNY: dict[str, dict[str, Any]] = {"old": {}, "new": {"kernel": "pointer"},
                                             "copy": {"kernel": "pointer", "config": {"ALIGN_COPY": True}},
                                             "ieee": {"kernel": "pointer", "precision": "ieee"}}


def _s12_rules(on: bool) -> None:
    from rocm_triton_doctor.kernels import policy, policy_gemv, policy_waves

    policy.SKINNY_N = policy_waves.SKINNY_N if on else 0  # type: ignore[attr-defined]
    policy_gemv.GEMV_FP32_SMALL_B_BYTES = 65536 if on else -1
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()


def _s13_rules(on: bool) -> None:
    from rocm_triton_doctor.kernels import policy, policy_align, policy_gemv

    policy_align.ALIGN_COPY_MIN_ROWS = 33 if on else 1 << 60  # read there (policy re-exports it)
    policy_gemv.GEMV_FP32_MISALIGNED_ROWS_COPIED = 32 if on else 96
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()


def _s13b_rules(on: bool) -> None:
    from rocm_triton_doctor.kernels import policy, policy_waves

    policy_waves.TAIL_MIN_K = 2048 if on else 0
    policy_waves.SKINNY_UNSPLIT_MAX_K = 1024 if on else -1
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()


_GEMM_CONFIG = None


def _split_rule(on: bool | int) -> None:
    """on (True): policy.gemm_config as it is; False: every policy config with SPLIT_K 1; an int n: SPLIT_K n, as far
    as K has a block of BLOCK_K for each split."""
    from rocm_triton_doctor.kernels import policy

    global _GEMM_CONFIG
    if _GEMM_CONFIG is None:
        _GEMM_CONFIG = policy.gemm_config
    orig = _GEMM_CONFIG
    force = 1 if on is False else None if on is True else int(on)

    def forced(*a: Any, **k: Any) -> dict[str, Any]:
        cfg = orig(*a, **k)
        return {**cfg, "SPLIT_K": max(1, min(force or 1, a[3] // cfg["BLOCK_K"]))}  # a[3]: K
    policy.gemm_config = orig if force is None else forced  # type: ignore[assignment]
    gemm.clear_plans()


def _s14_rules(on: bool) -> None:
    from rocm_triton_doctor.kernels import policy, policy_misaligned

    policy_misaligned.MISALIGNED_MAX_LOADS_PER_THREAD = 48 if on else 1 << 30
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()


def _s15_rules(mode: bool | str) -> None:
    from rocm_triton_doctor.kernels import policy, policy_misaligned

    mode = "both" if mode is True else mode
    policy_misaligned.MISALIGNED_MAX_LOADS_PER_THREAD = 48 if mode in ("static", "both") else 1 << 30
    policy_misaligned.SPILL_CHECK = mode in ("spill", "both", "spill0")
    policy_misaligned.MISALIGNED_SPILL_LIMIT = 0 if mode == "spill0" else 128
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()


def _s15_fp32_rule(on: bool) -> None:
    from rocm_triton_doctor.kernels import policy, policy_fp32

    policy_fp32.FP32_MISALIGNED_NARROW_N = 128 if on else 0
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    gemm.clear_plans()


def _row_case(spec: str) -> Any:
    """`bf16:48x146x114:bias_gelu[:t]` -> the GEMM case (t: B is the transpose of a contiguous (N, K) tensor)."""
    from shape_hunt import DT

    dt, shape, epi, *rest = spec.split(":")
    m, k, n = (int(v) for v in shape.split("x"))
    return gemm.make_case(m, k, n, DT[dt], epi, transposed_b=rest == ["t"])


def draw_tiny(r: random.Random) -> Any:
    """Products of a few µs: M, K, N from 16 to 640 (log-uniform), any dtype, half with B^T."""
    from shape_hunt import DT, log_uniform

    dt = r.choice(("bf16", "bf16", "fp16", "fp32"))
    m, k, n = log_uniform(r, 16, 640), log_uniform(r, 16, 640), log_uniform(r, 16, 640)
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    return gemm.make_case(m, k, n, DT[dt], epi, transposed_b=r.random() < 0.5)


def draw_midm(r: random.Random) -> Any:
    from shape_hunt import DT, log_uniform

    dt = r.choice(("bf16", "bf16", "fp16", "fp32"))
    m, k, n = log_uniform(r, 33, 255), log_uniform(r, 16, 16384), log_uniform(r, 16, 32768)
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    return gemm.make_case(m, k, n, DT[dt], epi, transposed_b=r.random() < 0.5)


def draw_skinny(r: random.Random, fp32_odd: bool = False) -> Any:
    from shape_hunt import DT, log_uniform

    dt = "fp32" if fp32_odd else r.choice(("bf16", "bf16", "fp16", "fp32"))
    m, k, n = log_uniform(r, 33, 16384), log_uniform(r, 16, 16384), log_uniform(r, 1, 64)
    k = k | 1 if fp32_odd else k  # an odd K: A (and a K-major B) misaligned
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    return gemm.make_case(m, k, n, DT[dt], epi, transposed_b=r.random() < 0.5)


def draw_fp32_narrow(r: random.Random) -> Any:
    """fp32 with 17-128 columns and an odd K (A's rows, and a K-major B's, are not 16-byte aligned)."""
    from shape_hunt import DT, log_uniform

    m, k, n = log_uniform(r, 33, 16384), log_uniform(r, 16, 16384) | 1, log_uniform(r, 17, 128)
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    return gemm.make_case(m, k, n, DT["fp32"], epi, transposed_b=r.random() < 0.5)


def draw_fp32_kshort(r: random.Random, dtypes: tuple[str, ...] = ("fp32",)) -> Any:
    """fp32 against a misaligned K-major weight (B^T, odd K) with K or N under 256, 33-255 rows: the weights
    policy_align.ALIGN_COPY_MIN_KN leaves uncopied (session 23's 33x141x24789 B^T ran 0.34x cuBLAS, 0.74x copied).
    dtypes: --kshort16 draws the same shapes in bf16 and fp16."""
    from shape_hunt import DT, log_uniform

    dt = r.choice(dtypes)
    m = log_uniform(r, 33, 255)
    short, other = log_uniform(r, 16, 255), log_uniform(r, 16, 32768)
    k, n = (short, other) if r.random() < 0.5 else (other, short)
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    return gemm.make_case(m, k | 1, n, DT[dt], epi, transposed_b=True)


def draw_fp32_kshort_wide(r: random.Random) -> Any:
    """fp32, 33-96 rows (the GEMV's), a K-major weight with a short odd K (17-255) and N from 2048 to 32768: where the
    GEMV against a copy was unsettled after session 24's draws (33x141x24789 B^T: GEMV 0.34, copied 0.74)."""
    from shape_hunt import DT, log_uniform

    m, k, n = log_uniform(r, 33, 96), log_uniform(r, 17, 255) | 1, log_uniform(r, 2048, 32768)
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    return gemm.make_case(m, k, n, DT["fp32"], epi, transposed_b=True)


def draw_longk(r: random.Random) -> Any:
    """16-bit products over misaligned operands with K from 4097 to 32768 (odd: A's rows are not 16-byte aligned),
    where session 14's load-count rule is off."""
    from shape_hunt import DT, log_uniform

    dt = r.choice(("bf16", "fp16"))
    m, k, n = log_uniform(r, 16, 8192), log_uniform(r, 4097, 32768) | 1, log_uniform(r, 16, 8192)
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    return gemm.make_case(m, k, n, DT[dt], epi, transposed_b=r.random() < 0.5)


def draw_narrow16(r: random.Random) -> Any:
    """16-bit, 1024-32768 rows, 17-255 columns, an odd K of 256-32768 (A's rows not 16-byte aligned): the products
    policy_align leaves uncopied for their few columns (ALIGN_COPY_MIN_REUSE); session 34's GEMM backward parts found
    dA = g·Bᵀ of this family 3x faster with A copied (fp16 10317x1932 x 215 columns: 153.6 -> 50.7 us)."""
    from shape_hunt import DT, log_uniform

    dt = r.choice(("bf16", "fp16"))
    m, k, n = log_uniform(r, 1024, 32768), log_uniform(r, 256, 32768) | 1, log_uniform(r, 17, 255)
    while m * k > 2**28:
        m //= 2
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    return gemm.make_case(m, k, n, DT[dt], epi, transposed_b=r.random() < 0.5)


def draw_w8(r: random.Random) -> Any:
    """shape_hunt's 16-bit GEMM draws whose plan is an 8-warp tile over an uncopied misaligned operand (drawn until
    one is)."""
    from rocm_triton_doctor.kernels import policy

    t, dev = policy.target_for_device("cuda"), torch.device("cuda")
    cus = torch.cuda.get_device_properties(0).multi_processor_count
    while True:
        case = draw_gemm(r)
        M, K, N = case.params["M"], case.params["K"], case.params["N"]
        if case.dtype == torch.float32 or any(policy.gemm_align_copy(t, M, N, K, 2)) or M * N * K > 2**34:
            continue
        x = case.setup(dev, torch.Generator(device=dev).manual_seed(0))
        a, b = x["a"], x["b"]
        if not (misaligned(a) or misaligned(b)):
            continue
        cfg = policy.gemm_config(t, M, N, K, 2, cus=cus, b_nmajor=b.stride(1) == 1 or b.stride(0) != 1, tc=False,
                                 aligned=False)
        if cfg["num_warps"] == 8 and cfg["BLOCK_K"] > 32:
            return case


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--ab", default="s9",
                    choices=("s9", "gemv", "s12", "s13", "s13b", "copy", "fp32skinny", "nosplit", "splits", "s14",
                             "s14final", "s15", "s15fp32"),
                    help="which change to A/B (see VARIANTS, AB_GEMV, AB_S12, AB_S13, AB_S13B, AB_COPY)")
    ap.add_argument("--skinny", action="store_true", help="draw N from 1 to 64 (draw_skinny)")
    ap.add_argument("--midm", action="store_true", help="draw M from 33 to 255 (draw_midm)")
    ap.add_argument("--fp32-odd", action="store_true", help="with --skinny: fp32 only, K odd")
    ap.add_argument("--tiny", action="store_true", help="draw M, K, N from 16 to 640 (draw_tiny)")
    ap.add_argument("--longk", action="store_true", help="misaligned 16-bit, K 4097-32768 (draw_longk)")
    ap.add_argument("--fp32-narrow", action="store_true", help="fp32, 17-128 columns, odd K (draw_fp32_narrow)")
    ap.add_argument("--fp32-kshort", action="store_true",
                    help="fp32, misaligned K-major weight, K or N under 256, 33-255 rows (draw_fp32_kshort)")
    ap.add_argument("--kshort-wide", action="store_true", help="fp32 GEMV rows, short K, wide N (draw_fp32_kshort_wide)")
    ap.add_argument("--kshort16", action="store_true", help="draw_fp32_kshort's shapes in bf16 and fp16")
    ap.add_argument("--w8", action="store_true", help="draws planned on 8-warp misaligned tiles (draw_w8)")
    ap.add_argument("--narrow16", action="store_true", help="16-bit, 17-255 columns, odd K (draw_narrow16)")
    ap.add_argument("--rows", default=None,
                    help="these rows instead of draws: dtype:MxKxN:epilogue[:t], comma-separated (t: B^T), e.g. "
                         "bf16:48x146x114:bias_gelu,fp16:99x319x1289:none:t")
    ap.add_argument("--host", action="store_true",
                    help="also time each variant event-timed without graphs (do_bench: host launch cost included)")
    args = ap.parse_args()
    variants = {"gemv": AB_GEMV, "s12": AB_S12, "s13": AB_S13, "s13b": AB_S13B, "copy": AB_COPY,
                "fp32skinny": AB_FP32_SKINNY, "nosplit": AB_NOSPLIT, "splits": AB_SPLITS, "s14": AB_S14,
                "s14final": AB_S14_FINAL, "s15": AB_S15, "s15fp32": AB_S15_FP32}.get(args.ab, VARIANTS)
    switches = {"_s12": _s12_rules, "_s13": _s13_rules, "_s13b": _s13b_rules, "_split": _split_rule, "_s14": _s14_rules,
                "_s15": _s15_rules, "_s15fp32": _s15_fp32_rule}
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    r = random.Random(args.seed)
    t0 = time.time()
    rows: list[dict[str, Any]] = []
    given = [_row_case(spec) for spec in args.rows.split(",")] if args.rows else None
    for i in range(len(given) if given else args.n):
        if time.time() - t0 > args.seconds:
            print(f"stopped after {time.time() - t0:.0f} s (--seconds)")
            break
        case = given[i] if given else (draw_skinny(r, args.fp32_odd) if args.skinny else draw_midm(r) if args.midm
                                       else draw_tiny(r) if args.tiny else draw_longk(r) if args.longk
                                       else draw_w8(r) if args.w8 else draw_narrow16(r) if args.narrow16
                                       else draw_fp32_narrow(r) if args.fp32_narrow
                                       else draw_fp32_kshort(r) if args.fp32_kshort
                                       else draw_fp32_kshort(r, ("bf16", "fp16")) if args.kshort16
                                       else draw_fp32_kshort_wide(r) if args.kshort_wide
                                       else draw_gemm(r))
        gen = torch.Generator(device=dev).manual_seed(0)
        x = case.setup(dev, gen)
        P = case.params
        bias, epi, p = x["bias"], P["epilogue"], P["p"]
        row: dict[str, Any] = {"name": case.name, "ok": True, "misaligned": [misaligned(x["a"]), misaligned(x["b"])]}
        v = correctness.check_case(case, x, dev, tf32=False)  # the default call: the new policy
        row["ok"], row["problems"] = v.ok, v.problems[:2]
        row["eager_ms"] = float(do_bench_cudagraph(lambda: case.eager(x), rep=10))
        if args.host:
            row["eager_host_ms"] = float(do_bench(lambda: case.eager(x), rep=20))
        for name, kw in variants.items():
            def fn(kw: dict[str, Any] = kw) -> torch.Tensor:
                return gemm.gemm(x["a"], x["b"], bias, epi, p, x["seed"], **{k: v for k, v in kw.items()
                                                                              if k not in switches})
            for key, switch in switches.items():
                if key in kw:
                    switch(kw[key])
            try:
                if name == "old" or args.ab == "s15":  # every variant's result is checked against the reference
                    ref = case.reference(x)
                    err = float((fn().float() - ref.float()).abs().max())
                    row["old_max_abs" if name == "old" else f"{name}_max_abs"] = err
                row[name] = row["eager_ms"] / float(do_bench_cudagraph(fn, rep=10))
                if args.host:
                    row[f"{name}_host"] = row["eager_host_ms"] / float(do_bench(fn, rep=20))
            except Exception as e:  # noqa: BLE001 - a failure is a row
                row[name] = None
                row[f"{name}_error"] = f"{type(e).__name__}: {e}"[:200]
            finally:
                for key, switch in switches.items():
                    if key in kw:
                        switch(True)
        rows.append(row)
        print(f"{case.name:48s} ok={row['ok']!s:5s} " + " ".join(
            f"{n} {row[n]:.2f}x" if row.get(n) else f"{n} --" for n in variants)
              + ("  host " + " ".join(f"{n} {row.get(n + '_host') or 0:.2f}x" for n in variants) if args.host else ""),
              flush=True)
    summary = {}
    for dt in ("float32", "float16", "bfloat16", "all"):
        sel = [rw for rw in rows if dt == "all" or rw["name"].startswith(dt)]
        for n in [*variants, *(f"{v}_host" for v in variants if args.host)]:
            vals = [rw[n] for rw in sel if rw.get(n)]
            if vals:
                summary[f"{dt} {n}"] = (min(vals), statistics.median(vals), len(vals))
    print("\nclass / variant: worst, median (rows) of ours / eager (cuBLAS + epilogue ops), GPU time")
    for k, (lo, med, cnt) in summary.items():
        print(f"  {k:24s} {lo:.2f} {med:.2f} ({cnt})")
    print("wrong results:", sum(not rw["ok"] for rw in rows))
    print("worst rows (new):")
    for rw in sorted((rw for rw in rows if rw.get("new")), key=lambda rw: rw["new"])[:8]:
        print(f"  {rw['name']:48s} old {rw['old'] or 0:.2f}x new {rw['new']:.2f}x eager {rw['eager_ms'] * 1e3:.1f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "seed": args.seed, "ab": args.ab,
                       "rows": rows, "summary": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
