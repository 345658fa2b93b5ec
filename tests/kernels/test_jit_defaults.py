"""A @triton.jit helper (a jit function another jit function calls) takes no string default: Triton 3.6 hands a
helper's default string to the callee unwrapped ("'str' object has no attribute 'type'"). `_softmax_update`'s
DOT_PREC="ieee" default made attention's host-TMA kernel — the default for large D = 128 on Hopper — fail to compile
on Triton 3.6 from session 9 until session 10 (docs/performance.md); Triton 3.9, the CI version, compiles it, so only
this scan can catch the pattern on a CPU."""

from __future__ import annotations

import ast
from pathlib import Path

import rocm_triton_doctor.kernels as kernels_pkg

ROOT = Path(kernels_pkg.__file__).parent


def _jit_functions() -> dict[str, tuple[Path, ast.FunctionDef]]:
    out = {}
    for path in sorted(ROOT.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
                out[node.name] = (path, node)
    return out


def test_jit_helpers_have_no_string_defaults() -> None:
    jit = _jit_functions()
    called = {n.func.id for _, f in jit.values() for n in ast.walk(f)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in jit}
    assert "_softmax_update" in called and "_attn_block" in called  # the scan sees the helpers it is about
    bad = []
    for name in sorted(called):
        path, fn = jit[name]
        for d in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
            if isinstance(d, ast.Constant) and isinstance(d.value, str):
                bad.append(f"{path.name}:{fn.lineno} {name} has default {d.value!r}")
    assert not bad, bad
