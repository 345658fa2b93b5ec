"""linear_cross_entropy's smoke cases (one output holding the loss, ∂h and ∂W against the fp64 reference, with
torch eager's own error as slack), the presets' shapes, and the compile-only audit's spec for the cross-entropy row
kernel. linear_cross_entropy.py registers them."""

from __future__ import annotations

import torch

from rocm_triton_doctor.kernels import policy
from rocm_triton_doctor.kernels.base import AotSpec, Case, Inputs, dtype_name, randn
from rocm_triton_doctor.kernels.linear_cross_entropy import ce_rows_kernel, eager, forward_and_grads, reference
from rocm_triton_doctor.kernels.policy_lce import ce_config, chunk_rows


def _flat(loss: torch.Tensor, gh: torch.Tensor | None, gw: torch.Tensor | None,
          out: torch.Tensor | None = None) -> torch.Tensor:
    """[loss, ∂h.flat, ∂W.flat] in out's dtype (fp64 when out is None): one output for the smoke runner's check."""
    assert gh is not None and gw is not None
    if out is None:
        out = torch.empty(1 + gh.numel() + gw.numel(), dtype=torch.float64, device=gh.device)
    out[:1].copy_(loss.reshape(1))
    out[1:1 + gh.numel()].copy_(gh.flatten())
    out[1 + gh.numel():].copy_(gw.flatten())
    return out


def _eager_step(x: Inputs, out: torch.Tensor | None = None) -> torch.Tensor:
    h, w = x["h"].detach().requires_grad_(), x["w"].detach().requires_grad_()
    loss = eager(h, w, x["y"], reduction="sum")
    loss.backward()
    return _flat(loss.detach(), h.grad, w.grad, out)


def _row_max(err: torch.Tensor, H: int) -> torch.Tensor:
    """Eager's error over [loss, ∂h.flat, ∂W.flat] with each H-wide row of ∂h and ∂W replaced by its largest (NaN kept:
    a NaN anywhere in a row allows nothing there, as compare treats a NaN slack)."""
    out = err.clone()
    rows = out[1:].view(-1, H)
    if rows.numel():
        worst = torch.where(rows.isnan().any(1, keepdim=True), float("nan"), rows.nan_to_num(0.0).amax(1, keepdim=True))
        out[1:] = worst.expand_as(rows).reshape(-1)
    return out


def make_case(N: int, H: int, V: int, dtype: torch.dtype, ignored: int = 0, chunk: int | None = None) -> Case:
    """Forward and backward in one output: [loss, ∂h.flat, ∂W.flat] (reduction "sum", so gradients are O(1) and the
    dtype's tolerance means something)."""

    def setup(dev: torch.device, gen: torch.Generator) -> Inputs:
        y = torch.randint(0, V, (N,), generator=gen, device=dev)
        y[:ignored] = -100
        return {"h": randn((N, H), dtype, dev, gen), "w": randn((V, H), dtype, dev, gen, scale=H ** -0.5), "y": y}

    def run(x: Inputs, out: torch.Tensor | None) -> torch.Tensor:
        loss, gh, gw, _ = forward_and_grads(x["h"], x["w"], None, x["y"], reduction="sum", need_b=False, chunk=chunk)
        assert gh is not None
        return _flat(loss, gh, gw, out if out is not None else torch.empty(size, dtype=dtype, device=gh.device))

    def ref(x: Inputs) -> torch.Tensor:
        loss, gh, gw, _ = reference(x["h"], x["w"], x["y"], reduction="sum")
        return _flat(loss, gh, gw)

    elem = torch.empty((), dtype=dtype).element_size()
    C = chunk or chunk_rows(N, V, H, elem)
    name = f"{dtype_name(dtype)} N={N} H={H} V={V}" + (f" {ignored} ignored" if ignored else "") + (
        f" chunks of {C}" if C < N else "")
    size = 1 + N * H + V * H
    return Case("linear_cross_entropy", name, dtype, setup, run=run, reference=ref,
                eager=lambda x: _eager_step(x, torch.empty(size, dtype=dtype, device=x["h"].device)), flops=6.0 * N * V * H,
                bytes=float(elem * (2 * N * H + 2 * V * H) + 2 * elem * N * V), out_shape=lambda x: (size,),
                params={"N": N, "H": H, "V": V, "chunk": C}, eager_slack=True, slack_pool=lambda e: _row_max(e, H))


def cases(preset: str, target: policy.Target) -> list[Case]:
    if target.interpreter:
        return [make_case(37, 64, 1000, torch.float32, ignored=5), make_case(24, 32, 1031, torch.float16, chunk=10),
                make_case(19, 48, 517, torch.bfloat16, ignored=3)]
    seed = [make_case(1024, 512, 1000, torch.bfloat16)]  # tiny-llama: 8 x 128 tokens, hidden 512, vocab 1000
    if preset in ("seed", "quick"):
        return seed
    if preset == "sweep":  # LM heads of real vocabularies (Llama-2 32000, Llama-3 128256, Qwen2 152064), hidden 4096
        return [make_case(4096, 4096, v, torch.bfloat16) for v in (32000, 128256)] + \
            [make_case(8192, 4096, 152064, torch.bfloat16)]
    return seed + [make_case(8192, 2048, 32000, torch.bfloat16)]  # the medium preset's LM head (2 chunks)


def aot_specs(target: policy.Target) -> list[AotSpec]:
    cfg = ce_config(target, 32000)
    sig = {"z_ptr": "*bf16", "stride_z": "i64", "y_ptr": "*i64", "loss_ptr": "*fp32", "nvalid_ptr": "*i64", "V": "i32",
           "ignore_index": "i32", "row0": "i32"}
    const = {"MEAN": True, "WRITE_GRAD": True, "BLOCK_V": cfg["BLOCK_V"]}
    return [AotSpec("linear_cross_entropy rows bf16 V=32000", ce_rows_kernel, sig, const, cfg)]
