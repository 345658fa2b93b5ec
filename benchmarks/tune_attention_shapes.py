"""Attention forward on the shapes issue #16 measured below 0.9x SDPA on an H100 (docs/measurements/
2026-11-23-h100-sweep.md): for each shape the policy's choice ("policy": kernel="auto"), the other kernels with the
policy's tiles (pointer, host-descriptor TMA where it applies, device-descriptor TMA; for D = 80/96 the device kernel
with the head dim padded to 128 against split into 64 + 16/32), a few alternative tiles, and SDPA, in one run. GPU time
is triton.testing.do_bench's median (L2 flushed each call); the host-bound S=128 shape is also replayed in a CUDA graph
(do_bench_cudagraph), which leaves the host cost out. Each output is checked against SDPA's with the tolerance table
(|ours - SDPA| <= atol + rtol·|SDPA|); a variant that fails to compile or run is a row with its error, not a crash.

Usage: PYTHONPATH=. python benchmarks/tune_attention_shapes.py [--quick] [--json PATH]
About 2 minutes on an H100 with an empty Triton cache (~90 compiles); --quick: 7 shapes, the policy's kernels only.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import torch
from triton.testing import do_bench, do_bench_cudagraph

from rocm_triton_doctor.kernels import attention, attention_tma, policy
from rocm_triton_doctor.kernels.base import tma_layout_ok
from rocm_triton_doctor.kernels.tolerances import tolerance

BF, FP16 = torch.bfloat16, torch.float16
Shape = tuple  # (B, H, H_kv, S, D, dtype, causal[, S_k]): S_k defaults to S


def gap_shapes() -> list[Shape]:
    """--gaps: the classes still under 0.9x SDPA after session 9 (docs/performance.md): D = 256 and 80/96, short key
    lengths (S_k << S_q), and fp32 (3xTF32 products, tiles over the H100's shared memory at D > 64)."""
    out = [(4, 32, 32, s, d, BF, c) for d in (256, 96) for s in (1024, 4097) for c in (False, True)]
    out += [(4, 32, 32, 4096, 80, BF, c) for c in (False, True)]
    out += [(2, 16, 16, 3416, 64, BF, c, 205) for c in (False, True)] + [(4, 32, 8, 4096, 128, BF, False, 256)]
    out += [(2, 16, 16, s, d, torch.float32, c) for d in (64, 128) for s in (1024, 4096) for c in (False, True)]
    return out




def shapes(quick: bool) -> list[Shape]:
    if LARGE_D:
        return large_d_shapes()
    if DIMS:
        return [(4, 32, 32, s, d, BF, c) for d in DIMS for s in (1024, 4096) for c in (False, True)]
    if GAPS:
        return gap_shapes()
    if quick:
        return [(4, 32, 32, 1024, d, BF, c) for d in (64, 128) for c in (False, True)] + [
            (4, 32, 32, 1024, 80, BF, True), (4, 32, 32, 1024, 256, BF, False), (4, 32, 32, 128, 128, BF, False)]
    out = [(4, 32, 32, s, d, BF, c) for s in (1000, 1024, 4096) for d in (64, 128) for c in (False, True)]
    out += [(4, 32, 32, s, d, BF, c) for d in (80, 96, 256) for s in (1024, 4097) for c in (False, True)]
    out += [(4, 32, 8, s, 128, BF, c) for s in (1024, 4096) for c in (False, True)]
    out += [(4, 32, 32, 2048, 128, FP16, c) for c in (False, True)]
    return out + [(4, 32, 32, 128, 128, BF, False)]


def _cfg(bm: int, bn: int, w: int, s: int, **kw: Any) -> dict[str, Any]:
    return {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": w, "num_stages": s, **kw}


# Alternatives per padded head dim, few on purpose (each costs a compile per shape class). Pointer kernel: larger or
# smaller tiles than the policy's; device TMA: narrower key tiles, no warp specialisation, fewer stages; D=256: the
# pointer kernel's 64x64 tile that spills (204 bytes) to see what spills cost against tile size. Tried only where a
# compile buys information (alternatives_for): the compiles, ~1-2 s each, are most of the run.
ALTERNATIVES: dict[int, list[tuple[str, dict[str, Any]]]] = {
    64: [("pointer", _cfg(128, 128, 8, 3)), ("pointer", _cfg(128, 64, 8, 3)), ("pointer", _cfg(64, 64, 4, 4))],
    128: [("pointer", _cfg(64, 64, 4, 3)), ("tma_device", _cfg(128, 64, 8, 3)),
          ("tma_device", _cfg(128, 128, 8, 3, WARP_SPECIALIZE=False))],
    256: [("pointer", _cfg(64, 64, 8, 2)), ("tma_device", _cfg(128, 32, 8, 3)), ("tma_device", _cfg(64, 64, 8, 2))],
}


# --gaps alternatives: by (padded D, element size, short keys)
GAP_ALTERNATIVES: dict[tuple[int, int, bool], list[tuple[str, dict[str, Any]]]] = {
    (256, 2, False): [("pointer", _cfg(64, 16, 8, 2)), ("pointer", _cfg(64, 32, 8, 2)), ("pointer", _cfg(64, 32, 4, 2)),
                      ("tma_device", _cfg(128, 64, 8, 2)), ("tma_device", _cfg(128, 32, 8, 3)),
                      ("tma_device", _cfg(64, 64, 8, 2)), ("tma_device", _cfg(64, 64, 4, 2, WARP_SPECIALIZE=False))],
    (128, 2, False): [("pointer", _cfg(128, 64, 8, 3)), ("pointer", _cfg(64, 64, 4, 3)),
                      ("tma_device", _cfg(128, 64, 8, 3, SPLIT_D=False)),
                      ("tma_device", _cfg(128, 128, 8, 3, SPLIT_D=False))],
    (64, 2, True): [("pointer", _cfg(64, 64, 4, 3)), ("pointer", _cfg(128, 128, 8, 2)), ("pointer", _cfg(64, 128, 4, 2)),
                    ("pointer", _cfg(128, 32, 4, 3)), ("pointer", _cfg(32, 64, 4, 3))],
    (128, 2, True): [("pointer", _cfg(64, 64, 4, 3)), ("pointer", _cfg(128, 128, 8, 2)), ("pointer", _cfg(64, 128, 4, 2))],
    (64, 4, False): [("pointer", _cfg(128, 32, 8, 2)), ("pointer", _cfg(64, 32, 4, 2)), ("pointer", _cfg(64, 64, 4, 2)),
                     ("pointer", _cfg(128, 64, 8, 2))],
    (128, 4, False): [("pointer", _cfg(64, 16, 4, 2)), ("pointer", _cfg(64, 32, 4, 2)), ("pointer", _cfg(64, 32, 8, 2)),
                      ("pointer", _cfg(128, 32, 8, 2))],
}
GAPS = False
# --dims: head dims no sweep had timed (the session 16 shape hunt found D = 40, 72, 160 and 192 at 0.45-0.7x SDPA):
# B4 H32 at S = 1024 and 4096, causal and not, with these alternatives per padded head dim (the policy's kernel and
# tiles first, as always; D = 40/72/160/192 also run the device-descriptor kernel split and padded).
DIMS: tuple[int, ...] = ()
DIM_ALTERNATIVES: dict[int, list[tuple[str, dict[str, Any]]]] = {
    64: [("pointer", _cfg(64, 64, 4, 3)), ("pointer", _cfg(128, 64, 8, 3)), ("tma_device", _cfg(128, 64, 8, 3)),
         ("tma_device", _cfg(128, 128, 8, 3))],
    # second run: the policy's split 128x64 s3 against the tiles it replaced (padded 128x128 s3 for 65-127, split
    # 128x64 s2 above 128) and a split with 2 stages
    128: [("tma_device", _cfg(128, 128, 8, 3, SPLIT_D=False)), ("tma_device", _cfg(128, 64, 8, 2, SPLIT_D=True)),
          ("pointer", _cfg(64, 64, 4, 3))],
    256: [("tma_device", _cfg(128, 64, 8, 2, SPLIT_D=True)), ("tma_device", _cfg(128, 64, 8, 2, SPLIT_D=False)),
          ("tma_device", _cfg(128, 64, 8, 3, SPLIT_D=False))],
}

# --large-d: D = 160/192/256, where the session 16 hunt left attention at 0.50-0.78x SDPA (S 958-3111, small B·H):
# B2 H16 at S = 1024 and 2048, causal and not, plus two of the hunt's rows, with these device-descriptor tiles (160/192
# split into two column blocks, 256 one block): one warpgroup (64-row tiles, 4 warps, no warp specialisation: more
# programs and less diagonal waste), narrower and wider key tiles, fewer or more stages, warp specialisation off.
LARGE_D = False
LARGE_D_ALTERNATIVES: list[tuple[str, dict[str, Any]]] = [
    ("tma_device", _cfg(128, 64, 8, 2)), ("tma_device", _cfg(128, 64, 8, 3, WARP_SPECIALIZE=False)),
    ("tma_device", _cfg(128, 32, 8, 3)), ("tma_device", _cfg(64, 64, 4, 3)), ("tma_device", _cfg(64, 64, 4, 2)),
    ("tma_device", _cfg(64, 32, 4, 3)), ("tma_device", _cfg(64, 128, 4, 2)), ("tma_device", _cfg(64, 64, 8, 3)),
    ("tma_device", _cfg(128, 128, 8, 2))]


def large_d_shapes() -> list[Shape]:
    out = [(2, 16, 16, s, d, BF, c) for d in (160, 192, 256) for s in (1024, 2048) for c in (False, True)]
    return out + [(14, 16, 4, 1136, 192, FP16, True), (2, 4, 4, 1081, 160, BF, False)]


def variants(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, alternatives: bool
             ) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(label, kernel, config) for one shape: policy first, then the other kernels and (alternatives) other tiles."""
    t = policy.target_for_device("cuda")
    B, H, S, D = q.shape
    block_d = max(16, 1 << (D - 1).bit_length())
    layout = q.element_size() == 2 and tma_layout_ok(q, k, v)
    flops = 4.0 * B * H * S * k.shape[2] * D * (0.5 if causal else 1.0)
    chosen = policy.attention_kernel(t, D, flops, layout)
    ptr = policy.attention_config(t, block_d, q.element_size(), causal)
    tma = policy.attention_config(t, block_d, q.element_size(), causal, tma=True)
    out: list[tuple[str, str, dict[str, Any] | None]] = [(f"policy ({chosen})", "auto", None)]
    if chosen != "pointer":
        out.append(("pointer, policy tiles", "pointer", ptr))
    if layout and policy.tensor_desc_device_supported(t) and chosen != "tma_device":
        out.append(("tma_device, policy tiles", "tma_device", tma))
    if layout and block_d == D and D in (64, 128) and policy.tma_supported(t) and chosen != "tma":
        out.append(("tma (host descriptors)", "tma", tma))
    if layout and policy.tensor_desc_device_supported(t) and attention_tma.column_blocks(D)[1] and chosen != "tma_device":
        out.append(("tma_device, split", "tma_device", {**tma, "SPLIT_D": True}))
    if layout and policy.tensor_desc_device_supported(t) and attention_tma.column_blocks(D)[1]:
        # D = 80/96: the head dim split into two column blocks (the default) against padding it to 128
        out.append(("tma_device, padded to 128", "tma_device", {**tma, "SPLIT_D": False}))
    if alternatives:
        split = {"SPLIT_D": attention_tma.column_blocks(D)[1] > 0}
        alts = ([(k, {**c, **split}) for k, c in LARGE_D_ALTERNATIVES] if LARGE_D else
                DIM_ALTERNATIVES.get(block_d, []) if DIMS else
                GAP_ALTERNATIVES.get((block_d, q.element_size(), k.shape[2] * 4 <= S), []) if GAPS
                else ALTERNATIVES.get(block_d, []))
        for kern, cfg in alts:
            if kern == "pointer" or (layout and policy.tensor_desc_device_supported(t)):
                ws = "" if "WARP_SPECIALIZE" not in cfg else f" ws={int(cfg['WARP_SPECIALIZE'])}"
                label = f"{kern} {cfg['BLOCK_M']}x{cfg['BLOCK_N']} w{cfg['num_warps']} s{cfg['num_stages']}{ws}"
                if kern == "tma_device" and attention_tma.column_blocks(D)[1] and "SPLIT_D" not in cfg:
                    # both ways of covering the head dim (the kernel's own default is the split)
                    out.append((f"{label} split", kern, {**cfg, "SPLIT_D": True}))
                    out.append((f"{label} padded", kern, {**cfg, "SPLIT_D": False}))
                else:
                    out.append((label, kern, cfg))
    return out


def alternatives_for(shape: Shape, quick: bool) -> bool:
    """Alternative tiles on bf16, non-GQA shapes at S = 1024 and 4096/4097 (S = 1000 compiles again for much the same
    answer: Triton specialises S on divisibility by 16) for D = 64, 128 and 256. D = 80 and 96 get the policy's tiles
    of each kernel and the split-against-padded pair instead."""
    B, H, Hkv, S, D, dt, causal, *_ = shape
    if GAPS or DIMS or LARGE_D:
        return True
    return not quick and dt == BF and Hkv == H and S in (1024, 4096, 4097) and D in (64, 128, 256)


def name(shape: Shape) -> str:
    B, H, Hkv, S, D, dt, causal, *sk = shape
    return (f"{str(dt)[6:]} B{B} H{H}{f'/{Hkv}' if Hkv != H else ''} S{S}{f' S_k{sk[0]}' if sk else ''} D{D}"
            + (" causal" if causal else ""))


def run_shape(shape: Shape, quick: bool, rows: list[dict[str, Any]]) -> None:
    B, H, Hkv, S, D, dt, causal, *sk = shape
    gen = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(B, H, S, D, device="cuda", dtype=dt, generator=gen)
    k, v = (torch.randn(B, Hkv, sk[0] if sk else S, D, device="cuda", dtype=dt, generator=gen) for _ in range(2))
    small = S <= 128

    def sdpa() -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=Hkv != H)

    ref = sdpa().float()
    tol = tolerance(str(dt)[6:])
    t_sdpa = do_bench(sdpa, warmup=10, rep=40, return_mode="median")
    g_sdpa = do_bench_cudagraph(sdpa, rep=50, return_mode="median") if small else None
    base = {"shape": name(shape), "B": B, "H": H, "H_kv": Hkv, "S": S, "D": D, "dtype": str(dt)[6:], "causal": causal}
    rows.append({**base, "variant": "SDPA", "kernel": "sdpa", "config": None, "us": t_sdpa * 1e3,
                 "graph_us": g_sdpa * 1e3 if g_sdpa else None, "x_sdpa": 1.0, "max_err": 0.0, "ok": True})
    print(f"{name(shape)}: SDPA {t_sdpa * 1e3:.1f} us" + (f" (graph {g_sdpa * 1e3:.1f} us)" if g_sdpa else ""),
          flush=True)
    for label, kern, cfg in variants(q, k, v, causal, alternatives_for(shape, quick)):
        row: dict[str, Any] = {**base, "variant": label, "kernel": kern, "config": cfg}
        try:
            def fn(kern: str = kern, cfg: dict[str, Any] | None = cfg) -> torch.Tensor:
                return attention.attention(q, k, v, causal, kernel=kern, config=cfg)

            with torch.no_grad():
                out = fn().float()
            err = (out - ref).abs()
            row["max_err"] = float(err.max())
            row["ok"] = bool((err <= tol.atol + tol.rtol * ref.abs()).all())
            t = do_bench(fn, warmup=10, rep=40, return_mode="median")
            row.update(us=t * 1e3, x_sdpa=t_sdpa / t)
            if small:
                row["graph_us"] = do_bench_cudagraph(fn, rep=50, return_mode="median") * 1e3
                row["x_sdpa_graph"] = g_sdpa / (row["graph_us"] / 1e3) if g_sdpa else None
        except Exception as exc:  # noqa: BLE001 - a variant that does not compile/run is a result
            row.update(error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}", ok=False)
        rows.append(row)
        if "error" in row:
            print(f"  {label:34s} ERROR {row['error']}", flush=True)
        else:
            g = f" graph {row['graph_us']:.1f} us x{row['x_sdpa_graph']:.2f}" if small else ""
            print(f"  {label:34s} {row['us']:9.1f} us  x SDPA {row['x_sdpa']:.2f}  err {row['max_err']:.1e} "
                  f"{'ok' if row['ok'] else 'WRONG'}{g}", flush=True)


def summary(rows: list[dict[str, Any]]) -> None:
    """Last: per shape, SDPA, the policy's row and the fastest correct other variant."""
    print("\nshape | variant | us | x SDPA | ok")
    for shape in dict.fromkeys(r["shape"] for r in rows):
        rs = [r for r in rows if r["shape"] == shape and "us" in r]
        pol = [r for r in rs if r["variant"].startswith("policy")]
        others = [r for r in rs if r["kernel"] != "sdpa" and not r["variant"].startswith("policy") and r["ok"]]
        best = min(others, key=lambda r: r["us"]) if others else None
        for r in [r for r in rs if r["kernel"] == "sdpa"] + pol + ([best] if best else []):
            tag = "" if r not in others else " (best other)"
            graph = f" (graph replay {r['graph_us']:.1f} us)" if r.get("graph_us") else ""
            print(f"{shape} | {r['variant']}{tag} | {r['us']:.1f}{graph} | {r['x_sdpa']:.2f}x | "
                  f"{'ok' if r['ok'] else 'WRONG'}")
    failed = [r for r in rows if "error" in r]
    if failed:
        print(f"{len(failed)} variant(s) failed: " + "; ".join(f"{r['shape']} {r['variant']}" for r in failed))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="7 shapes, the policy's kernels only")
    ap.add_argument("--json", metavar="PATH", help="also write every row as JSON")
    ap.add_argument("--gaps", action="store_true", help="the classes still under 0.9x SDPA (gap_shapes) with their "
                    "alternative tiles")
    ap.add_argument("--dims", default="", help="comma-separated head dims: B4 H32 S1024/4096 rows with DIM_ALTERNATIVES")
    ap.add_argument("--large-d", action="store_true", help="D = 160/192/256 rows with LARGE_D_ALTERNATIVES")
    a = ap.parse_args()
    global GAPS, DIMS, LARGE_D
    GAPS, LARGE_D = a.gaps, a.large_d
    DIMS = tuple(int(x) for x in a.dims.split(",") if x.strip())
    t0 = time.monotonic()
    rows: list[dict[str, Any]] = []
    for shape in shapes(a.quick):
        run_shape(shape, a.quick, rows)
        torch.cuda.empty_cache()
    summary(rows)
    print(f"{len(rows)} rows in {time.monotonic() - t0:.0f} s")
    if a.json:
        meta = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                "triton": __import__("triton").__version__, "seconds": time.monotonic() - t0}
        with open(a.json, "w") as fh:
            json.dump({**meta, "rows": rows}, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
