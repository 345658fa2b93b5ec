"""GEMM with a fused epilogue: C = epilogue(A @ B), epilogue in {none, +bias, +bias then ReLU, +bias then GELU(tanh)},
optionally followed by dropout (seeded Philox, keep prob 1-p, scale 1/(1-p)).

A is M×K, B is K×N, any strides (transposed and chunked views are read in place; an operand whose rows are not 16-byte
aligned is copied to an aligned buffer only where policy.gemm_align_copy says the copy pays), bias has N elements (any
stride, the inputs' dtype or fp32). The product accumulates in fp32 tiles; the epilogue runs on the fp32 accumulator before the
single store, so the fused kernel reads A and B once and writes C once, where eager torch writes C, reads it back for
the bias, writes again for the activation, and again for dropout. Small M (decode) can split K over several programs
(fp32 partial sums, then one reduce-and-epilogue pass), so a 16-row GEMM still fills the GPU, and a few rows of A
run on the GEMV kernel (gemm_kernels.gemv_kernel, policy_gemv.py) where it beats the tensor-core tiles.
FLOPs 2·M·N·K (+ epilogue); bytes e·(M·K + K·N + M·N) + e·N.
"""

from __future__ import annotations

from typing import Any

import torch

from rocm_triton_doctor.kernels import argcheck, policy, policy_misaligned, tunecache
from rocm_triton_doctor.kernels.base import (KernelSpec, cdiv, check_p, dropout_args, tma_layout_ok,
                                             upcast_dots)
from rocm_triton_doctor.kernels.gemm_kernels import gemm_tma_kernel, gemv_kernel
from rocm_triton_doctor.kernels.gemv_kshift import gemv_kshift_kernel
from rocm_triton_doctor.kernels.aligned_copy import CopyPlan, aligned_copy, aligned_like, misaligned, split_stride
from rocm_triton_doctor.kernels.base import device_cus as _cus, sm_count as _sm_count
from rocm_triton_doctor.kernels.gemm_plan import _Part, _Plan
from rocm_triton_doctor.kernels.gemm_parts import (_checked_config, _needs_int64, _ws_cols, activation_lead,
                                                   checked_gemv_config, gemv_kmajor, gemv_shift_refusal, tune_key)
from rocm_triton_doctor.kernels.gemm_parts import (  # noqa: F401 - re-exported (tests, --tune, the benchmarks)
    CONFIG_KEYS, eager, reference, tune_candidates)

EPILOGUES = {"none": 0, "bias": 1, "bias_relu": 2, "bias_gelu": 3}
GELU_FAST_TANH = 4  # the kernels' EPILOGUE code for bias_gelu through the hardware tanh (epilogue_code)
DTYPES = (torch.float16, torch.bfloat16, torch.float32)
# fp32 products: "auto" (fp32 accuracy, the policy's way: policy_fp32.fp32_dot_precision), or tl.dot's own
# input_precision: "ieee" (FMA), "tf32x3" (the 3xTF32 split, NVIDIA sm_80+), "tf32" (10-bit products, NVIDIA sm_80+).
PRECISIONS = ("auto", "ieee", "tf32x3", "tf32")
KERNELS = ("auto", "pointer", "tma", "gemv")
tunecache.register_validator("gemm", _checked_config)  # cached entries pass the config= check, or are dropped


def epilogue_code(epilogue: str, target: policy.Target, c: torch.Tensor) -> int:
    """The kernels' EPILOGUE for `epilogue` writing C: bias_gelu takes the hardware tanh (common.gelu_tanh's
    FAST_TANH) where policy.fast_tanh allows it (NVIDIA, 16-bit C). With K short the product is a write of C, and
    GELU's exp and division (two MUFU operations an element) bound it: H200, graph replay, fp16 4096x24x8192
    bias_gelu B^T took 50.6 us against 30.6 without the epilogue, fp16 13151x19x8035 bias_gelu B^T 194.9 against
    116.5 (benchmarks/short_k_probe.py, docs/measurements/2026-11-28-h200-s25-short-k.txt)."""
    code = EPILOGUES[epilogue]
    return GELU_FAST_TANH if code == EPILOGUES["bias_gelu"] and policy.fast_tanh(target, c.element_size()) else code


