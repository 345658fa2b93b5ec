"""attention_autograd.py: the custom ops' registrations (torch.library.opcheck: schema, fake tensors, autograd) and
torch.compile(fullgraph=True) of a model calling autograd_op with no graph break, its gradients equal to eager's."""

from __future__ import annotations

import torch

from rocm_triton_doctor.kernels import attention, attention_autograd
from tests.kernels.test_attention_backward import _leaves


def test_custom_ops_opcheck() -> None:
    q, k, v, do = _leaves(1, 2, 1, 9, 12, 16, torch.float32, False, seed=4)
    torch.library.opcheck(attention_autograd._attention_op, (q, k, v, True, None))
    with torch.no_grad():
        o, lse = attention_autograd._attention_op(q, k, v, True, None)
    torch.library.opcheck(attention_autograd.attention_backward_op, (do, q.detach(), k.detach(), v.detach(), o, lse,
                                                                    True, None))


class _Attn(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(16, 3 * 16, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, S, _ = x.shape
        q, k, v = self.proj(x).view(B, S, 3, 1, 16).permute(2, 0, 3, 1, 4).unbind(0)
        return attention.autograd_op(q, k, v, causal=True).square().mean()


def test_torch_compile_fullgraph_has_no_graph_break() -> None:
    import torch._dynamo

    torch._dynamo.reset()
    model = _Attn()
    x = torch.randn(1, 12, 16, generator=torch.Generator().manual_seed(5))
    explain = torch._dynamo.explain(model)(x)
    assert explain.graph_break_count == 0 and explain.graph_count == 1
    eager = model(x)
    eager.backward()
    assert model.proj.weight.grad is not None
    want = model.proj.weight.grad.clone()
    model.zero_grad(set_to_none=True)
    # aot_eager: dynamo + AOTAutograd through the op's fake and autograd registrations (no C++ toolchain needed).
    got = torch.compile(model, fullgraph=True, backend="aot_eager")(x)
    got.backward()
    torch.testing.assert_close(got, eager)
    assert model.proj.weight.grad is not None
    torch.testing.assert_close(model.proj.weight.grad, want, rtol=1e-4, atol=1e-6)
