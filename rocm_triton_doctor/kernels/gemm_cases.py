"""gemm's smoke cases (the seed, quick, bench, sweep and interpreter presets; make_case for the random preset and the
baselines) and the shapes the compile-only audit compiles its kernels for (aot_specs). gemm.py registers both."""

from __future__ import annotations

import torch

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, DropoutCheck, Inputs, randn
from rocm_triton_doctor.kernels.gemm import gemm
from rocm_triton_doctor.kernels.gemm_kernels import gemm_kernel, gemm_tma_kernel, gemv_kernel
from rocm_triton_doctor.kernels.aligned_copy import pad_copy_kernel
from rocm_triton_doctor.kernels.gemv_kshift import gemv_kshift_kernel
from rocm_triton_doctor.kernels.gemm_parts import bytes_moved, eager, flops, reference


def make_case(M: int, K: int, N: int, dtype: torch.dtype, epilogue: str, p: float = 0.0, *,
              transposed_b: bool = False, transposed_a: bool = False, bias_dtype: torch.dtype | None = None,
              seed_shape: bool = False) -> Case:
    """transposed_a/_b: the operand is the transpose of a contiguous tensor (column-major, as nn.Linear's weight is
    read); bias_dtype: fp32 bias with 16-bit activations (mixed precision)."""
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        scale = K ** -0.5  # keep outputs O(1) so fp16 does not overflow
        a = randn((K, M), dtype, dev, gen).t() if transposed_a else randn((M, K), dtype, dev, gen)
        b = randn((N, K), dtype, dev, gen, scale).t() if transposed_b else randn((K, N), dtype, dev, gen, scale)
        bias = randn((N,), bias_dtype or dtype, dev, gen) if epilogue != "none" else None
        return {"a": a, "b": b, "bias": bias, "seed": 1234}

    def run(x: Inputs, out: torch.Tensor | None) -> torch.Tensor:
        return gemm(x["a"], x["b"], x["bias"], epilogue, p, x["seed"], out=out)

    def ref(x: Inputs) -> torch.Tensor:
        return reference(x["a"], x["b"], x["bias"], epilogue)

    drop = None
    if p > 0:
        drop = DropoutCheck(p, observed=lambda x, out: out, undropped=ref)
    name = f"{str(dtype).replace('torch.', '')} {M}x{K}x{N} {epilogue}" + (f"+dropout{p}" if p else "") + \
        (" A^T" if transposed_a else "") + (" B^T" if transposed_b else "") + (" fp32 bias" if bias_dtype else "")
    elem = dtype.itemsize
    return Case("gemm", name, dtype, setup, run, ref,
                eager=lambda x: eager(x["a"], x["b"], x["bias"], epilogue, p),
                flops=flops(M, N, K), bytes=bytes_moved(M, N, K, elem, epilogue != "none"),
                out_shape=lambda x: (M, N), tf32=False, dropout=drop, seed_shape=seed_shape,
                params={"M": M, "N": N, "K": K, "epilogue": epilogue, "p": p})


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        # Odd sizes (not multiples of any block), every dtype and epilogue, and a transposed B.
        return [make_case(67, 45, 93, torch.float32, "none"), make_case(67, 45, 93, torch.float16, "bias"),
                make_case(67, 45, 93, torch.bfloat16, "bias_relu"), make_case(50, 70, 65, torch.float32, "bias_gelu"),
                make_case(64, 256, 128, torch.float16, "bias_relu", 0.1, seed_shape=True),
                make_case(33, 40, 70, torch.float16, "bias_relu", transposed_b=True),
                # decode-size M (the split-K path), and a transposed A with an fp32 bias on bf16 activations
                make_case(5, 520, 70, torch.float16, "bias_gelu", 0.1),
                make_case(40, 72, 48, torch.bfloat16, "bias", transposed_a=True, bias_dtype=torch.float32),
                # 3 rows against nn.Linear's weight: the GEMV kernel (policy_gemv.gemv_takes), with dropout
                make_case(3, 300, 77, torch.float32, "bias_relu", 0.2, transposed_b=True)]
    seeds = [make_case(m, k, n, torch.float16, "bias_relu", seed_shape=True) for m, k, n in
             ((64, 256, 128), (128, 256, 256), (1024, 1024, 1024))]
    seeds += [make_case(m, k, n, torch.float16, "bias_relu", 0.1, seed_shape=True) for m, k, n in
              ((64, 256, 128), (128, 256, 256), (1024, 1024, 1024))]
    if preset == "seed":
        return seeds
    quick = [make_case(1023, 517, 769, torch.float32, "bias_gelu"), make_case(2048, 2048, 2048, torch.bfloat16, "none"),
             make_case(2048, 2048, 2048, torch.float16, "bias_relu", 0.1)]
    if preset == "quick":
        return seeds[2:3] + seeds[5:6] + quick
    if preset == "sweep":  # the sweep's grid by class (smoke/sweep.py), rows too big for the GPU's checks left out
        from rocm_triton_doctor.smoke import sweep

        return [make_case(M, K, N, dt, epi) for M, K, N, dt, epi in sweep.gemm_shapes()
                if all(sweep.fits(s, dt.itemsize) is None for s in ((M, K), (K, N), (M, N)))]
    big = []
    if preset == "bench":
        for dt in (torch.float16, torch.bfloat16):
            for n in (4096, 8192):
                big += [make_case(n, n, n, dt, "none"), make_case(n, n, n, dt, "bias_relu"),
                        make_case(n, n, n, dt, "bias_relu", 0.1)]
        return seeds + big
    for dt in (torch.float16, torch.bfloat16):
        for n in (4096, 8192):
            big += [make_case(n, n, n, dt, "none"), make_case(n, n, n, dt, "bias_relu"),
                    make_case(n, n, n, dt, "bias_relu", 0.1)]
    return seeds + quick + big