def gemm(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None, epilogue: str = "none", p: float = 0.0,
         seed: int | None = None, out: torch.Tensor | None = None, precision: str = "auto",
         config: dict[str, Any] | None = None, kernel: str = "auto") -> torch.Tensor:
    """epilogue(a @ b [+ bias]) with optional dropout. Raises ValueError/TypeError on inputs it cannot compute right.

    a (M, K) and b (K, N): fp16, bf16 or fp32, one dtype, any strides (no copy); a may also be (..., K) with leading
    dimensions that fold into one row stride (activations as F.linear takes them; a 1-D vector), the output then
    (..., N). bias (N,): that dtype or fp32, any
    stride; required by the bias epilogues and refused with epilogue="none" (a bias the caller meant to add must not
    vanish silently). The product and epilogue run in fp32. out: a fresh tensor of a's dtype, or `out` (a's dtype or
    fp32, any strides, sharing no memory with the inputs). seed: None draws a fresh one per call (a new dropout mask,
    like F.dropout); an int gives the same mask every call. Inputs that require grad are refused under grad mode (no
    backward yet). precision: how fp32 products are formed (PRECISIONS; "auto" keeps fp32 accuracy). kernel: "auto"
    (the policy's choice), "pointer" (gemm_kernel, split-K when the policy says so),
    "tma" (gemm_tma_kernel; 16-bit, Triton with tensor descriptors, TMA-compatible layouts only) or "gemv"
    (gemv_kernel: fp32 multiply-adds, rows in chunks of up to 8; "auto" takes it for a few rows)."""
    argcheck.check_choice("gemm", "epilogue", epilogue, EPILOGUES)
    argcheck.check_choice("gemm", "kernel", kernel, KERNELS)
    argcheck.check_choice("gemm", "precision", precision, PRECISIONS)
    argcheck.check_config_dict("gemm", config)
    dev = argcheck.check_tensors("gemm", a=a, b=b, bias=bias, out=out)
    if (lead := activation_lead(a, b)) is not None:
        # a of shape (..., K), as F.linear and a @ b take activations: its leading dimensions as rows, the output
        # (..., N) (a view of the (rows, N) product).
        N = b.shape[1]
        if out is not None and tuple(out.shape) != (*lead, N):
            raise ValueError(f"gemm: out must have shape {(*lead, N)}, got {tuple(out.shape)}")
        a2 = argcheck.fold_rows("gemm", "a", a)
        out2 = None if out is None else argcheck.fold_rows("gemm", "out", out)
        c = gemm(a2, b, bias, epilogue, p, seed, out2, precision, config, kernel)
        return out if out is not None else c.view(*lead, N)
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"gemm: b must be 2-D and a at least 1-D, got {tuple(a.shape)} and {tuple(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"gemm: inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    dtype = a.dtype
    if b.dtype != dtype:
        raise TypeError(f"gemm: mixed dtypes {b.dtype} and {dtype} for a and b")
    if dtype not in DTYPES:
        raise TypeError(f"gemm: dtype {dtype} not supported (use float16, bfloat16 or float32)")
    M, K = a.shape
    N = b.shape[1]
    if EPILOGUES[epilogue] >= 1:
        if bias is None or tuple(bias.shape) != (N,):
            raise ValueError(f"gemm: epilogue {epilogue!r} needs a bias of shape ({N},)")
        if bias.dtype not in (dtype, torch.float32):
            allowed = " or ".join(dict.fromkeys(str(d).removeprefix("torch.") for d in (dtype, torch.float32)))
            raise TypeError(f"gemm: bias must be {allowed}, got {str(bias.dtype).removeprefix('torch.')}")
    elif bias is not None:
        # A bias passed with epilogue="none" is added, as F.linear(x, w, bias) would: silently dropping it was a
        # wrong result (kernel-edge-cases.md #23), and gemm(a, b, bias) reads as "with bias".
        if tuple(bias.shape) != (N,) or bias.dtype not in (dtype, torch.float32):
            raise ValueError(f"gemm: bias must have shape ({N},) and dtype {dtype} or float32")
        epilogue = "bias"
    p = check_p(p, "gemm")
    seed_v = argcheck.dropout_seed("gemm", seed, p)
    if out is None:
        c = torch.empty((M, N), dtype=dtype, device=dev)
    else:
        c = argcheck.check_out("gemm", out, (M, N), (dtype, torch.float32), dev, a, b, bias)
    if M == 0 or N == 0:
        return c
    if config is None:
        # The launch plan of this call's signature (shape, strides, dtypes, 16-byte alignment, options, tune-cache
        # state): everything below is a pure function of it, so it is worked out once and reused (issue #16 item 4:
        # ~70 us of Python per GEMM call on an H100 host before, checks and policy and stride hints included).
        pkey = (dev, dtype, c.dtype, M, N, K, a.stride(), b.stride(), c.stride(), epilogue, p > 0.0, precision, kernel,
                None if bias is None else (bias.dtype, bias.stride(0), bias.data_ptr() & 15), a.data_ptr() & 15,
                b.data_ptr() & 15, c.data_ptr() & 15, tunecache.generation(), tunecache.enabled())
        plan = _PLANS.get(pkey)
        if plan is not None:
            if plan.tkey is not None:
                tunecache.note("gemm", plan.tkey)
            plan.run(a, b, c, bias, seed_v, p)
            return c
    plan = _decide(a, b, c, bias, epilogue, p, seed_v, precision, config, kernel, dev)
    if plan is None:  # the TMA kernel ran (host descriptors per call: not planned, only used >= 100 GFLOP)
        return c
    if config is None:
        if len(_PLANS) >= PLAN_LIMIT:
            _PLANS.clear()
        _PLANS[pkey] = plan
    plan.run(a, b, c, bias, seed_v, p)
    return c


