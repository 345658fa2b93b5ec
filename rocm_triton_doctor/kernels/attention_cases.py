"""attention's smoke cases (seed, quick, bench and interpreter presets; the sweep's rows come from smoke/sweep.py;
make_case for the random preset and the baselines: GQA, S_q != S_k, the model's BSHD layout) and the shapes the
compile-only audit compiles the forward kernels for (aot_specs) and the backward's (backward_aot_specs, the kernels
of attention_backward.py). attention.py registers them."""

from __future__ import annotations

import torch

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.attention import attention, attn_fwd_kernel, reference, visible_pairs
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, randn


def make_case(B: int, H: int, S: int, D: int, dtype: torch.dtype, causal: bool, seed_shape: bool = False, *,
              H_kv: int | None = None, S_k: int | None = None, model_layout: bool = False) -> Case:
    """H_kv: GQA/MQA key/value heads (default H); S_k: key length (default S); model_layout: q, k, v made as
    (B, S, H, D) and passed as .transpose(1, 2), as a model's projections produce them."""
    hk, sk = H_kv or H, S_k or S

    def make(shape: tuple[int, int, int, int], dev: torch.device, gen: torch.Generator) -> torch.Tensor:
        if model_layout:
            b, h, s, d = shape
            return randn((b, s, h, d), dtype, dev, gen).transpose(1, 2)
        return randn(shape, dtype, dev, gen)

    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        return {"q": make((B, H, S, D), dev, gen), "k": make((B, hk, sk, D), dev, gen),
                "v": make((B, hk, sk, D), dev, gen)}

    def eager(x: Inputs) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(x["q"], x["k"], x["v"], is_causal=causal,
                                                                enable_gqa=hk != H)

    elem = torch.empty((), dtype=dtype).element_size()
    fl = 4.0 * B * H * D * visible_pairs(S, sk, causal)
    name = f"{str(dtype).replace('torch.', '')} B={B} H={H} S={S} D={D}" + (f" H_kv={hk}" if hk != H else "") + \
        (f" S_k={sk}" if sk != S else "") + (" BSHD" if model_layout else "") + (" causal" if causal else "")
    return Case("attention", name, dtype, setup, run=lambda x, out: attention(x["q"], x["k"], x["v"], causal, out=out),
                reference=lambda x: reference(x["q"], x["k"], x["v"], causal), eager=eager, flops=fl,
                bytes=float(elem * 2 * B * (H * S + hk * sk) * D), out_shape=lambda x: (B, H, S, D),
                seed_shape=seed_shape, params={"B": B, "H": H, "S": S, "D": D, "causal": causal, "H_kv": hk, "S_k": sk})


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(1, 2, 77, 64, torch.float32, False), make_case(1, 1, 100, 64, torch.float16, True),
                make_case(1, 1, 65, 128, torch.bfloat16, True), make_case(1, 1, 50, 128, torch.bfloat16, False),
                # a model's call: GQA 4:2, keys longer than queries, head dim 80 (padded to 128), (B, S, H, D) layout
                make_case(1, 4, 40, 80, torch.float16, True, H_kv=2, S_k=70, model_layout=True)]
    if preset == "sweep":  # the grid lives in smoke/sweep.py with the other classes'
        from rocm_triton_doctor.smoke import sweep as grid

        return grid.attention_cases()
    seeds = [make_case(1, 32, 2048, 128, torch.float16, True, seed_shape=True)]  # a small Llama layer's attention
    if preset == "seed":
        return seeds
    quick = [make_case(2, 16, 1024, 64, torch.float16, False), make_case(2, 16, 1000, 128, torch.bfloat16, True)]
    if preset == "bench":
        return [make_case(4, 32, 4096, 128, torch.bfloat16, c) for c in (False, True)]
    if preset == "quick":
        return seeds + quick
    return seeds + quick + [make_case(4, 32, 4096, 128, torch.bfloat16, c) for c in (False, True)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    out = []
    strides = {f"s{t}_{d}": "i32" for t in "qkvo" for d in "bhsd"}
    # D=80, 160 and 192 compile in two column blocks (64 + 16, 128 + 32, 128 + 64: pointer_column_split); 256 is the
    # largest supported.
    for d, causal in ((64, True), (128, True), (128, False), (80, True), (160, False), (192, True), (256, True)):
        block_d, block_d2 = policy.column_blocks(d, policy.pointer_column_split(target, d))
        cfg = policy.attention_config(target, block_d + block_d2, 2, causal=causal)
        const = {"HEAD_DIM": d, "BLOCK_D": block_d, "BLOCK_D2": block_d2, "Q_SIGN": 1, "CAUSAL": causal,
                 "UPCAST": False, "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"], "STATS": False,
                 "DOT_PREC": "ieee"}
        sig = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*bf16", "qk_scale": "fp32",
               "S_Q": "i32", "S_K": "i32", "GROUP": "i32", **strides, "lse_ptr": "*fp32"}
        const.update({"sq_d": 1, "sk_d": 1, "sv_d": 1, "so_d": 1})  # what Triton's specialisation of stride 1 gives
        const["DIV"] = 16  # row strides that are multiples of 16 elements, as a contiguous D=64/128 launch passes
        out.append((f"attention bf16{' causal' if causal else ''} D={d}", attn_fwd_kernel, sig, const, cfg))
    from rocm_triton_doctor.kernels import attention_tma

    if policy.tensor_desc_device_supported(target):
        # What runs on Hopper for D=80/96 at large sizes with a Triton that builds descriptors on the GPU
        # (attention_kernel); D = 192/256 run here only when asked for (kernel="tma_device").
        out += attention_tma.aot_specs(target, lambda bd, c, split: policy.attention_config(target, bd, 2, c, tma=True,
                                                                                         split=split))
    from rocm_triton_doctor.kernels import attention_split

    out += attention_split.aot_specs(target)  # decode and short query blocks against long keys
    if policy.attention_use_tma(target, 128, policy.TMA_ATTENTION_MIN_FLOPS):
        # What runs on Hopper for D=128: the host-descriptor kernel.
        out += attention_tma.host_aot_specs(lambda c: policy.attention_config(target, 128, 2, causal=c, tma=True))
    return [AotSpec(*s) for s in out]