def aot_specs(target: policy.Target) -> list[AotSpec]:
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "bias_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32",
           "stride_cn": "i32", "stride_bias": "i32", "seed": "i32", "threshold": "u32", "scale": "fp32"}
    specs = []
    # What the policy picks for a square 4096^3 GEMM and for a decode step (M=16 against a 4096x4096 weight: the
    # split-K path, partial sums into an fp32 workspace, EPILOGUE 0 there as in gemm()).
    # Strides as a launch sees them for row-major operands: the leading ones divisible by 16 (DIV 16), the unit ones
    # the constant 1 (Triton specialises an int argument equal to 1; left as i32 the compiler would see gathers).
    divs = {"DIV_AM": 16, "DIV_AK": 1, "DIV_BK": 16, "DIV_BN": 1, "DIV_CM": 16, "DIV_CN": 1, "DIV_M": 16, "DIV_N": 16,
            "DIV_K": 16, "stride_ak": 1, "stride_bn": 1, "stride_cn": 1}
    divs_bt = {**divs, "DIV_BK": 1, "DIV_BN": 16, "stride_bk": 1}
    del divs_bt["stride_bn"]
    for label, (m, n, k), epi, nmajor in (
            ("", (4096, 4096, 4096), (0, False), True), (" bias+relu+dropout", (4096, 4096, 4096), (2, True), True),
            (" decode M=16 (split-K)", (16, 4096, 4096), (0, False), True),
            (" decode M=16 B^T (split-K)", (16, 4096, 4096), (0, False), False),
            (" short K=128", (4096, 4096, 128), (0, False), True),
            (" skinny N=8 B^T (a router; split-K on NVIDIA)", (8192, 8, 4096), (0, False), False)):
        cfg = policy.gemm_config(target, m, n, k, 2, b_nmajor=nmajor)
        tiles = {key: cfg[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K")}
        const = {"EPILOGUE": epi[0], "HAS_DROPOUT": epi[1], "UPCAST": False, "PRECISION": "ieee", "B_PAD": 1, "EVEN_M": True,
                 "EVEN_N": True, "EVEN_K": True, "INT64": False, **tiles,
                 **(divs if nmajor else divs_bt)}
        specs.append((f"gemm fp16{label}", gemm_kernel, {**sig, "c_ptr": "*fp32" if tiles["SPLIT_K"] > 1 else "*fp16"},
                      const, cfg))
    # Operands read with scalar loads (fp16 3426x673x93: K and N odd, so no row stride or size is a multiple of 2):
    # on NVIDIA the small tiles policy.misaligned_small_tiles picks, elsewhere that target's own tiles.
    mcfg = policy.gemm_config(target, 3426, 673, 93, 2, b_nmajor=True, aligned=False)
    mtiles = {key: mcfg[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K")}
    specs.append(("gemm fp16 3426x673x93, K and N odd (scalar loads)", gemm_kernel,
                  {**sig, "c_ptr": "*fp32" if mtiles["SPLIT_K"] > 1 else "*fp16"},
                  {"EPILOGUE": 0, "HAS_DROPOUT": False, "UPCAST": False, "PRECISION": "ieee", "B_PAD": 1,
                   "EVEN_M": False, "EVEN_N": False, "EVEN_K": False, "INT64": False, **mtiles,
                   **{**divs, "DIV_AM": 1, "DIV_BK": 1, "DIV_CM": 1, "DIV_M": 2, "DIV_N": 1, "DIV_K": 1}}, mcfg))
    # The GEMV kernel (a few rows of A where policy.gemv_takes says so): a decode step against an
    # nn.Linear weight (K contiguous, split-K into the fp32 workspace), and 4 rows against a row-major weight.
    for label, (m, n, k), elem, kmajor in ((" GEMV M=1 B^T (split-K)", (1, 4096, 4096), 2, True),
                                           (" GEMV M=4", (4, 4096, 4096), 2, False)):
        gcfg = policy.gemv_config(target, m, n, k, elem, kmajor, 0)
        gtiles = {key: gcfg[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "STAGES")}
        gdivs = {**(divs_bt if kmajor else divs)}
        for key in ("DIV_M", "DIV_K"):  # the GEMV kernel takes M and K as they are
            gdivs.pop(key)
        const = {"EPILOGUE": 0, "HAS_DROPOUT": False, "B_KMAJOR": kmajor, "EVEN_N": True, "EVEN_K": True,
                 "INT64": False, "SHIFT": 1, **gtiles, **gdivs}
        specs.append((f"gemm fp16{label}", gemv_kernel, {**sig, "c_ptr": "*fp32" if gtiles["SPLIT_K"] > 1 else "*fp16"},
                      const, gcfg))
    # fp32 against a row-major weight whose rows are not 16-byte aligned (2x1041x12427, an odd row stride: DIV_BK 1),
    # read in shifted 16-byte windows (SHIFT 4) into the workspace: whole-vector loads on every target.
    wcfg = policy.gemv_config(target, 2, 12427, 1041, 4, False, 0)
    wtiles = {key: wcfg[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "STAGES")}
    wdivs = {k: v for k, v in divs.items() if k not in ("DIV_M", "DIV_K")}
    wsig = {**sig, **{p: "*fp32" for p in ("a_ptr", "b_ptr", "c_ptr", "bias_ptr")}}
    specs.append(("gemm fp32 GEMV M=2, misaligned row-major B (shifted windows)", gemv_kernel, wsig,
                  {"EPILOGUE": 0, "HAS_DROPOUT": False, "B_KMAJOR": False, "EVEN_N": False, "EVEN_K": False,
                   "INT64": False, **wtiles, **wdivs, "DIV_AM": 1, "DIV_BK": 1, "DIV_CM": 4, "SHIFT": 4}, wcfg))
    if target.backend == "cuda":
        # fp32 decode against a small aligned row-major weight (1x1025x304): the narrowed tiles, 32 columns by 128 deep,
        # pipelined in 3 stages (policy_gemv.gemv_config; the policy takes them on NVIDIA only).
        ncfg = policy.gemv_config(target, 1, 304, 1025, 4, False, 0, True)
        ntiles = {key: ncfg[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "STAGES")}
        ndivs = {k: v for k, v in divs.items() if k not in ("DIV_M", "DIV_K")}
        specs.append(("gemm fp32 GEMV M=1, small aligned row-major B (narrow, deep, pipelined tiles)", gemv_kernel,
                      {**sig, **{p: "*fp32" for p in ("a_ptr", "b_ptr", "bias_ptr")},
                       "c_ptr": "*fp32"},
                      {"EPILOGUE": 0, "HAS_DROPOUT": False, "B_KMAJOR": False, "EVEN_N": True, "EVEN_K": False,
                       "INT64": False, "SHIFT": 1, **ntiles, **ndivs}, ncfg))
    # A short K against nn.Linear's weight (1x17x23227 B^T, 34-byte rows: DIV_BN 1): a K block cut to K's power of
    # two (policy_gemv.gemv_config), masked at K.
    kcfg = policy.gemv_config(target, 1, 23227, 17, 2, True, 0)
    ktiles = {key: kcfg[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "STAGES")}
    kdivs = {k: v for k, v in divs_bt.items() if k not in ("DIV_M", "DIV_K")}
    specs.append(("gemm bf16 GEMV M=1 B^T, K=17 (short K blocks)", gemv_kernel,
                  {**sig, **{p: "*bf16" for p in ("a_ptr", "b_ptr", "c_ptr", "bias_ptr")}},
                  {"EPILOGUE": 0, "HAS_DROPOUT": False, "B_KMAJOR": True, "EVEN_N": False, "EVEN_K": False,
                   "INT64": False, "SHIFT": 1, **ktiles, **kdivs, "DIV_AM": 1, "DIV_BN": 1, "DIV_CM": 1}, kcfg))
    # A K-major weight whose columns start off a 16-byte boundary (4x3813x27698 B^T: K odd, DIV_BN 1), read by
    # residue class of columns in whole vectors (gemv_kshift.gemv_kshift_kernel). The policy runs it on NVIDIA only;
    # it is compiled for every target to show its loads are whole vectors and it does not spill there either.
    scfg = policy.gemv_config(target, 4, 27698, 3813, 2, True, 0)
    stiles = {key: scfg[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K", "STAGES")}
    specs.append(("gemm bf16 GEMV M=4 B^T, K=3813 (whole-vector windows by residue class)", gemv_kshift_kernel,
                  {**sig, **{p: "*bf16" for p in ("a_ptr", "b_ptr", "bias_ptr")},
                   "c_ptr": "*fp32" if stiles["SPLIT_K"] > 1 else "*bf16"},
                  {"EPILOGUE": 0, "HAS_DROPOUT": False, "B_KMAJOR": True, "EVEN_N": False, "EVEN_K": False,
                   "INT64": False, "SHIFT": 8, **stiles, **kdivs, "DIV_AM": 1, "DIV_BN": 1, "DIV_CM": 1}, scfg))
    # The aligned copy of a misaligned operand (aligned_copy.pad_copy_kernel): 4097-element bf16 rows into 4160.
    specs.append(("gemm aligned copy bf16 4097-wide rows", pad_copy_kernel,
                  {"src": "*bf16", "dst": "*bf16", "rows": "i32", "cols": "i32", "s_r": "i32", "s_c": "i32",
                   "width_q": "i32"}, {"DIV": 16, "INT64": False, "BLOCK_R": 16, "BLOCK_C": 256, "s_c": 1},
                  {"num_warps": 4}))
    # The GELU kernels around a bias_gelu GEMM under autograd (gemm_autograd.py): the forward after the GEMM and the
    # backward's gradient, as row tiles (dropout at an odd width) and as one flat stretch; ReLU's gradient on tiles.
    from rocm_triton_doctor.kernels import gemm_autograd  # it imports gemm, which registers these cases

    tcfg2 = policy.tile2d_config(target, 16384, 4093)
    fcfg = policy.bias_flat_config(target, 16384 * 4093)
    drop = {"seed": "i64", "threshold": "u32", "scale": "fp32"}
    fast = policy.fast_tanh(target, 2)
    specs.append(("gemm autograd GELU bf16 row tiles", gemm_autograd._gelu_tile_kernel,
                  {"pre_ptr": "*bf16", "y_ptr": "*bf16", "M": "i32", "N": "i32", **drop},
                  {"HAS_DROPOUT": True, "FAST_TANH": fast, "BLOCK_M": tcfg2["BLOCK_M"], "BLOCK_N": tcfg2["BLOCK_N"]},
                  tcfg2))
    specs.append(("gemm autograd GELU bf16 flat", gemm_autograd._gelu_flat_kernel,
                  {"pre_ptr": "*bf16", "y_ptr": "*bf16", "n": "i64", **drop},
                  {"HAS_DROPOUT": False, "FAST_TANH": fast, "BLOCK": fcfg["BLOCK"]}, fcfg))
    for act, label in ((gemm_autograd.GELU, "GELU"), (gemm_autograd.RELU, "ReLU")):
        specs.append((f"gemm autograd {label} gradient bf16 row tiles", gemm_autograd._epilogue_backward_kernel,
                      {"dy_ptr": "*bf16", "v_ptr": "*bf16", "g_ptr": "*bf16", "dbp_ptr": "*fp32", "M": "i32",
                       "N": "i32", "s_dym": "i32", **drop},
                      {"s_dyn": 1, "ACT": act, "HAS_DROPOUT": True, "BLOCK_M": tcfg2["BLOCK_M"],
                       "BLOCK_N": tcfg2["BLOCK_N"]}, tcfg2))
    specs.append(("gemm autograd GELU gradient bf16 flat", gemm_autograd._gelu_backward_flat_kernel,
                  {"dy_ptr": "*bf16", "pre_ptr": "*bf16", "g_ptr": "*bf16", "n": "i64", **drop},
                  {"HAS_DROPOUT": False, "BLOCK": fcfg["BLOCK"]}, fcfg))
    if policy.gemm_use_tma(target, 4096, 4096, 4096):
        # What actually runs there at this size: the persistent TMA kernel (132 SMs: an H100/H200 SXM).
        tcfg = policy.gemm_config(target, 4096, 4096, 4096, 2, tma=True)
        bm, bn, bk = tcfg["BLOCK_M"], tcfg["BLOCK_N"], tcfg["BLOCK_K"]
        tsig = {"a_desc": f"tensordesc<fp16[{bm}, {bk}]>", "b_desc": f"tensordesc<fp16[{bk}, {bn}]>", "c_ptr": "*fp16",
                "bias_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32", "stride_cm": "i32", "stride_cn": "i32",
                "stride_bias": "i32", "seed": "i32", "threshold": "u32", "scale": "fp32"}
        tconst = {"EPILOGUE": 2, "HAS_DROPOUT": True, "UPCAST": False, "INT64": False, "BLOCK_M": bm, "BLOCK_N": bn,
                  "BLOCK_K": bk, "GROUP_M": tcfg["GROUP_M"], "NUM_SMS": 132, "DIV_CM": 16, "DIV_CN": 1, "DIV_M": 16, "DIV_N": 16,
                  "stride_cn": 1}
        specs.append(("gemm fp16 bias+relu+dropout (TMA, persistent)", gemm_tma_kernel, tsig, tconst, tcfg))
    return [AotSpec(*s) for s in specs]