PLAN_LIMIT = 4096  # launch plans kept before the table is cleared (a bound on memory for shape-varying callers)
_PLANS: dict[tuple[Any, ...], _Plan] = {}


def clear_plans() -> None:
    """Forget every cached launch plan (tests that change the policy; nothing else needs to)."""
    _PLANS.clear()


def _decide(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None, epilogue: str, p: float,
            seed_v: int, precision: str, config: dict[str, Any] | None, kernel: str, dev: torch.device) -> _Plan | None:
    """gemm()'s decisions for one call: the tune cache, the aligned copies, TMA or pointer kernel, tiles, split-K and
    the wave-quantisation tail. Launches the TMA kernel itself and returns None; otherwise the plan to run."""
    dtype = a.dtype
    M, K = a.shape
    N = b.shape[1]
    target = policy.target_for_device(dev.type)
    b_nmajor = b.stride(1) == 1 or b.stride(0) != 1  # B's rows (along N) contiguous; the aligned copy keeps the layout
    a_mmajor = a.stride(0) == 1 and a.stride(1) != 1  # A's columns (along M) contiguous: Aᵀ in a backward's dB = Aᵀ·dY
    asked = precision
    if dtype == torch.float32:
        if precision == "auto":
            # whether both operands will be read in 16-byte vectors: aligned, or copied aligned (the copy rule below)
            ca, cb = policy.gemm_align_copy(target, M, N, K, 4, not b_nmajor, a_mmajor, _cus(dev))
            aligned = not ((not ca and misaligned(a)) or (not cb and misaligned(b)))
            precision = policy.gemm_fp32_precision(target, M, b_nmajor, K, N, aligned)
        if not policy.precision_supported(target, precision):
            raise ValueError(f"gemm: precision {precision!r} needs TF32 tensor cores (NVIDIA sm_80 or later); this is "
                             f"{target.label}: use 'auto' or 'ieee'")
    else:
        precision = "ieee"  # 16-bit products are exact in the fp32 accumulator: the option means nothing there
    # The per-device autotune cache (tunecache.py, filled by `smoke --tune`; never read in the interpreter): one tuple
    # and one dict lookup. Its configs are pointer-kernel configs (tune_candidates), so a cached one runs on
    # gemm_kernel (use_tma False below), exactly as config=<it> with kernel="pointer" would, or GEMV configs
    # ({"GEMV": True, ...}), which run on gemv_kernel; kernel="tma" and kernel="gemv" skip it.
    tkey = None if config is not None or kernel in ("tma", "gemv") else tune_key(a, b, epilogue, p, precision)
    cached = None if tkey is None else tunecache.lookup("gemm", tkey, target)
    gemv_cfg = next((c for c in (cached, config) if c and c.get("GEMV")), None)
    if gemv_cfg is not None:
        # GEMV tiles: a tune-cache entry `smoke --tune` measured faster (gemm_parts._gemv_candidates), or a caller's.
        if kernel not in ("auto", "gemv"):
            raise ValueError(f"gemm: a GEMV config runs on the GEMV kernel, not kernel={kernel!r}")
        tiles = {k: v for k, v in _checked_config(gemv_cfg).items() if k != "GEMV"}
        return _gemv_plan(a, b, c, bias, epilogue, p, tiles, target, dev, tkey)
    if kernel == "gemv" or (kernel == "auto" and not cached and config is None and asked in ("auto", "ieee")
                            and policy.gemv_takes(target, M, a.element_size(), not misaligned(b), gemv_kmajor(b), K, N)):
        # A few rows of A: the GEMV kernel where policy_gemv.gemv_takes says it wins. It forms exact fp32 products,
        # so fp32's "auto" and "ieee" both hold there; an explicit TF32 request keeps the tensor-core tiles unless
        # forced. A tune-cache entry for this key (a pointer-kernel config `smoke --tune` measured faster) is honoured.
        return _gemv_plan(a, b, c, bias, epilogue, p, config, target, dev, tkey)
    user = _checked_config(cached or config or {})  # {}: the policy's tiles
    copy = user.pop("ALIGN_COPY", None)
    b_pad_ok = user.pop("B_PAD", True)  # False: mask a copied B at N, as before (benchmarks/gemm_ab_probe.py)
    copy_a = copy_b = False
    a0, b0 = a, b
    if K > 0:
        # An operand 16-byte loads cannot vectorise on (4097-element rows, a view one element off) is copied into an
        # aligned, padded buffer where the policy says the copy pays (policy.gemm_align_copy); ALIGN_COPY forces it.
        want_a, want_b = (policy.gemm_align_copy(target, M, N, K, a.element_size(), not b_nmajor, a_mmajor, _cus(dev))
                          if copy is None else (bool(copy), bool(copy)))
        copy_a, copy_b = want_a and misaligned(a), want_b and misaligned(b)
        # the copies' layout decides the tiles; the plan copies at each run (copying here too had doubled the work)
        a = aligned_like(a) if copy_a else a
        b = aligned_like(b) if copy_b else b
    tma_ok = a.element_size() == 2 and K > 0 and tma_layout_ok(a, b) and policy.tma_supported(target)
    if kernel == "tma" and not tma_ok:
        raise ValueError("gemm: the TMA kernel needs fp16/bf16 inputs with K > 0, contiguous rows and 16-byte aligned "
                         "rows and base pointers, on a target and Triton with tensor descriptors")
    use_tma = kernel == "tma" or (kernel == "auto" and not cached and tma_ok and policy.gemm_use_tma(target, M, N, K))
    cfg = user or policy.gemm_config(target, M, N, K, a.element_size(), tma=use_tma, cus=_cus(dev),
                                     b_nmajor=b_nmajor, tc=precision != "ieee",
                                     aligned=not (misaligned(a) or misaligned(b)))
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    split = 1 if use_tma else cfg.get("SPLIT_K", 1)
    opts = {k: v for k, v in cfg.items() if k != "SPLIT_K"}
    int64 = _needs_int64(a, b, c, bias, bm, bn, bk, split)
    # bf16 tl.dot is wrong in Triton's interpreter: its create_dot runs np.matmul on the raw uint16 bit patterns it
    # stores bf16 in (triton/runtime/interpreter.py; triton#11584), ~1e10 for O(1) inputs, while the descriptor
    # loads themselves are exact (checked: a bf16 tile loaded through a TensorDescriptor equals the tensor). So the
    # TMA kernels' garbage there is the interpreter's, not the kernel's; both GEMM kernels upcast the tiles to fp32
    # in the interpreter only (UPCAST), which tests the same tiling, descriptors, masks and epilogue.
    epi = {"EPILOGUE": epilogue_code(epilogue, target, c), "HAS_DROPOUT": p > 0.0, "INT64": int64}
    bias_stride = bias.stride(0) if bias is not None else 0
    upcast = upcast_dots(target, dtype)
    if use_tma:
        from triton.tools.tensor_descriptor import TensorDescriptor

        # not planned: launched here, so the copies are made here
        a = aligned_copy(a0) if copy_a else a
        b = aligned_copy(b0) if copy_b else b

        threshold, scale = dropout_args(p)
        (cm, div_cm), (cn, div_cn) = split_stride(c.stride(0)), split_stride(c.stride(1))
        a_desc = TensorDescriptor.from_tensor(a, [bm, bk])
        b_desc = TensorDescriptor.from_tensor(b, [bk, bn])
        sms = _sm_count(a.device) if a.device.type == "cuda" else 4
        grid = (min(sms, cdiv(M, bm) * cdiv(N, bn)),)
        (mk, div_m), (nk, div_n) = split_stride(M), split_stride(N)
        gemm_tma_kernel[grid](a_desc, b_desc, c, bias if bias is not None else c, mk, nk, K, cm, cn, bias_stride, seed_v,
                              threshold, scale, UPCAST=upcast, NUM_SMS=sms, DIV_CM=div_cm, DIV_CN=div_cn, DIV_M=div_m,
                              DIV_N=div_n, **epi, **opts)
        return None
    # A copied N-major B (its rows padded with zeros to 16 bytes) is read in whole vectors up to that padding.
    b_pad = 16 // b.element_size() if copy_b and b.stride(1) == 1 and N > 1 and b_pad_ok else 1
    # Both operands copied with K contiguous hold zeros past K up to 16 bytes: the K loop may run to that multiple, so
    # the partial last K block's loads are whole vectors (an odd K otherwise makes them scalar; see DIV_K).
    per = 16 // a.element_size()
    k_loop = -(-K // per) * per if copy_a and copy_b and a.stride(1) == 1 and b.stride(0) == 1 else K
    common = dict(UPCAST=upcast, PRECISION=precision, B_PAD=b_pad, EVEN_N=N % bn == 0,
                  EVEN_K=k_loop % bk == 0, **epi, **opts)
    parts = [(0, M, split)]
    if split == 1 and p == 0.0 and not user:
        # Wave quantisation (policy_waves.py): the last row bands run K-split in a second launch when the grid's
        # last wave would be a small remainder. Not with dropout: its mask hashes the row index, which a row slice
        # would shift.
        m_main, tail = policy.gemm_tail_split(target, M, N, K, bm, bn, bk, _cus(dev))
        if m_main < M:
            parts = [(0, m_main, 1), (m_main, M, tail)]
    planned = [_part(a, b, c, lo, hi, sp, N, k_loop, bias_stride, common, target) for lo, hi, sp in parts]
    if not user and policy.spill_checked(target, bk, misaligned(a) or misaligned(b)):
        # Operands read without 16-byte vectors: how deep a K block fits in registers depends on the split, the
        # epilogue and the layout, so the compiled kernel is asked (policy.spill_checked has the measurements).
        while bk > 32 and _spilled_bytes(planned[0], a, b, c, bias, dev) > policy_misaligned.MISALIGNED_SPILL_LIMIT:
            bk //= 2
            common = {**common, "BLOCK_K": bk, "EVEN_K": k_loop % bk == 0}
            planned = [_part(a, b, c, lo, hi, sp, N, k_loop, bias_stride, common, target) for lo, hi, sp in parts]
    return _Plan(CopyPlan(a0) if copy_a else None, CopyPlan(b0) if copy_b else None, planned, M, tkey)


def _spilled_bytes(part: _Part, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None,
                   dev: torch.device) -> int:
    """Bytes of local memory a thread of part's main kernel uses (register spills: the GEMM kernels have no local
    arrays), compiled for this device without launching it (Triton's warmup; the launch then finds it compiled).
    0 where Triton or the driver cannot say, so a failed probe never changes the plan."""
    c_arg = c if part.split == 1 else torch.empty((0,), dtype=torch.float32, device=dev)
    try:
        k = part.kern.warmup(a, b, c_arg, bias if bias is not None and part.split == 1 else c_arg, *part.ints, 0, 0,
                             1.0, grid=part.grid, **part.kw)
        k._init_handles()
        return 4 * int(k.n_spills)  # Triton reports the local size in 4-byte registers
    except Exception:  # noqa: BLE001 - a probe: any failure leaves the plan as the policy made it
        return 0


def _gemv_plan(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None, epilogue: str, p: float,
               config: dict[str, Any] | None, target: policy.Target, dev: torch.device,
               tkey: tuple[Any, ...] | None = None) -> _Plan:
    """The launch plan of gemv_kernel for this call: the policy's tiles and K split (policy.gemv_config), or a
    caller's config (gemm_parts.checked_gemv_config). B is read in place whatever its alignment: no copies."""
    M, K = a.shape
    N = b.shape[1]
    b_kmajor = gemv_kmajor(b)
    cfg = dict(policy.gemv_config(target, M, N, K, a.element_size(), b_kmajor, _cus(dev), not misaligned(b)))
    if config:
        cfg.update(checked_gemv_config(config))
    bm, bn, bk, split = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"], cfg.get("SPLIT_K", 1)
    shift = cfg.get("SHIFT")
    if shift is None:  # the policy's choice, where B allows it; a caller's (or tune cache's) K split is kept
        shift, s2 = policy.gemv_shift(target, M, N, K, a.element_size(), b_kmajor, not misaligned(b), bn, bk, split,
                                      _cus(dev))
        s2 = split if config and "SPLIT_K" in config else s2
        if shift > 1 and not gemv_shift_refusal(b, shift, bn, bk, s2, p > 0.0):
            split = cfg["SPLIT_K"] = s2
        else:
            shift = 1
    elif shift > 1 and (why := gemv_shift_refusal(b, shift, bn, bk, split, p > 0.0)):
        raise ValueError(f"gemm: GEMV SHIFT={shift} {why}")
    cfg["SHIFT"] = shift
    kshift = shift > 1 and b_kmajor  # gemv_kshift_kernel: one residue class of columns a program, one partial each
    # fp32 partials per output element in the workspace: K splits (x shifted windows, N-major)
    ways = split if kshift else split * shift
    # the grid's column tiles reach past N: SHIFT - 1 columns (N-major windows), a tile a residue class (K-major)
    extra_n = shift * bn if kshift else shift - 1
    int64 = _needs_int64(a, b, c, bias, bm, bn, bk, ways, extra_n=extra_n)
    (am, div_am), (ak, div_ak) = split_stride(a.stride(0)), split_stride(a.stride(1))
    (sbk, div_bk), (sbn, div_bn) = split_stride(b.stride(0)), split_stride(b.stride(1))
    nk, div_n = split_stride(N)
    bias_stride = bias.stride(0) if bias is not None else 0
    kw = {"EPILOGUE": epilogue_code(epilogue, target, c), "HAS_DROPOUT": p > 0.0, "INT64": int64, "B_KMAJOR": b_kmajor,
          "EVEN_N": N % bn == 0, "EVEN_K": K % bk == 0, "DIV_AM": div_am, "DIV_AK": div_ak, "DIV_BK": div_bk,
          "DIV_BN": div_bn, "DIV_N": div_n, **cfg}
    ints = (M, nk, K, am, ak, sbk, sbn)
    # row chunks of one column tile side by side (gemv_kernel); shifted windows reach SHIFT - 1 columns further
    tiles = shift * cdiv(cdiv(N, shift), bn) if kshift else cdiv(N + shift - 1, bn)
    grid = (tiles * cdiv(M, bm), split)
    kern = gemv_kshift_kernel if kshift else gemv_kernel
    if ways == 1:
        (cm, div_cm), (cn, div_cn) = split_stride(c.stride(0)), split_stride(c.stride(1))
        part = _Part(0, M, 1, grid, (*ints, cm, cn, bias_stride), {**kw, "DIV_CM": div_cm, "DIV_CN": div_cn},
                     kern=kern)
    else:
        n_ws = _ws_cols(N)
        wm, div_wm = split_stride(n_ws)
        part = _Part(0, M, ways, grid, (*ints, wm, 1, 0),
                     {**kw, "EPILOGUE": 0, "HAS_DROPOUT": False, "DIV_CM": div_wm, "DIV_CN": 1},
                     ws_cols=n_ws, kern=kern, **_reduce_launch(c, M, N, n_ws, ways, bias_stride, kw, target))
    return _Plan(None, None, [part], M, tkey)


def _reduce_launch(c: torch.Tensor, M: int, N: int, n_ws: int, split: int, bias_stride: int, epi: dict[str, Any],
                   target: policy.Target) -> dict[str, Any]:
    """_splitk_reduce_kernel's grid, integer arguments and constexprs for a K-split launch into C's rows (epi: the
    EPILOGUE, HAS_DROPOUT and INT64 of the call)."""
    wm, div_wm = split_stride(n_ws)
    (cm, div_cm), (cn, div_cn) = split_stride(c.stride(0)), split_stride(c.stride(1))
    rm, rn = policy.splitk_reduce_tile(target, M)
    return {"rgrid": (cdiv(M, rm), cdiv(N, rn)), "rints": (M, N, wm, cm, cn, bias_stride),
            "rkw": {"SPLIT_K": split, "BLOCK_M": rm, "BLOCK_N": rn, "DIV_WM": div_wm, "DIV_CM": div_cm,
                    "DIV_CN": div_cn, "num_warps": 4, "EPILOGUE": epi["EPILOGUE"], "HAS_DROPOUT": epi["HAS_DROPOUT"],
                    "INT64": epi["INT64"]}}


def _part(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, lo: int, hi: int, split: int, N: int, K: int,
          bias_stride: int, common: dict[str, Any], target: policy.Target) -> _Part:
    """The launch arguments for rows [lo, hi) (common: the constexprs and options that do not depend on the rows)."""
    M = hi - lo
    bm, bn = common["BLOCK_M"], common["BLOCK_N"]
    tiles = cdiv(M, bm) * cdiv(N, bn)
    (am, div_am), (ak, div_ak) = split_stride(a.stride(0)), split_stride(a.stride(1))
    (sbk, div_bk), (sbn, div_bn) = split_stride(b.stride(0)), split_stride(b.stride(1))
    (cm, div_cm), (cn, div_cn) = split_stride(c.stride(0)), split_stride(c.stride(1))
    (mk, div_m), (nk, div_n), (kk, div_k) = split_stride(M), split_stride(N), split_stride(K)
    rows = dict(EVEN_M=M % bm == 0, SPLIT_K=split, DIV_AM=div_am, DIV_AK=div_ak, DIV_BK=div_bk, DIV_BN=div_bn, DIV_M=div_m,
                DIV_N=div_n, DIV_K=div_k)
    if split == 1:
        return _Part(lo, hi, 1, (tiles, 1), (mk, nk, kk, am, ak, sbk, sbn, cm, cn, bias_stride),
                     {"DIV_CM": div_cm, "DIV_CN": div_cn, **rows, **common})
    n_ws = _ws_cols(N)
    wm, div_wm = split_stride(n_ws)
    return _Part(lo, hi, split, (tiles, split), (mk, nk, kk, am, ak, sbk, sbn, wm, 1, 0),
                 {"DIV_CM": div_wm, "DIV_CN": 1, **rows, **{**common, "EPILOGUE": 0, "HAS_DROPOUT": False}},
                 ws_cols=n_ws, **_reduce_launch(c, M, N, n_ws, split, bias_stride, common, target))


# The smoke cases and the compile-only audit's specs live in gemm_cases.py (imported last: they call gemm()).
from rocm_triton_doctor.kernels.gemm_cases import aot_specs, cases, make_case  # noqa: E402,F401 - the registry's hooks

KERNEL = KernelSpec("gemm", "compute", cases, aot_specs,
                    perf_targets=("gemm-plain", "gemm-bias-relu", "gemm-dropout", "gemm-compile", "seed-graph"))