def backward_aot_specs(target: policy.Target) -> list[AotSpec]:
    """The backward as training runs it (bf16, unit last strides): Δ, dK/dV and dQ for D = 64, 128 (causal and
    not), 80 (padded to 128, masked) and 256, on NVIDIA also D = 64 and 128 with the atomic dQ a few query blocks take,
    and the forward with STATS."""
    from rocm_triton_doctor.kernels.attention_backward import (attn_bwd_dkdv_kernel, attn_bwd_dq_kernel,
                                                                attn_bwd_dq_out_kernel, attn_bwd_preprocess_kernel,
                                                                pre_rows)

    # The forward as training runs it: STATS (the row lse stored), pointer kernel.
    specs = [AotSpec(f"{sp.label} (STATS)", sp.fn, sp.signature, {**sp.constexprs, "STATS": True}, sp.options)
             for sp in aot_specs(target) if sp.label in ("attention bf16 causal D=128", "attention bf16 D=128")]
    st = {f"s{t}_{d}": "i32" for t in ("q", "k", "v", "do") for d in "bhsd"}
    cases: list[tuple[int, bool, bool | None]] = [(64, True, None), (64, False, None), (128, True, None),
                                                  (128, False, None), (80, True, None), (256, True, None)]
    if target.backend == "cuda":  # few query blocks over many keys take the atomic dQ at any head dim there
        cases += [(64, False, True), (128, False, True)]  # (policy_attention.attention_backward_dq_atomic)
    for d, causal, forced in cases:
        block_d = max(16, 1 << (d - 1).bit_length())
        cfg = policy.attention_backward_config(target, block_d, 2, causal)
        atomic = bool(cfg.pop("DQ_ATOMIC", False)) if forced is None else forced
        opts = {key: val for key, val in cfg.items() if not key.startswith("BLOCK_")}
        unit = {"HEAD_DIM": d, "BLOCK_D": block_d, "Q_SIGN": 1, "CAUSAL": causal, "UPCAST": False, "DOT_PREC": "ieee",
                **{f"s{t}_d": 1 for t in ("q", "k", "v", "do")}, "DIV": 16}  # row strides as a contiguous launch's
        ptrs = {p: "*bf16" for p in ("q_ptr", "k_ptr", "v_ptr", "do_ptr")} | {"lse_ptr": "*fp32", "delta_ptr": "*fp32"}
        sc = {"qk_scale": "fp32"}
        label = f"attention backward bf16{' causal' if causal else ''} D={d}{' short queries' if forced else ''}"
        parts = 4 if d == 64 and not causal else 1  # one spec with a GQA group in parts: fp32 partial dK/dV
        dkt = "*fp32" if parts > 1 else "*bf16"
        specs.append(AotSpec(f"{label} dK/dV" + (" (GQA parts)" if parts > 1 else ""), attn_bwd_dkdv_kernel,
                             {**ptrs, "dk_ptr": dkt, "dv_ptr": dkt, "dqa_ptr": "*fp32", **sc, "dk_scale": "fp32",
                              "S_Q": "i32", "S_K": "i32", "GROUP": "i32", **st,
                              **{f"s{t}_{x}": "i32" for t in ("dk", "dv") for x in "bhsd"}},
                             {**unit, "sdk_d": 1, "sdv_d": 1, "BLOCK_M": cfg["BLOCK_M1"], "BLOCK_N": cfg["BLOCK_N1"],
                              "KV_SPLIT": parts, "DQ_ATOMIC": atomic},
                             opts))
        if atomic:  # dQ: the accumulated rows scaled and cast
            specs.append(AotSpec(f"{label} dQ (atomic sums out)", attn_bwd_dq_out_kernel,
                                 {"dqa_ptr": "*fp32", "dq_ptr": "*bf16", "dq_scale": "fp32", "S_Q": "i32",
                                  **{f"sdq_{x}": "i32" for x in "bhsd"}},
                                 {"HEAD_DIM": d, "BLOCK_D": block_d, "BLOCK_M": pre_rows(block_d), "sdq_d": 1,
                                  "DIV": 16}, {"num_warps": 4}))
        else:
            specs.append(AotSpec(f"{label} dQ", attn_bwd_dq_kernel,
                                 {**ptrs, "dq_ptr": "*bf16", **sc, "dq_scale": "fp32", "S_Q": "i32", "S_K": "i32",
                                  "GROUP": "i32", **st, **{f"sdq_{x}": "i32" for x in "bhsd"}},
                                 {**unit, "sdq_d": 1, "BLOCK_M": cfg["BLOCK_M2"], "BLOCK_N": cfg["BLOCK_N2"]}, opts))
        if d in (128, 256) and causal:
            specs.append(AotSpec(f"attention backward bf16 D={d} delta", attn_bwd_preprocess_kernel,
                                 {"o_ptr": "*bf16", "do_ptr": "*bf16", "delta_ptr": "*fp32", "dqa_ptr": "*fp32",
                                  "S_Q": "i32", **{f"s{t}_{x}": "i32" for t in ("o", "do") for x in "bhsd"}},
                                 {"HEAD_DIM": d, "BLOCK_D": block_d, "BLOCK_M": pre_rows(block_d), "so_d": 1, "sdo_d": 1,
                                  "DIV": 16, "ZERO_DQ": atomic},
                                 {"num_warps": 4}))
    return specs
