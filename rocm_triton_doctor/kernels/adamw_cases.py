"""adamw's smoke cases (a Llama-style layer's parameter list, odd sizes; make_case for the random preset) against
torch.optim.AdamW, and the specs the compile-only audit compiles adamw_kernel with. adamw.py registers both."""

from __future__ import annotations

import torch

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.adamw import CHUNK_BLOCKS, DTYPES, _torch_update, adamw_, adamw_kernel
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, randn


def _setup(sizes: tuple[int, ...], dtype: torch.dtype):  # type: ignore[no-untyped-def]
    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        x: Inputs = {"sizes": sizes}
        for k in ("p", "g", "m"):
            x[k] = [randn((n,), dtype, dev, gen) for n in sizes]
        x["v"] = [randn((n,), dtype, dev, gen).abs() for n in sizes]
        x["m_out"] = [torch.empty_like(t) for t in x["m"]]
        x["v_out"] = [torch.empty_like(t) for t in x["v"]]
        # torch's optimizer over its own copies, its state set to the same m, v (the eager baseline: what a model
        # runs today; it updates those copies in place at every call).
        ps = [torch.nn.Parameter(t.clone()) for t in x["p"]]
        for p, g in zip(ps, x["g"]):
            p.grad = g.clone()
        opt = torch.optim.AdamW(ps, lr=1e-3, weight_decay=1e-2)
        for p, m, v in zip(ps, x["m"], x["v"]):
            opt.state[p] = {"step": torch.tensor(4.0), "exp_avg": m.clone(), "exp_avg_sq": v.clone()}
        x["torch_opt"], x["torch_params"] = opt, ps
        return x

    return setup


def _runner(block: int | None):  # type: ignore[no-untyped-def]
    def run(x: Inputs, out: torch.Tensor | None) -> torch.Tensor:
        """The updated parameters, concatenated, written out of place (the inputs stay as they were)."""
        flat = out if out is not None else torch.empty(sum(x["sizes"]), dtype=x["p"][0].dtype, device=x["p"][0].device)
        p_out = list(flat.split(list(x["sizes"])))
        adamw_(x["p"], x["g"], x["m"], x["v"], step=5, lr=1e-3, outs=(p_out, x["m_out"], x["v_out"]), block=block)
        return flat

    return run


def _reference(x: Inputs) -> torch.Tensor:
    res = []
    for p, g, m, v in zip(x["p"], x["g"], x["m"], x["v"]):
        p, g, m, v = (t.double() for t in (p, g, m, v))
        _torch_update(p, g, m, v, 5, 1e-3, 0.9, 0.999, 1e-8, 1e-2)
        res.append(p)
    return torch.cat(res)


def _eager(x: Inputs) -> torch.Tensor:
    """torch.optim.AdamW's step on its copies (in place: its result is those parameters, of which the first is
    returned; nothing compares it, and concatenating would add a copy to the baseline's time)."""
    x["torch_opt"].step()
    return x["torch_params"][0].detach()


def make_case(sizes: tuple[int, ...], dtype: torch.dtype, block: int | None = None) -> Case:
    elem = torch.empty((), dtype=dtype).element_size()
    n = sum(sizes)
    what = (f"{len(sizes)} tensors, {n} elements" if len(sizes) > 1 else f"n={n}") + (f" BLOCK={block}" if block else "")
    return Case("adamw", f"{str(dtype).replace('torch.', '')} {what}", dtype, _setup(sizes, dtype), run=_runner(block),
                reference=_reference, eager=_eager, flops=12.0 * n, bytes=7.0 * elem * n, out_shape=lambda x: (n,),
                graphable=False)


# A Llama-style layer's parameter tensors (hidden 4096, SwiGLU 11008, GQA 8 KV heads) and its two norm weights.
_LAYER = (4096 * 4096, 4096 * 1024, 4096 * 1024, 4096 * 4096, 11008 * 4096, 11008 * 4096, 4096 * 11008, 4096, 4096)


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        # BLOCK 128: chunks of 1024, so the 3001-element tensor has three programs, full blocks and a masked one.
        return [make_case((3001, 7, 160), dt, block=128) for dt in DTYPES]
    if preset in ("seed", "sweep"):
        return []
    quick = [make_case(_LAYER, torch.float32)]
    if preset == "quick":
        return quick
    return quick + [make_case(_LAYER, torch.bfloat16), make_case((1000003,) * 8 + (17,) * 64, torch.float32)]


def aot_specs(target: policy.Target) -> list[AotSpec]:
    cfg = policy.elementwise_config(target, 1 << 24)
    sig = {"table": "*i64", "gtable": "*i64", "chunk_tensor": "*i32", "chunk_start": "*i64", "numel": "*i64", "p_like": "*fp32",
           "s_like": "*fp32", "decay": "fp32", "beta1": "fp32", "beta2": "fp32", "eps": "fp32", "step_size": "fp32",
           "bc2_sqrt": "fp32"}
    const = {"COLS": 3, "BLOCK": cfg["BLOCK"], "CHUNK_BLOCKS": CHUNK_BLOCKS, "ALIGNED": True}
    sig16 = {**sig, "p_like": "*bf16", "s_like": "*bf16"}
    return [AotSpec("adamw fp32 in place", adamw_kernel, sig, const, cfg),
            AotSpec("adamw bf16 in place", adamw_kernel, sig16, const, cfg)]
