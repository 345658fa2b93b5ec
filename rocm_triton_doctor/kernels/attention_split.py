"""Attention forward for calls whose query tiles cannot fill the GPU (decode: one or a few query rows against a long
key cache; short prompts at batch 1): the keys are split into SPLITS chunks, each program computes its query rows over
one chunk (flash-decoding), and a second kernel merges the chunks' partial outputs by their log-sum-exp. The query
heads that share a key/value head (GQA/MQA) are packed into one tile's rows, so each K/V tile is read once for the
whole group instead of once per query head, and a decode row does not pad a 64-row tile alone.

attention.attn_fwd_kernel gives one program per (query tile, head, batch): B=1, H=32, S_q=1 is 32 programs on a
132-SM H100/H200, each streaming its head's whole key cache. Non-causal only: a causal query row sees at most as many
keys as there are query rows before it (SDPA's top-left mask), so short-S_q causal calls have little work to split.
SPLITS = 1 with GQA packing still pays (one K/V read per group); then the first kernel writes the output itself."""

from __future__ import annotations

from typing import Any

import torch
import triton
import triton.language as tl

from rocm_triton_doctor.kernels.attention import row_strides
from rocm_triton_doctor.kernels.attention_blocks import _attn_block, _bhs, _signed
from rocm_triton_doctor.kernels.base import cdiv
from rocm_triton_doctor.kernels.launch_site import DYN, Site


@triton.jit
def attn_fwd_split_kernel(q_ptr, k_ptr, v_ptr, o_ptr, part_ptr, lse_ptr, qk_scale, S_Q, S_K, GROUP, H, CHUNK, STAT_AT,
                          sq_b, sq_h, sq_s, sq_d, sk_b, sk_h, sk_s, sk_d, sv_b, sv_h, sv_s, sv_d, so_b, so_h, so_s, so_d,
                          HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, Q_SIGN: tl.constexpr, UPCAST: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLITS: tl.constexpr, STATS: tl.constexpr,
                          DOT_PREC: tl.constexpr, DIV: tl.constexpr):
    # Grid (query tiles · SPLITS, H_kv, B). A tile's row r is query row r % S_Q of the group's head r // S_Q, so the
    # GROUP query heads of key head hk share each K/V tile. CHUNK (a multiple of BLOCK_N) keys a split; only the
    # last block of the last chunk can pass S_K and pays for the mask.
    tile = tl.program_id(0) // SPLITS
    split = tl.program_id(0) % SPLITS
    hk = tl.program_id(1).to(tl.int64)
    b = tl.program_id(2).to(tl.int64)
    sq_b, sq_h, sq_s = _bhs(sq_b, sq_h, sq_s, DIV)
    sk_b, sk_h, sk_s = _bhs(sk_b, sk_h, sk_s, DIV)
    sv_b, sv_h, sv_s = _bhs(sv_b, sv_h, sv_s, DIV)
    r = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    rows = GROUP * S_Q
    head = hk * GROUP + r // S_Q
    qrow = r % S_Q
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    ok = (r < rows)[:, None]
    if BLOCK_D != HEAD_DIM:
        ok = ok & (offs_d[None, :] < HEAD_DIM)
    q = _signed(tl.load(q_ptr + (b * sq_b + head * sq_h + qrow * sq_s)[:, None] + offs_d[None, :] * sq_d, mask=ok,
                        other=0.0), Q_SIGN, UPCAST)
    k_base = b * sk_b + hk * sk_h
    v_base = b * sv_b + hk * sv_h
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    start = split * CHUNK
    end = tl.minimum(S_K, start + CHUNK)
    full = tl.minimum(end, S_K // BLOCK_N * BLOCK_N)
    for start_n in range(start, full, BLOCK_N):
        acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_ptr, v_ptr, k_base, v_base, start_n, r, offs_n, offs_d, S_K,
                                    sk_s, sk_d, sv_s, sv_d, qk_scale, HEAD_DIM, BLOCK_D, False, UPCAST, False, DOT_PREC)
    for start_n in range(full, end, BLOCK_N):
        acc, l_i, m_i = _attn_block(acc, l_i, m_i, q, k_ptr, v_ptr, k_base, v_base, start_n, r, offs_n, offs_d, S_K,
                                    sk_s, sk_d, sv_s, sv_d, qk_scale, HEAD_DIM, BLOCK_D, True, UPCAST, False, DOT_PREC)
    out = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]  # a row with no finite score: 0, as SDPA gives
    if SPLITS == 1:
        so_b, so_h, so_s = _bhs(so_b, so_h, so_s, DIV)
        tl.store(o_ptr + (b * so_b + head * so_h + qrow * so_s)[:, None] + offs_d[None, :] * so_d,
                 out.to(o_ptr.dtype.element_ty), mask=ok)
        if STATS:
            lse = tl.where(l_i == 0.0, float("inf"), m_i + tl.log2(l_i))
            tl.store(lse_ptr + (b * H + head) * S_Q + qrow, lse, mask=r < rows)
    else:
        # The chunk's output normalised by its own sum, and its log2-sum-exp (-inf where it saw no finite score):
        # (B, H_kv, SPLITS, GROUP·S_Q) rows of HEAD_DIM fp32 values.
        row = ((b * tl.num_programs(1) + hk) * SPLITS + split) * rows + r
        tl.store(part_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], out, mask=ok)
        tl.store(part_ptr + STAT_AT + row, tl.where(l_i == 0.0, float("-inf"), m_i + tl.log2(l_i)), mask=r < rows)


