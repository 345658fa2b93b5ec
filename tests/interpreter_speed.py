"""A faster launch for Triton's interpreter in the tests: every interpreted launch re-patches triton.language for the
interpreter (triton/runtime/interpreter.py, `_patch_lang` -> `_patch_builtin`), and each `_patch_builtin` call walks
its package with `inspect.getmembers` to find the builtins — about a fifth of the interpreter tests' CPU time here
(cProfile of tests/kernels/test_rows_window.py::test_every_shift_and_both_edges: 11.5 of 57.7 s under
`_patch_builtin`, 7.1 of it in `inspect.getmembers`). The builtins of a package do not change, so they are listed
once per package and the same attributes are patched (and restored by the interpreter's own scope) as before; a
package the launch in progress has patched already (a @jit helper called from a kernel patches again) is left as it
is, as the original walk, finding no builtin left, leaves it.

Installed only when Triton's interpreter has exactly the functions this replaces (`_patch_builtin(pkg, builder,
scope)` and `_patch_attr`); any other Triton runs unchanged. The kernels and their results are untouched: this is
how the interpreter finds what to patch, not what it computes."""

from __future__ import annotations

import inspect
from typing import Any


def install() -> bool:
    try:
        from triton.runtime import interpreter as ti
    except Exception:  # noqa: BLE001 - no Triton, or one that does not import: nothing to speed up
        return False
    patch_builtin, patch_attr = getattr(ti, "_patch_builtin", None), getattr(ti, "_patch_attr", None)
    is_builtin = getattr(getattr(getattr(ti, "tl", None), "core", None), "is_builtin", None)
    if patch_builtin is None or patch_attr is None or is_builtin is None or getattr(patch_builtin, "_rtd", False):
        return False
    if list(inspect.signature(patch_builtin).parameters) != ["pkg", "builder", "scope"]:
        return False
    found: dict[Any, list[tuple[str, Any]]] = {}  # a package (a module or a class: hashed by identity) -> builtins

    def _patch_builtin(pkg: Any, builder: Any, scope: Any) -> None:
        members = found.get(pkg)
        if members is None:
            members = [(name, m) for name, m in inspect.getmembers(pkg) if is_builtin(m)]
            if not members:  # already patched (a nested launch) or no builtins: the original walk, nothing kept
                patch_builtin(pkg, builder, scope)
                return
            found[pkg] = members
        name0, member0 = members[0]
        if getattr(pkg, name0, None) is not member0:
            # patched already, by the launch in progress (a @jit helper called from a kernel patches again): the
            # original walk would find no builtin left to patch
            return
        for name, member in members:
            patch_attr(pkg, name, member, builder, scope)

    _patch_builtin._rtd = True  # type: ignore[attr-defined]
    ti._patch_builtin = _patch_builtin
    return True
