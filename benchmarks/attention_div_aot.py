"""Compile-only (no GPU): the attention forward and backward kernels at head dims 40 and 72 with the stride divisor a
contiguous launch passes (DIV = 8: rows of 80 / 144 bytes), for CDNA, RDNA and sm_90, with the policy's tiles; prints
target, kernel, registers (VGPRs on AMD), spilled bytes/registers. Session 16: docs/measurements/
2026-11-28-aot-attention-d40-d72-div8.log.

Usage: PYTHONPATH=. python benchmarks/attention_div_aot.py
"""
import re

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from rocm_triton_doctor.kernels import attention, attention_cases, policy


def _field(asm: str, name: str) -> int:
    m = re.search(rf"\.{name}:\s+(\d+)", asm)
    return int(m.group(1)) if m else 0


out = []
for tname in ("gfx942", "gfx90a", "gfx950", "gfx1100", "gfx1201", "sm_90"):
    t = policy.target_from_name(tname)
    arch = int(t.arch[3:]) if t.backend == "cuda" else t.arch
    gpu = GPUTarget(t.backend, arch, t.warp_size)
    specs = [s for s in attention.aot_specs(t) if s.label in ("attention bf16 causal D=128", "attention bf16 D=128")]
    specs += [s for s in attention_cases.backward_aot_specs(t)
              if re.match(r"attention backward bf16 (causal )?D=128 (dK/dV|dQ)$", s.label)]
    for sp in specs:
        for d, div in ((40, 8), (72, 8)):
            bd = max(16, 1 << (d - 1).bit_length())
            const = {**sp.constexprs, "HEAD_DIM": d, "BLOCK_D": bd, "DIV": div}
            causal = const.get("CAUSAL", False)
            if "dK/dV" in sp.label or "dQ" in sp.label:
                cfg = policy.attention_backward_config(t, bd, 2, causal)
                key = ("BLOCK_M1", "BLOCK_N1") if "dK/dV" in sp.label else ("BLOCK_M2", "BLOCK_N2")
                const.update(BLOCK_M=cfg[key[0]], BLOCK_N=cfg[key[1]])
                opts = {k: v for k, v in cfg.items() if not k.startswith("BLOCK_")}
            else:
                cfg = policy.attention_config(t, bd, 2, causal=causal)
                const.update(BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"])
                opts = {k: v for k, v in cfg.items() if k not in const}
            full = {**sp.signature, **{c: "constexpr" for c in const}}
            attrs = {(i,): [["tt.divisibility", 16]] for i, ty in enumerate(full.values()) if ty.startswith("*")}
            try:
                k = triton.compile(ASTSource(sp.fn, full, constexprs=const, attrs=attrs), target=gpu, options=opts)
                if t.backend == "hip":
                    asm = k.asm["amdgcn"]
                    spills = _field(asm, "vgpr_spill_count") + _field(asm, "sgpr_spill_count")
                    regs = _field(asm, "vgpr_count")
                else:
                    from rocm_triton_doctor.smoke.aot import AotResult, _nv_stats
                    r = AotResult(sp.label, tname, ok=True)
                    _nv_stats(k.asm["ptx"], t.arch, r)
                    spills, regs = r.spills, r.registers
                out.append((tname, sp.label.replace("D=128", f"D={d}"), regs, spills))
            except Exception as e:
                out.append((tname, sp.label.replace("D=128", f"D={d}"), "ERR", str(e).splitlines()[0][:80]))
for r in out:
    print(*r)
