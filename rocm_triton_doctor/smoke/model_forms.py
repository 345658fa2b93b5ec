"""The model `smoke --model` trains, its presets, and the forms it is trained in (smoke/model.py runs them).

A Llama-style decoder (the workshop seed's TinyTransformer shape): token embedding, per layer RMSNorm → grouped-query
causal attention (no positional encoding: every form computes the same function, which is all a comparison needs) → residual,
RMSNorm → SwiGLU MLP → residual; final RMSNorm; LM head tied to the embedding; mean cross-entropy. Every form builds
the same module with the same parameter names; only the four operations in `Ops` differ, plus how the module is run
(eager, torch.compile, CUDA graphs).

"ours": each single operation is looked up in its kernel module through the hook `autograd_op` (an op with a
backward, usable under torch.compile). Contracts, the same as the torch function named:
    rmsnorm.autograd_op(x, weight, eps)             -> torch.nn.functional.rms_norm(x, (H,), weight, eps)
    swiglu.autograd_op(gate, up)                    -> silu(gate) * up
    attention.autograd_op(q, k, v, causal=True)     -> F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                       enable_gqa=True), q (B, Hq, S, D), k/v (B, Hkv, S, D)
    linear_cross_entropy.autograd_op(h, w, targets) -> F.cross_entropy(F.linear(h, w), targets) (mean, ignore -100)
The op is handed its activations in the autocast dtype (when autocast is on) and as the model makes them: q/k/v are
the (B, S, H, D).transpose(1, 2) views of the projections, gate/up the halves of one projection (our kernels take
any strides, so no .contiguous() copies); weights (the norms') stay fp32, which our kernels read. A module without
the hook (forward-only kernels cut autograd, the seed's mistake) is NOT used: that op falls back to torch and
`ours_ops()` says so.

On top of those, "ours" runs two composite ops of smoke/model_ops.py that recompute in backward what the
composition would save (the normalised rows; the SwiGLU output): `norm_linear` (attention norm + the q and kv
projections) and `mlp` (MLP norm + gate/up GEMMs + SwiGLU + down GEMM). They run the GEMMs in the autocast dtype,
as Linear does (the weights are cast once per step, as autocast does). Other forms leave `Ops.norm_linear`/`Ops.mlp`
None and run the op-by-op composition.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class ModelConfig:
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    batch: int
    seq: int
    ffn_mult: int = 4  # SwiGLU intermediate size = ffn_mult x hidden
    eps: float = 1e-6
    lr: float = 1e-3
    dtype: str = "float32"  # the preset's default: float32, or bfloat16/float16 = autocast with fp32 parameters

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


PRESETS: dict[str, ModelConfig] = {
    # The workshop seed's config (issue #17): 31.98 M parameters.
    "tiny-llama": ModelConfig(vocab=1000, hidden=512, layers=8, heads=8, kv_heads=4, batch=8, seq=128),
    # Where the logits (8192 x 32000) and saved activations dominate memory (issue #17's medium size).
    "medium": ModelConfig(vocab=32000, hidden=2048, layers=8, heads=16, kv_heads=8, batch=8, seq=1024, dtype="bfloat16"),
    # CPU / Triton-interpreter sized, for CI.
    "toy": ModelConfig(vocab=64, hidden=32, layers=2, heads=4, kv_heads=2, batch=2, seq=16),
}


@dataclass(frozen=True)
class Ops:
    rms_norm: Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]
    attention: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]  # causal, GQA
    swiglu: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    loss: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]  # (h (N, H), tied weight (V, H), y (N,))
    # Optional composites (None: Block composes rms_norm, Linear and swiglu). norm_linear(x, norm_w, eps, [w, ...])
    # -> [F.linear(rms_norm(x), w), ...]; mlp(x, norm_w, eps, w_gate_up, w_down) -> w_down(swiglu(rms_norm(x) ·
    # w_gate_upᵀ halves)).
    norm_linear: Callable[[torch.Tensor, torch.Tensor, float, list[torch.Tensor]], list[torch.Tensor]] | None = None
    mlp: Callable[[torch.Tensor, torch.Tensor, float, torch.Tensor, torch.Tensor], torch.Tensor] | None = None


def _naive_rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    xf = x.float()  # the HF LlamaRMSNorm: five kernels, each saving its input for backward
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def _repeat_kv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rep = q.shape[1] // k.shape[1]
    return k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)


def _naive_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    k, v = _repeat_kv(q, k, v)
    S = q.shape[2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])  # the full S x S matrix, saved for backward
    mask = torch.ones(S, S, dtype=torch.bool, device=q.device).triu(1)
    p = torch.softmax(scores.masked_fill(mask, float("-inf")).float(), dim=-1).to(q.dtype)
    return p @ v


def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    try:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    except TypeError:  # torch < 2.5 has no enable_gqa
        k, v = _repeat_kv(q, k, v)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def _torch_swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return F.silu(gate) * up


def _torch_loss(h: torch.Tensor, w: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(F.linear(h, w).float(), y)


def _autocast_dtype(t: torch.Tensor) -> torch.dtype:
    """Custom ops are not autocast-aware: cast their floating inputs to the autocast dtype ourselves."""
    dev = t.device.type
    if torch.is_autocast_enabled(dev) if hasattr(torch, "get_autocast_dtype") else torch.is_autocast_enabled():
        return torch.get_autocast_dtype(dev) if hasattr(torch, "get_autocast_dtype") else torch.get_autocast_gpu_dtype()
    return t.dtype


def _prep_args(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """For Liger's ops: floating inputs in the autocast dtype and contiguous (the model hands over views: gate/up are
    halves of one projection, q/k/v transposed heads; a no-op when already so)."""
    def wrapped(*args: Any) -> torch.Tensor:
        dt = _autocast_dtype(args[0])
        return fn(*(a.to(dt).contiguous() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                    for a in args))
    return wrapped


def _cast_args(fn: Callable[..., torch.Tensor], first: int | None = None) -> Callable[..., torch.Tensor]:
    """For our ops: the floating inputs (only the first `first` of them when given: activations, not the norm weight)
    in the autocast dtype, in the layout the model made them: our kernels take strides (rmsnorm, swiglu, attention:
    see their docstrings; linear_cross_entropy makes its own contiguous copy when it needs one)."""
    def wrapped(*args: Any) -> torch.Tensor:
        dt = _autocast_dtype(args[0])
        return fn(*(a.to(dt) if isinstance(a, torch.Tensor) and a.is_floating_point() and (first is None or i < first)
                    else a for i, a in enumerate(args)))
    return wrapped


NAIVE = Ops(_naive_rms_norm, _naive_attention, _torch_swiglu, _torch_loss)
SDPA = Ops(lambda x, w, eps: F.rms_norm(x, (x.shape[-1],), w, eps), _sdpa, _torch_swiglu, _torch_loss)

# Our op names, the kernel module holding each, and the torch fallback used when the module has no `autograd_op`.
OUR_OPS = {"rms_norm": ("rmsnorm", "torch.nn.functional.rms_norm"),
           "attention": ("attention", "torch.nn.functional.scaled_dot_product_attention"),
           "swiglu": ("swiglu", "torch silu(gate) * up"),
           "loss": ("linear_cross_entropy", "torch F.linear + F.cross_entropy")}
# The composites of smoke/model_ops.py: the kernel functions each needs, and what the block does without it.
OUR_COMPOSITES = {"norm_linear": ({"rmsnorm": ("_forward", "rmsnorm_backward")}, "rms_norm op + torch Linear"),
                  "mlp": ({"rmsnorm": ("_forward", "rmsnorm_backward"), "swiglu": ("swiglu", "swiglu_backward")},
                          "torch Linear + swiglu op + torch Linear")}
# False: the composites get the weights cast to the autocast dtype once per step (autocast's semantics; the cast copy
# is saved for backward, as Linear saves it). True: they get the fp32 masters and cast inside, in forward and again in
# backward: 2 bytes per weight element less saved (medium preset: ~0.9 GiB), one more cast pass per weight.
RECAST_WEIGHTS = False


def _composite_entry(op: str) -> dict[str, Any]:
    needs, fallback = OUR_COMPOSITES[op]
    try:
        importlib.import_module("rocm_triton_doctor.smoke.model_ops")
        missing = [f"{mod}.{fn}" for mod, fns in needs.items() for fn in fns
                   if not callable(getattr(importlib.import_module(f"rocm_triton_doctor.kernels.{mod}"), fn, None))]
    except Exception as exc:  # noqa: BLE001 - a module that does not import is reported, and torch is used
        return {"impl": "torch", "module": "smoke.model_ops", "torch": fallback, "reason": f"import failed: {exc}"}
    if missing:
        return {"impl": "torch", "module": "smoke.model_ops", "torch": fallback, "reason": f"missing {', '.join(missing)}"}
    return {"impl": "ours", "module": "smoke.model_ops", "kernels": sorted(needs)}


def ours_ops() -> dict[str, dict[str, Any]]:
    """Per operation: {"impl": "ours" | "torch", "module": kernel module, "fallback"/"reason"}; the block's norms,
    projections and MLP run in the composites `norm_linear` and `mlp` ({"impl", "module": "smoke.model_ops",
    "kernels"}) when those are ours, and then rms_norm is the final norm only and swiglu runs inside mlp ("inside").
    Importing the kernel modules imports triton."""
    out: dict[str, dict[str, Any]] = {}
    for op, (mod, fallback) in OUR_OPS.items():
        try:
            m = importlib.import_module(f"rocm_triton_doctor.kernels.{mod}")
        except Exception as exc:  # noqa: BLE001 - a module that does not import is reported, and torch is used
            out[op] = {"impl": "torch", "module": mod, "torch": fallback, "reason": f"import failed: {exc}"}
            continue
        if callable(getattr(m, "autograd_op", None)):
            out[op] = {"impl": "ours", "module": mod}
        else:
            out[op] = {"impl": "torch", "module": mod, "torch": fallback,
                       "reason": "no autograd_op (forward-only kernel: using it would cut autograd)"}
    for op in OUR_COMPOSITES:
        out[op] = _composite_entry(op)
    if out["mlp"]["impl"] == "ours":
        out["swiglu"] = {"impl": "ours", "module": "swiglu", "inside": "mlp"}
    return out


def ours() -> Ops:
    table = ours_ops()

    def pick(op: str, fallback: Callable[..., torch.Tensor], first: int | None = None) -> Callable[..., torch.Tensor]:
        if table[op]["impl"] != "ours":
            return fallback
        return _cast_args(importlib.import_module(f"rocm_triton_doctor.kernels.{table[op]['module']}").autograd_op,
                          first)

    attn = pick("attention", _sdpa)
    norm_linear = mlp = None
    if "ours" in (table["norm_linear"]["impl"], table["mlp"]["impl"]):
        from rocm_triton_doctor.smoke import model_ops

        def weights(ws: list[torch.Tensor], dt: torch.dtype) -> list[torch.Tensor]:
            return ws if RECAST_WEIGHTS else [w.to(dt) for w in ws]

        def _norm_linear(x: torch.Tensor, norm_w: torch.Tensor, eps: float, ws: list[torch.Tensor]) -> list[torch.Tensor]:
            dt = _autocast_dtype(x)
            return model_ops.norm_linear(x.to(dt), norm_w, eps, *weights(ws, dt))

        def _mlp(x: torch.Tensor, norm_w: torch.Tensor, eps: float, w_gate_up: torch.Tensor, w_down: torch.Tensor
                 ) -> torch.Tensor:
            dt = _autocast_dtype(x)
            wgu, wd = weights([w_gate_up, w_down], dt)
            return model_ops.mlp(x.to(dt), wgu, wd, norm_w, eps)

        norm_linear = _norm_linear if table["norm_linear"]["impl"] == "ours" else None
        mlp = _mlp if table["mlp"]["impl"] == "ours" else None
    return Ops(pick("rms_norm", SDPA.rms_norm, first=1),
               attn if attn is _sdpa else (lambda q, k, v: attn(q, k, v, True)),
               pick("swiglu", _torch_swiglu), pick("loss", _torch_loss), norm_linear, mlp)


def liger() -> Ops:
    """Liger-Kernel's RMSNorm, SiLU-mul and fused linear cross-entropy (attention stays SDPA: Liger has none).
    Raises ImportError where liger_kernel is not installed."""
    from liger_kernel.transformers.functional import (liger_fused_linear_cross_entropy, liger_rms_norm,
                                                      liger_swiglu)

    return Ops(_prep_args(liger_rms_norm), _sdpa, _prep_args(liger_swiglu),
               _prep_args(lambda h, w, y: liger_fused_linear_cross_entropy(h, w, y)))


class Block(torch.nn.Module):
    def __init__(self, cfg: ModelConfig, ops: Ops) -> None:
        super().__init__()
        H, d = cfg.hidden, cfg.hidden // cfg.heads
        self.cfg, self.ops, self.d = cfg, ops, d
        self.attn_norm = torch.nn.Parameter(torch.ones(H))
        self.wq = torch.nn.Linear(H, cfg.heads * d, bias=False)
        self.wkv = torch.nn.Linear(H, 2 * cfg.kv_heads * d, bias=False)
        self.wo = torch.nn.Linear(cfg.heads * d, H, bias=False)
        self.mlp_norm = torch.nn.Parameter(torch.ones(H))
        self.w_gate_up = torch.nn.Linear(H, 2 * cfg.ffn_mult * H, bias=False)
        self.w_down = torch.nn.Linear(cfg.ffn_mult * H, H, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, S, H = x.shape
        c = self.cfg
        if self.ops.norm_linear is not None:
            qp, kvp = self.ops.norm_linear(x, self.attn_norm, c.eps, [self.wq.weight, self.wkv.weight])
        else:
            a = self.ops.rms_norm(x, self.attn_norm, c.eps)
            qp, kvp = self.wq(a), self.wkv(a)
        q = qp.view(B, S, c.heads, self.d).transpose(1, 2)
        k, v = kvp.view(B, S, 2, c.kv_heads, self.d).permute(2, 0, 3, 1, 4).unbind(0)
        o = self.ops.attention(q, k, v).transpose(1, 2).reshape(B, S, c.heads * self.d)
        x = x + self.wo(o)
        if self.ops.mlp is not None:
            return x + self.ops.mlp(x, self.mlp_norm, c.eps, self.w_gate_up.weight, self.w_down.weight)
        gate, up = self.w_gate_up(self.ops.rms_norm(x, self.mlp_norm, c.eps)).chunk(2, dim=-1)
        return x + self.w_down(self.ops.swiglu(gate, up))


class TinyLlama(torch.nn.Module):
    def __init__(self, cfg: ModelConfig, ops: Ops) -> None:
        super().__init__()
        if cfg.hidden % cfg.heads or cfg.heads % cfg.kv_heads:
            raise ValueError(f"hidden {cfg.hidden} must divide into {cfg.heads} heads, and heads into {cfg.kv_heads}")
        self.cfg, self.ops = cfg, ops
        self.embed = torch.nn.Embedding(cfg.vocab, cfg.hidden)
        self.blocks = torch.nn.ModuleList(Block(cfg, ops) for _ in range(cfg.layers))
        self.norm = torch.nn.Parameter(torch.ones(cfg.hidden))
        for p in self.parameters():  # Llama-style init: N(0, 0.02) for matrices, norms at one
            if p.dim() == 2:
                torch.nn.init.normal_(p, std=0.02)

    def forward(self, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for blk in self.blocks:
            x = blk(x)
        h = self.ops.rms_norm(x, self.norm, self.cfg.eps)
        return self.ops.loss(h.reshape(-1, h.shape[-1]), self.embed.weight, targets.reshape(-1))


def make_batches(cfg: ModelConfig, steps: int, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Learnable token streams, one batch per step: each sequence starts at a random token and steps by a random
    stride mod vocab (so the loss falls and the forms' curves can be compared). CPU tensors."""
    g = torch.Generator().manual_seed(seed + 1)
    out = []
    pos = torch.arange(cfg.seq + 1)
    for _ in range(steps):
        start = torch.randint(0, cfg.vocab, (cfg.batch, 1), generator=g)
        stride = torch.randint(1, max(2, min(cfg.vocab, 17)), (cfg.batch, 1), generator=g)
        seq = (start + stride * pos) % cfg.vocab
        out.append((seq[:, :-1].contiguous(), seq[:, 1:].contiguous()))
    return out