@triton.jit
def attn_split_merge_kernel(o_ptr, part_ptr, lse_ptr, S_Q, GROUP, H, STAT_AT, so_b, so_h, so_s, so_d,
                            HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_R: tl.constexpr,
                            SPLITS: tl.constexpr, STATS: tl.constexpr, DIV: tl.constexpr):
    """Merge the SPLITS partial outputs of BLOCK_R rows: out = Σ_s 2^(lse_s - lse)·O_s with lse = log2 Σ_s 2^lse_s,
    kept as a running max like the online softmax (a row no chunk saw a finite score for: 0, and lse +inf)."""
    hk = tl.program_id(1).to(tl.int64)
    b = tl.program_id(2).to(tl.int64)
    rows = GROUP * S_Q
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    offs_d = tl.arange(0, BLOCK_D)
    ok = (r < rows)[:, None] & (offs_d[None, :] < HEAD_DIM)
    m = tl.full((BLOCK_R,), float("-inf"), dtype=tl.float32)
    w_sum = tl.zeros((BLOCK_R,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_R, BLOCK_D), dtype=tl.float32)
    base = (b * tl.num_programs(1) + hk) * SPLITS * rows
    for s in range(SPLITS):
        row = base + s * rows + r
        x = tl.load(part_ptr + STAT_AT + row, mask=r < rows, other=float("-inf"))
        part = tl.load(part_ptr + row[:, None] * HEAD_DIM + offs_d[None, :], mask=ok, other=0.0)
        m_new = tl.maximum(m, x)
        m_base = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m - m_base)
        w = tl.exp2(x - m_base)
        acc = acc * alpha[:, None] + w[:, None] * part
        w_sum = w_sum * alpha + w
        m = m_new
    out = acc / tl.where(w_sum == 0.0, 1.0, w_sum)[:, None]
    head = hk * GROUP + r // S_Q
    qrow = r % S_Q
    so_b, so_h, so_s = _bhs(so_b, so_h, so_s, DIV)
    tl.store(o_ptr + (b * so_b + head * so_h + qrow * so_s)[:, None] + offs_d[None, :] * so_d,
             out.to(o_ptr.dtype.element_ty), mask=ok)
    if STATS:
        lse = tl.where(w_sum == 0.0, float("inf"), tl.where(m == float("-inf"), 0.0, m) + tl.log2(w_sum))
        tl.store(lse_ptr + (b * H + head) * S_Q + qrow, lse, mask=r < rows)


def chunk_keys(S_k: int, splits: int, block_n: int) -> tuple[int, int]:
    """(keys a split, splits): splits chunks of a whole number of BLOCK_N keys covering S_k, none empty."""
    chunk = cdiv(cdiv(S_k, max(1, splits)), block_n) * block_n
    return chunk, cdiv(S_k, chunk)


