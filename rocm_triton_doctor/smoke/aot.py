"""`smoke --compile-only`: compile every kernel for named targets with the installed Triton and no GPU.

Per kernel × target: compiled or the compiler's first error line; registers (AMD: VGPR/SGPR/AGPR from the AMDGCN
metadata; NVIDIA: registers from ptxas -v), spills, LDS/shared bytes, and the occupancy they imply. Each target
compiles in its own subprocess, so a compiler crash or an MLIR dump on stderr cannot take the doctor down.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rocm_triton_doctor.result import ExitCode, Result

if TYPE_CHECKING:
    from rocm_triton_doctor.check.facts import Facts
    from rocm_triton_doctor.check.findings import Finding

DEFAULT_TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1151", "gfx1201", "sm_80", "sm_90")


@dataclass
class AotResult:
    kernel: str
    target: str
    ok: bool
    error: str | None = None
    vgpr: int | None = None
    sgpr: int | None = None
    agpr: int | None = None
    registers: int | None = None
    spills: int | None = None
    shared_bytes: int | None = None
    occupancy: str | None = None  # waves per SIMD (AMD) or warps per SM (NVIDIA), with what limits it
    num_warps: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _amd_occupancy(arch: str, vgpr_total: int, lds: int, num_warps: int) -> str | None:
    """CDNA only: 512 VGPRs per lane per SIMD (allocated in granules of 8), at most 8 waves per SIMD on gfx90a/gfx942
    /gfx950, 64 KiB LDS per CU shared by 4 SIMDs (ROCm MI300 workload guide; kernels.md §5.2). For RDNA the
    compiler's own figure is used (see _amd_stats)."""
    if not arch.startswith(("gfx90a", "gfx94", "gfx95")):
        return None
    alloc = max(8, -(-vgpr_total // 8) * 8)
    by_vgpr = min(8, 512 // alloc)
    waves = by_vgpr
    limit = "VGPRs"
    if lds:
        groups = 65536 // lds
        by_lds = groups * num_warps // 4
        if by_lds < waves:
            waves, limit = by_lds, "LDS"
    return f"{waves} waves/SIMD ({limit})"


def _nv_occupancy(regs: int, shared: int, num_warps: int) -> str:
    """Hopper/Ampere: 65536 registers and 64 resident warps per SM; registers allocated per warp in units of 256;
    shared memory 228 KiB (sm_90) per SM."""
    per_warp = -(-regs * 32 // 256) * 256
    by_regs = 65536 // max(per_warp * num_warps, 1)
    by_shared = (233472 // shared) if shared else 32
    blocks = max(0, min(by_regs, by_shared, 32, 64 // num_warps))
    limit = "registers" if by_regs <= by_shared else "shared memory"
    return f"{blocks * num_warps} warps/SM ({limit})"


def _compile_target(target_name: str, only: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Runs inside the child process."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from rocm_triton_doctor import kernels
    from rocm_triton_doctor.kernels.policy import target_from_name

    t = target_from_name(target_name)
    arch: Any = int(t.arch[3:]) if t.backend == "cuda" else t.arch
    gpu = GPUTarget(t.backend, arch, t.warp_size)
    out = []
    for spec in kernels.REGISTRY:
        if only and spec.name not in only:
            continue
        # Each AotSpec's options are the same dict the kernel's launcher splats into its launch; what is not a
        # constexpr is a compiler option.
        for name, fn, sig, const, cfg in spec.aot(t):
            opts = {k: v for k, v in cfg.items() if k not in const}
            r = AotResult(name, target_name, ok=False, num_warps=int(opts.get("num_warps", 4)))
            try:
                full = {**sig, **{c: "constexpr" for c in const}}
                # Pointers as a launch passes them: tensors from the caching allocator are 16-byte aligned, and Triton
                # marks such an argument divisible by 16 at launch; without the mark every load compiled as a scalar.
                attrs = {(i,): [["tt.divisibility", 16]] for i, ty in enumerate(full.values()) if ty.startswith("*")}
                k = triton.compile(ASTSource(fn, full, constexprs=const, attrs=attrs), target=gpu, options=opts)
                r.ok = True
                r.shared_bytes = int(getattr(k.metadata, "shared", 0) or 0)
                if t.backend == "hip":
                    _amd_stats(k.asm["amdgcn"], r, t.arch)
                else:
                    _nv_stats(k.asm["ptx"], t.arch, r)
            except Exception as exc:  # noqa: BLE001 - the compiler's own words are the result
                lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
                r.error = f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]
            out.append(r.to_dict())
    return out


def _amd_stats(asm: str, r: AotResult, arch: str) -> None:
    def field(name: str) -> int | None:
        m = re.search(rf"\.{name}:\s+(\d+)", asm)
        return int(m.group(1)) if m else None

    r.vgpr, r.sgpr, r.agpr = field("vgpr_count"), field("sgpr_count"), field("agpr_count")
    vs, ss = field("vgpr_spill_count") or 0, field("sgpr_spill_count") or 0
    r.spills = vs + ss
    lds = field("group_segment_fixed_size")
    r.shared_bytes = max(r.shared_bytes or 0, lds or 0)  # Triton's LDS may be dynamic (metadata.shared)
    ours = _amd_occupancy(arch, (r.vgpr or 0) + (r.agpr or 0), r.shared_bytes or 0, r.num_warps or 4)
    # LLVM's AMDGPU backend prints the occupancy it computed ("; Occupancy: N", waves per SIMD) for every target,
    # RDNA included; it honours the kernel's waves_per_eu hint, so on CDNA it can sit below the VGPR bound.
    llvm = re.search(r";\s*Occupancy:\s*(\d+)", asm)
    if llvm:
        r.occupancy = f"{llvm.group(1)} waves/SIMD (LLVM)" + (f"; {ours}" if ours else "")
    else:
        r.occupancy = ours


def _nv_stats(ptx: str, arch: str, r: AotResult) -> None:
    from triton.backends.nvidia.compiler import get_ptxas

    try:
        tool = get_ptxas(int(arch[3:]))  # triton >= 3.6 takes the SM number
    except TypeError:
        tool = get_ptxas()
    ptxas = getattr(tool, "path", tool)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as fh:
            fh.write(ptx)
        res = subprocess.run([ptxas, "-v", f"--gpu-name={arch}a" if arch == "sm_90" else f"--gpu-name={arch}", src,
                              "-o", os.path.join(d, "k.cubin")], capture_output=True, text=True, timeout=120)
    text = res.stdout + res.stderr
    m = re.search(r"Used (\d+) registers", text)
    r.registers = int(m.group(1)) if m else None
    spill = re.findall(r"(\d+) bytes spill (?:stores|loads)", text)
    r.spills = sum(int(s) for s in spill) if spill else 0
    if r.registers:
        r.occupancy = _nv_occupancy(r.registers, r.shared_bytes or 0, r.num_warps or 4)


def audit(targets: list[str], timeout: float = 600.0, only: tuple[str, ...] = ()) -> list[AotResult]:
    """Compile for each target in a child process; a child that dies is reported per target, not raised."""
    results: list[AotResult] = []
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    for tname in targets:
        code = ("import json, sys; from rocm_triton_doctor.smoke.aot import _compile_target; "
                f"print('@@AOT@@' + json.dumps(_compile_target({tname!r}, {tuple(only)!r})))")
        try:
            res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            results.append(AotResult("*", tname, False, error=f"compilation timed out after {timeout:.0f} s"))
            continue
        if "@@AOT@@" not in res.stdout:
            tail = [ln for ln in (res.stderr or "").splitlines() if ln.strip()]
            results.append(AotResult("*", tname, False, error=(tail[-1] if tail else f"exit {res.returncode}")[:300]))
            continue
        for d in json.loads(res.stdout.rsplit("@@AOT@@", 1)[1]):
            results.append(AotResult(**d))
    return results


def findings(results: list[AotResult], triton_version: str) -> tuple[Finding, ...]:
    """One finding per target: every kernel compiled (`aot-compile`, ok), compiled but some spill registers
    (`aot-spills`, warn), some or all failed (`aot-compile`, fail, with what is known to work from the knowledge
    base). The target is the finding's first evidence item."""
    from rocm_triton_doctor import knowledge
    from rocm_triton_doctor.check.findings import Finding, Severity

    out = []
    for target in dict.fromkeys(r.target for r in results):
        rs = [r for r in results if r.target == target]
        bad = [r for r in rs if not r.ok]
        spills = [r for r in rs if r.ok and r.spills]
        if not bad:
            text = f"{target}: all {len(rs)} kernels compiled with Triton {triton_version}"
            if spills:
                text += f"; {len(spills)} kernel(s) spill registers: {', '.join(f'{r.kernel} ({r.spills})' for r in spills)}"
            out.append(Finding("aot-spills" if spills else "aot-compile", Severity.WARN if spills else Severity.OK, text,
                               evidence=(target,), group="aot"))
            continue
        first = bad[0].error or "failed"
        known = knowledge.triton_codegen_issue(triton_version, target)
        if len(bad) == len(rs):
            text = f"this Triton ({triton_version}) cannot generate code for {target}: {first}"
        else:
            text = f"{target}: {len(bad)} of {len(rs)} kernels fail to compile with Triton {triton_version}: {first}"
        if known:
            text += f". {known}"
        out.append(Finding("aot-compile", Severity.FAIL, text, evidence=(target,), group="aot"))
    return tuple(out)


def parse_arch(arch: str) -> list[str]:
    """`--arch`: 'all' (every gfx the knowledge base lists, plus sm_80 and sm_90) or a comma list of known gfx names
    and sm_NN. Anything else is a ValueError (a usage error, before any compiling: newcomer-walk.md defect 14)."""
    from rocm_triton_doctor import knowledge

    if arch.strip() == "all":
        return list(knowledge.all_gfx()) + ["sm_80", "sm_90"]
    names = [n.strip().lower() for n in arch.split(",") if n.strip()]
    known = set(knowledge.all_gfx())
    for n in names:
        if not (n in known or re.fullmatch(r"sm_[0-9]{2,3}", n)):
            raise ValueError(f"unknown --arch target {n!r}: use a gfx name the knowledge base lists "
                             f"({', '.join(sorted(known))}), sm_NN, or 'all'")
    if not names:
        raise ValueError("--arch is empty")
    return names


def default_targets(facts: Facts) -> list[str]:
    """Without --arch: the GPUs `check` finds here (AMD gfx, then NVIDIA sm_NN)."""
    found = sorted({g.gfx for g in (facts.gpus.value or ()) if g.gfx}) if facts.gpus.found else []
    if facts.nvidia.found and facts.nvidia.value:
        found += sorted({"sm_" + g.compute_cap.replace(".", "") for g in facts.nvidia.value.gpus if g.compute_cap})
    return found


def local_targets() -> list[str]:
    """default_targets() of this machine (static probes only, no torch import)."""
    from rocm_triton_doctor.check.facts import build_facts
    from rocm_triton_doctor.check.probes.collect import Collector

    return default_targets(build_facts(Collector(runtime=False).collect()))


def run(targets: list[str], only: tuple[str, ...] = ()) -> Result:
    """`smoke --compile-only`: audit every kernel for `targets`; exit 1 when a target fails to compile.
    An unknown kernel in `only` is a ValueError (a usage error)."""
    try:
        import triton

        from rocm_triton_doctor.kernels import NAMES
    except Exception as exc:  # noqa: BLE001 - a broken Triton is a one-line "could not check"
        return Result.error("smoke --compile-only", f"cannot import triton ({type(exc).__name__}: {exc}); run "
                            "`rocm-triton-doctor check`", ExitCode.COULD_NOT_CHECK, schema=SCHEMA)
    unknown = [n for n in only if n not in NAMES]
    if unknown:
        raise ValueError(f"unknown kernel(s): {', '.join(unknown)} (known: {', '.join(NAMES)})")
    results = audit(targets, only=only)
    found = findings(results, triton.__version__)
    code = ExitCode.PROBLEMS if any(f.severity.value == "fail" for f in found) else ExitCode.HEALTHY
    return Result(SCHEMA, "smoke --compile-only", "passed" if code == 0 else "failed", int(code),
                  {"triton": triton.__version__, "targets": targets, "results": [r.to_dict() for r in results]}, found)


# smoke-aot/2: `findings` are the common finding objects (id aot-compile / aot-spills, the target is evidence[0]);
# smoke-aot/1 had {target, severity, title} dicts. `status` and `tool_version` are new.
SCHEMA = "smoke-aot/2"
