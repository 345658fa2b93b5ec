"""The GEMM launches an H100/H200's policy plans (sm_90, 132 SMs: its tiles, K splits, GEMV tiles and shifts,
aligned copies, wave-quantisation tails), run in Triton's interpreter on random shapes, layouts, epilogues and dropout,
each output against an fp64 reference with the tolerance table. The CPU tests run the interpreter's own policy (few,
large tiles), so this is where the GPU's tilings meet every edge of a shape without a GPU. bf16 tile products are
upcast to fp32 here, as the interpreter needs (gemm.py: its create_dot multiplies bf16's raw bits; the GEMV kernel
has no tl.dot), and GELU takes its exact tanh (the hardware tanh is inline PTX, which the interpreter cannot run).
Session 29 wrote it to check its own policy changes (fp32 K splits up to a wave, narrow GEMV tiles, planned copies)
beside the rest.

    python benchmarks/gpu_policy_interpreter_run.py SECONDS SEED [--rows | --attention | --backward]

--rows: RMSNorm, LayerNorm and softmax instead, through the sm_90 row policy (packed rows, looped rows, 16-byte
windows and their looped chunks, rows split over programs), each signature twice (its call plan replayed).
--attention: attention's forward through the sm_90 policy (tiles by head dim and grid, the column split of D = 80,
160 …, the split-key kernel for short queries, GQA, S_q != S_k, the model layout), twice, against attention.reference
(SDPA's math in fp64; absolute error within the bounds of benchmarks/random_shapes_run.py).
--backward: gradients through the sm_90 plans: attention (its backward kernels' tiles), RMSNorm, LayerNorm, softmax and
the GEMM's epilogues (gemm_autograd), against torch autograd in fp64 (the same bounds, scaled by the largest reference gradient).
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable

os.environ["TRITON_INTERPRET"] = "1"
os.environ["RTD_TUNE_CACHE"] = "off"  # no per-device cache for a pretend GPU
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from rocm_triton_doctor.kernels import (attention, attention_autograd, attention_backward, base, call_plans, gemm,  # noqa: E402
                                        gemm_autograd, layernorm, policy, policy_gemv, rmsnorm, row_grads, softmax)
from tests.kernels.helpers import assert_matches  # noqa: E402

SM90 = policy.target_from_name("sm_90")
DT = [torch.float32, torch.float32, torch.float16, torch.bfloat16]


def pretend_sm90() -> None:
    policy.target_for_device = lambda device: SM90  # type: ignore[assignment]
    base.target_for_device = lambda device: SM90  # type: ignore[assignment]  # base.target_of (the row kernels)
    call_plans.GPU_ONLY = False  # plan CPU tensors too, so a signature's second call replays its plan
    attention.upcast_dots = lambda target, dtype: True  # type: ignore[assignment]
    attention.device_cus = lambda dev: 132  # type: ignore[assignment]
    attention_backward.upcast_dots = lambda target, dtype: True  # type: ignore[assignment]
    attention_backward.device_cus = lambda dev: 132  # type: ignore[assignment]  # its GQA split of dK/dV
    # the row backwards' programs (narrow rows ROWS at a time over an H200's SMs)
    row_grads.programs = lambda x, M, cfg: row_grads.gpu_programs(  # type: ignore
        M, cfg, x.element_size(), 132, row_grads.per_unit(cfg, "cuda"))
    row_grads.units_of = lambda x: 132  # type: ignore[assignment]  # the parameter sums' and column tiles' grids
    attention.clear_plans()
    gemm._cus = lambda dev: 132  # type: ignore[assignment]
    gemm.upcast_dots = lambda target, dtype: True  # type: ignore[assignment]
    policy.fast_tanh = lambda target, elem_size: False  # type: ignore[assignment]  # no inline PTX in the interpreter
    policy.fast_tanh = lambda target, elem_size: False  # type: ignore[assignment]  # inline asm: not interpretable
    policy.gemm_config.cache_clear()  # type: ignore[attr-defined]
    policy_gemv.gemv_config.cache_clear()
    gemm.clear_plans()


def operand(r: random.Random, rows: int, cols: int, dtype: torch.dtype, g: torch.Generator) -> torch.Tensor:
    """A (rows, cols) operand: contiguous, transposed, offset by an element, or with padded rows."""
    kind = r.choice(("c", "c", "t", "off", "pad"))
    if kind == "t":
        return torch.randn(cols, rows, generator=g).to(dtype).t()
    if kind == "off":
        return torch.randn(rows * cols + 1, generator=g).to(dtype)[1:].view(rows, cols)
    if kind == "pad":
        return torch.randn(rows, cols + r.randint(1, 5), generator=g).to(dtype)[:, :cols]
    return torch.randn(rows, cols, generator=g).to(dtype)


Case = tuple[str, Callable[[], None]]  # (what was drawn, its check: raises on a wrong result)


def gemm_case(r: random.Random, g: torch.Generator) -> Case:
    """A GEMM through the sm_90 plans, twice (the signature's plan replayed), against fp64."""
    dtype = r.choice(DT)
    M = r.choice((1, 2, 3, 4, r.randint(5, 40), r.randint(41, 300)))
    N, K = r.randint(1, 300), r.choice((r.randint(1, 64), r.randint(65, 700)))
    epi = r.choice(("none", "none", "bias", "bias_relu", "bias_gelu"))
    p = r.choice((0.0, 0.0, 0.0, 0.25))
    if r.random() < 0.15:
        # fp32 grids of 67-132 tensor-core tiles (the K split up to one wave; 128x64 tiles to 6 programs an SM)
        dtype, M, N, K = torch.float32, r.randint(600, 1400), 4 * r.randint(75, 150), 4 * r.randint(16, 128)
    a, b = operand(r, M, K, dtype, g), operand(r, K, N, dtype, g) / max(1.0, K ** 0.5)
    bias = torch.randn(N, generator=g).to(r.choice((dtype, torch.float32))) if epi != "none" else None

    def check() -> None:
        y = gemm.gemm(a, b, bias, epi, p, seed=7)
        y2 = gemm.gemm(a, b, bias, epi, p, seed=7)  # the signature's plan, replayed
        ref = gemm.reference(a, b, bias, epi)
        if p:
            # the kept entries are ref / (1 - p), the same mask both calls (one seed)
            kept = y != 0
            ref = torch.where(kept, ref / (1 - p), torch.zeros_like(ref))
            assert torch.equal(y, y2), "the same seed drew another mask"
        assert_matches(y, ref, dtype)
        assert_matches(y2, ref, dtype)
    return f"{dtype} {M}x{K}x{N} {epi} p={p} a{tuple(a.stride())} b{tuple(b.stride())}", check


def row_case(r: random.Random, g: torch.Generator) -> Case:
    """A row-kernel call through the sm_90 policy, twice (its call plan replayed), against fp64."""
    dtype = r.choice((torch.float32, torch.bfloat16, torch.float16))
    N = r.choice((r.randint(1, 130), r.randint(131, 5000), r.randint(5001, 20000)))
    M = r.randint(1, 64 if N <= 5000 else 6)
    op = r.choice(("rmsnorm", "layernorm", "softmax"))
    extra = r.choice((0, 0, 3))
    x = (torch.randn(M, N + extra, generator=g) * 2).to(dtype)[:, :N]  # rows padded apart, or contiguous
    w, b = torch.randn(N, generator=g).to(dtype), torch.randn(N, generator=g).to(dtype)

    def check() -> None:
        for _ in range(2):
            if op == "rmsnorm":
                y, ref = rmsnorm.rmsnorm(x, w), F.rms_norm(x.double(), (N,), w.double(), 1e-6)
            elif op == "layernorm":
                y, ref = layernorm.layernorm(x, w, b), F.layer_norm(x.double(), (N,), w.double(), b.double(), 1e-5)
            else:
                y, ref = softmax.softmax(x), torch.softmax(x.double(), -1)
            assert_matches(y, ref, dtype)
    return f"{op} {dtype} {M}x{N} row stride {x.stride(0)}", check


ATT_TOL = {torch.float32: 8e-4, torch.bfloat16: 0.12, torch.float16: 0.02}  # random_shapes_run.py's bounds


def attention_case(r: random.Random, g: torch.Generator) -> Case:
    """An attention call through the sm_90 policy, twice, against SDPA in fp64."""
    dt = r.choice(list(ATT_TOL))
    B, hkv = r.randint(1, 2), r.randint(1, 3)
    hq = hkv * r.randint(1, 3)
    sq = r.choice((1, r.randint(2, 16), r.randint(17, 200)))
    sk = r.choice((sq, r.randint(1, 300)))
    d = r.choice((16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256))
    causal = r.random() < 0.5
    q = torch.randn(B, hq, sq, d, generator=g).to(dt)
    k, v = (torch.randn(B, hkv, sk, d, generator=g).to(dt) for _ in range(2))
    if r.random() < 0.4:  # the model layout: (B, S, H, D) transposed to (B, H, S, D)
        q = q.transpose(1, 2).contiguous().transpose(1, 2)

    def check() -> None:
        ref = attention.reference(q, k, v, causal).double()  # SDPA (math) in fp64, its top-left causal mask
        for _ in range(2):
            y = attention.attention(q, k, v, causal)
            err = float((y.double() - ref).abs().max())
            assert y.shape == q.shape and err <= ATT_TOL[dt], f"max error {err:.3g}"
    return f"{dt} B{B} H{hq}/{hkv} S{sq}x{sk} D{d} causal={causal} q{tuple(q.stride())}", check


def backward_case(r: random.Random, g: torch.Generator) -> Case:
    """A gradient through the sm_90 plans against fp64 autograd."""
    dt = r.choice(list(ATT_TOL))
    op = r.choice(("attention", "attention", "rmsnorm", "layernorm", "softmax", "gemm"))
    if op == "gemm":
        # gemm_autograd's forward (bias_gelu keeps pre: the GELU kernels, flat or row tiles) and its backward's
        # products (dB's transposed activation, copied or not) under the sm_90 plans
        M, K, N = r.randint(1, 300), r.randint(1, 300), r.randint(1, 300)
        epi = r.choice(("bias", "bias_relu", "bias_gelu", "bias_gelu"))
        shapes = ((M, K), (K, N), (N,))
        desc = f"gemm autograd {dt} {M}x{K}x{N} {epi}"

        def ours(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
            return gemm_autograd.gemm_autograd(a, b, c, epi)

        def ref(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
            return gemm.eager(a, b, c, epi, 0.0)
    elif op == "attention":
        B, hkv = r.randint(1, 2), r.randint(1, 2)
        hq = hkv * r.randint(1, 4)  # GQA groups of up to 4: sm_90 splits them over programs on small grids
        sq, sk = r.randint(1, 150), r.choice((None, r.randint(1, 150)))
        sk = sq if sk is None else sk
        d = r.choice((16, 32, 64, 80, 96, 128, 160, 256))
        causal = r.random() < 0.5
        shapes = ((B, hq, sq, d), (B, hkv, sk, d), (B, hkv, sk, d))
        desc = f"attention {dt} B{B} H{hq}/{hkv} S{sq}x{sk} D{d} causal={causal}"

        def ours(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            return attention_autograd.autograd_op(q, k, v, causal)

        def ref(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            return attention.reference(q, k, v, causal)
    else:
        # narrow rows by the thousand too (sm_90 takes them ROWS at a time over many programs, session 30)
        M = r.choice((r.randint(1, 40), r.randint(41, 3000)))
        # and rows past sm_90's one block (session 31: the norms' row sums, then column tiles)
        N = r.choice((r.randint(1, 300), r.randint(301, 9000), r.randint(9001, 40000))) if M <= 40 else r.randint(1, 256)
        shapes = ((M, N), (N,), (N,))
        desc = f"{op} {dt} {M}x{N}"

        def ours(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            if op == "rmsnorm":
                return rmsnorm.rmsnorm_autograd(x, w) * b
            if op == "layernorm":
                return layernorm.layernorm_autograd(x, w, b)
            return softmax.softmax_autograd(x) * w * b

        def ref(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            if op == "rmsnorm":
                return F.rms_norm(x, (N,), w, 1e-6) * b
            if op == "layernorm":
                return F.layer_norm(x, (N,), w, b, 1e-5)
            return torch.softmax(x, -1) * w * b
    leaves = [torch.randn(*s, generator=g).to(dt).requires_grad_() for s in shapes]

    def check() -> None:
        doubles = [t.detach().double().requires_grad_() for t in leaves]
        y = ours(*leaves)
        dy = torch.randn(*y.shape, generator=g).to(dt)
        y.backward(dy)
        yr = ref(*doubles)
        yr.backward(dy.double())
        for name, t, tr in zip("abc", leaves, doubles):
            assert t.grad is not None and tr.grad is not None, f"no gradient for input {name}"
            scale = max(1.0, float(tr.grad.abs().max()))
            err = float((t.grad.double() - tr.grad).abs().max()) / scale
            assert err <= ATT_TOL[dt] * 2, f"gradient {name} off by {err:.3g} (relative to its largest)"
    return desc, check


# --flag: (case drawer, what one case is called in the report)
FAMILIES: dict[str, tuple[Callable[[random.Random, torch.Generator], Case], str]] = {
    "": (gemm_case, "GEMMs"), "--rows": (row_case, "row-kernel signatures"),
    "--attention": (attention_case, "attention signatures"), "--backward": (backward_case, "gradient signatures")}


def main() -> int:
    seconds, seed = float(sys.argv[1]), int(sys.argv[2])
    draw, what = FAMILIES[next((f for f in FAMILIES if f and f in sys.argv[3:]), "")]
    r = random.Random(seed)
    g = torch.Generator().manual_seed(seed)
    pretend_sm90()
    t0, n, bad = time.time(), 0, 0
    while time.time() - t0 < seconds:
        desc = "(drawing the case)"
        try:
            desc, check = draw(r, g)
            check()
        except Exception as exc:  # noqa: BLE001 - every failure is reported with its case
            bad += 1
            print(f"FAIL {desc}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}", flush=True)
        n += 1
        if n % 25 == 0:
            print(f"{n} {what}, {bad} failed, {time.time() - t0:.0f} s", flush=True)
    print(f"seed {seed}: {n} {what} through the sm_90 policy in the interpreter, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