class SplitLaunch:
    """Both kernels' launches for one call signature, worked out once (attention's plan cache keeps it): a call then
    allocates the scratch and launches, nothing else (each host step had cost a decode call ~100 us against SDPA's
    ~30 on an H200 host)."""

    def __init__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, stats: bool,
                 qk_scale: float, consts: dict[str, Any], cfg: dict[str, Any], kw: dict[str, Any]) -> None:
        B, H, S_q, D = q.shape
        H_kv, S_k = k.shape[1], k.shape[2]
        group = H // H_kv
        cfg = dict(cfg)
        chunk, splits = chunk_keys(S_k, int(cfg.pop("SPLITS")), cfg["BLOCK_N"])
        rows = group * S_q
        stat_at = B * H_kv * splits * rows * D  # the partial outputs, then their log-sum-exps, in one fp32 buffer
        self.scratch = stat_at + B * H_kv * splits * rows if splits > 1 else 0
        self.device = q.device
        div, strides = row_strides(q, k, v, o)
        self.grid = (cdiv(rows, cfg["BLOCK_M"]) * splits, H_kv, B)
        self.args = (qk_scale, S_q, S_k, group, H, chunk, stat_at, *strides)
        self.kw = {"Q_SIGN": consts["Q_SIGN"], "UPCAST": consts["UPCAST"], "SPLITS": splits, "STATS": stats,
                   "DIV": div, **kw, **cfg}
        block_r = 16 if kw["BLOCK_D"] > 64 else 32
        self.merge_grid = (cdiv(rows, block_r), H_kv, B) if splits > 1 else None
        self.merge_args = (S_q, group, H, stat_at, *strides[12:])
        self.merge_kw = {"HEAD_DIM": D, "BLOCK_D": kw["BLOCK_D"], "BLOCK_R": block_r, "SPLITS": splits,
                         "STATS": stats, "DIV": div, "num_warps": 4}
        # launch_site.py: only the tensors change from call to call
        self.site = Site(attn_fwd_split_kernel, self.grid, (DYN,) * 6 + self.args, self.kw)
        self.merge_site = Site(attn_split_merge_kernel, self.merge_grid, (DYN,) * 3 + self.merge_args,
                               self.merge_kw) if self.merge_grid is not None else None

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor,
                 lse: torch.Tensor | None) -> None:
        part = torch.empty(self.scratch, dtype=torch.float32, device=self.device) if self.scratch else None
        self.site(q, k, v, o, part, lse)
        if self.merge_site is not None:
            self.merge_site(o, part, lse)


def aot_specs(target: Any) -> list[tuple[str, Any, dict[str, str], dict[str, Any], dict[str, Any]]]:
    """The compile-only audit's rows: the split kernel (bf16, the policy's tiles for decode against 8k keys with a
    GQA group of 4, and 128 query rows against 8k keys, at D = 128 and 256) and the merge kernel. The policy needs a
    device size: the target family's default."""
    from rocm_triton_doctor.kernels import policy

    cus = policy.DEFAULT_CUS["cuda" if target.backend == "cuda" else "cdna" if target.cdna else "rdna"]
    t = target if not target.interpreter else policy.Target("cuda", "sm_90", 32)
    ptr = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*bf16", "part_ptr": "*fp32",
           "lse_ptr": "*fp32"}
    ints = {n: "i32" for n in ("S_Q", "S_K", "GROUP", "H", "CHUNK", "STAT_AT")}
    strides = {f"s{x}_{d}": "i32" for x in "qkvo" for d in "bhsd"}
    out = []
    for d, s_q in ((128, 1), (128, 128), (256, 1)):
        cfg = dict(policy.attention_split_config(t, 1, 32, 8, s_q, 8192, d, 2, cus) or {})
        splits = cfg.pop("SPLITS", 1)
        const = {"HEAD_DIM": d, "BLOCK_D": d, "Q_SIGN": 1, "UPCAST": False, "BLOCK_M": cfg.pop("BLOCK_M"),
                 "BLOCK_N": cfg.pop("BLOCK_N"), "SPLITS": splits, "STATS": False, "DOT_PREC": "ieee", "DIV": 16,
                 "sq_d": 1, "sk_d": 1, "sv_d": 1, "so_d": 1}
        out.append((f"attention bf16 D={d} S_q={s_q} (split keys: {splits})", attn_fwd_split_kernel,
                    {**ptr, "qk_scale": "fp32", **ints, **strides}, const, cfg))
    msig = {"o_ptr": "*bf16", "part_ptr": "*fp32", "lse_ptr": "*fp32", "S_Q": "i32", "GROUP": "i32", "H": "i32",
            "STAT_AT": "i32", **{f"so_{d}": "i32" for d in "bhsd"}}
    mconst = {"HEAD_DIM": 128, "BLOCK_D": 128, "BLOCK_R": 16, "SPLITS": 16, "STATS": False, "DIV": 16, "so_d": 1}
    out.append(("attention bf16 D=128 split merge", attn_split_merge_kernel, msig, mconst, {"num_warps": 4}))
    return out
