"""The install plan: a pure function of the machine's facts, the knowledge base and the options (no I/O).

It says, before anything happens: which interpreter/environment, what gets removed and why, what gets installed
(exact versions) from which index, and which environment variables the user should set. When no wheel can work it
says why (NoWheel) and nothing is touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from packaging.version import Version

from rocm_triton_doctor import knowledge
from rocm_triton_doctor.check.checks.torch import CPU_INDEX
from rocm_triton_doctor.check.facts import Facts, Gpu
from rocm_triton_doctor.check.facts.python import build_tag, torch_build
from rocm_triton_doctor.install import sources
from rocm_triton_doctor.install.sources import BadOption, check_url
from rocm_triton_doctor.install.sources import (TRITON_PROVIDERS, Step, triton_removals, triton_requirement,  # noqa: F401 (re-exported)
                                               wrong_platform_index)

PLAN_SCHEMA = "rocm-triton-doctor/install-plan/1"
FAMILY = ("torchvision", "torchaudio")


class NoWheel(Exception):
    """No published wheel can work here; the message says why. Nothing was changed."""


class CannotTell(NoWheel):
    """The facts cannot say which wheels would fit (no GPU vendor known): could not check (exit 3), not a problem."""


@dataclass(frozen=True)
class Options:
    torch: str | None = None  # exact torch version, e.g. "2.9.1"
    rocm: str | None = None  # ROCm index X.Y (rocmX.Y)
    index_url: str | None = None  # a mirror of the chosen index
    find_links: str | None = None  # a local wheelhouse
    offline: bool = False
    venv: str | None = None
    python: str | None = None
    with_: tuple[str, ...] = ()
    installer: str = "pip"
    source: str = "auto"  # sources.SOURCE_CHOICES: where the AMD torch comes from


@dataclass
class Plan:
    platform: str  # amd | nvidia | cpu
    python: str  # target interpreter path (or the one that will create --venv)
    python_version: str
    venv: str | None  # create a fresh virtual environment here
    torch_version: str  # exact, with local tag
    index: str | None  # "rocm6.4", "cpu", None for PyPI
    index_url: str | None
    find_links: str | None
    offline: bool
    installs: list[str]  # requirement strings
    removals: list[Step]
    env: dict[str, str]  # variables the user should set (never written to shell rc files)
    expected_gfx: list[str]
    triton: str | None  # the distribution==version torch pins, when known
    notes: list[str] = field(default_factory=list)
    source: str = "pytorch"  # pytorch | therock | amd-repo (AMD); pypi | pytorch-cpu otherwise
    source_why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"schema": PLAN_SCHEMA, "platform": self.platform, "python": self.python,
                "python_version": self.python_version, "venv": self.venv, "torch": self.torch_version,
                "index": self.index, "index_url": self.index_url, "find_links": self.find_links,
                "offline": self.offline, "install": self.installs,
                "remove": [{"name": s.name, "reason": s.reason} for s in self.removals], "env": self.env,
                "expected_gfx": self.expected_gfx, "triton": self.triton, "notes": self.notes,
                "source": {"name": self.source, "why": self.source_why}}


def _platform(f: Facts) -> str:
    from rocm_triton_doctor.check.facts.platform import accelerator as platform

    p = platform(f)
    if p == "unknown":
        raise CannotTell("cannot tell whether this machine has an AMD or NVIDIA GPU (no driver, KFD or PCI facts): "
                      "run install on the machine itself, not from a partial snapshot")
    return p


def _gpus(f: Facts) -> tuple[Gpu, ...]:
    return f.gpus.value if f.gpus.found and f.gpus.value else ()


def make_plan(f: Facts, opts: Options, python_version: str, python: str) -> Plan:
    if opts.source not in sources.SOURCE_CHOICES:
        raise BadOption(f"--source must be one of {', '.join(sources.SOURCE_CHOICES)}, got {opts.source!r}")
    if opts.installer not in ("pip", "uv"):
        raise BadOption(f"--installer must be pip or uv, got {opts.installer!r}")
    if opts.offline and not opts.find_links:
        raise BadOption("--offline needs --find-links DIR (a wheelhouse to install from)")
    if opts.index_url:
        check_url(opts.index_url)
    bad = [w for w in opts.with_ if w not in FAMILY]
    if bad:
        raise BadOption(f"--with accepts {', '.join(FAMILY)}; got {', '.join(bad)}")
    if f.wsl.found and f.wsl.value and f.dev_dxg.found:
        raise NoWheel("this is WSL with an AMD GPU (/dev/dxg): the download.pytorch.org wheels do not work there. "
                      "Follow AMD's ROCm-on-WSL guide (see the 'wsl' finding of `rocm-triton-doctor check`); "
                      "install does not automate it")
    plat = _platform(f)
    if plat == "amd" and opts.index_url and wrong_platform_index(opts.index_url):
        raise BadOption(f"--index-url {opts.index_url} is a CPU/CUDA index, and this machine has an AMD GPU: torch from "
                        "it cannot use the GPU. Use a rocmX.Y index (or leave --index-url out)")
    notes: list[str] = _blockers(f) if plat == "amd" else []
    env: dict[str, str] = {}
    find_links = opts.find_links
    if plat == "amd":
        amd = _amd_source(f, opts, python_version)
        torch_v, index, expected, env, src, why = amd.torch_v, amd.index, amd.expected, amd.env, amd.source, amd.why
        notes += amd.notes
        pin, (triton_req, exact) = amd.torch_req, (amd.triton_req, amd.triton_exact)
        index_url = opts.index_url or amd.url
        find_links = find_links or amd.find_links
    else:
        torch_v = _pinned_or_newest(opts, python_version)
        index, expected = (None, []) if plat == "nvidia" else ("cpu", [])
        src, why = ("pypi", "NVIDIA GPU: PyPI's default torch is the CUDA build") if plat == "nvidia" else \
            ("pytorch-cpu", "no GPU: the CPU build from PyTorch's CPU index")
        notes.append("NVIDIA: the default PyPI wheel is the CUDA build; the knowledge base has no driver table for "
                     "CUDA wheels, so check `nvidia-smi` shows a driver new enough for the CUDA version torch reports."
                     if plat == "nvidia" else
                     "No GPU found: installing the CPU build (Triton kernels then run only in interpreter mode; the CPU "
                     "build does not bring Triton: `smoke` needs `pip install triton` in the same environment).")
        index_url = opts.index_url or (CPU_INDEX if index == "cpu" else None)
        pin = f"torch=={torch_v}"
        triton_req, exact = triton_requirement(torch_v, plat)
    if opts.offline:
        index_url = None
    triton = exact  # the knowledge row's pin, only when it is this exact torch's
    installs = [pin] + ([triton_req] if triton_req else [])
    have = f.python.value.distributions if f.python.found and f.python.value else {}
    family = list(dict.fromkeys([*opts.with_, *(n for n in FAMILY if n in have)]))
    installs += family
    removals = _removals(f, plat, triton_req, family)
    for n in family:
        if n in have and n not in opts.with_:
            notes.append(f"{n} is installed: it is reinstalled from the same index so it matches torch.")
    venv = opts.venv
    if venv is None and f.python.found and f.python.value and f.python.value.externally_managed:
        raise BadOption(f"{python} is externally managed (PEP 668): pass --venv PATH to install into a fresh "
                        "virtual environment (recommended)")
    return Plan(plat, python, python_version, venv, torch_v, index, index_url, find_links, opts.offline,
                installs, removals, env, expected, triton, notes, src, why)


def _blockers(f: Facts) -> list[str]:
    """System problems that no wheel fixes: torch will not see the GPU until they are solved."""
    from rocm_triton_doctor.check.checks import SETS, run_checks, select

    fails = [x for x in run_checks(f, select(SETS["install-blockers"])) if x.severity.value == "fail"]
    if not fails:
        return []
    return [f"Fix first (no wheel can): {x.title} [{x.id}]" for x in fails]


def _pinned_or_newest(opts: Options, py: str) -> str:
    rels = [r for r in knowledge.torch_releases() if r.supports_python(py)]
    if opts.torch:
        return opts.torch
    if not rels:
        raise NoWheel(f"no torch release in the knowledge base supports Python {py}")
    return max(rels, key=lambda r: Version(r.torch)).torch


def _python_range(rels: list[knowledge.TorchRelease]) -> str:
    minors = sorted({m for r in rels for m in range(6, 20) if r.supports_python(f"3.{m}.0")})
    return f"3.{minors[0]}–3.{minors[-1]}" if minors else "none"


def _fit(gpus: tuple[Gpu, ...], arches: set[str]) -> dict[str, knowledge.OverrideRule] | None:
    """None if some GPU cannot run from an index with `arches`; else the overrides needed (gfx -> rule)."""
    needed: dict[str, knowledge.OverrideRule] = {}
    for g in gpus:
        if not g.gfx or g.gfx in arches:
            continue
        rule = next((r for r in knowledge.override_rules(g.gfx) if r.target in arches), None)
        if rule is None:
            return None
        needed[g.gfx] = rule
    return needed


def _amd_choice(f: Facts, opts: Options, py: str,
                allow_override: bool = True) -> tuple[str, str, list[str], dict[str, str], list[str]]:
    gpus = _gpus(f)
    notes: list[str] = []
    env: dict[str, str] = {}
    rels = sorted(knowledge.torch_releases(), key=lambda r: Version(r.torch), reverse=True)
    if opts.torch:
        want = Version(opts.torch.split("+")[0]).release[:2]
        rels = [r for r in rels if Version(r.torch).release[:2] == want]
        if not rels:
            raise NoWheel(f"torch {opts.torch} is not in the knowledge base (as of {knowledge.as_of()})")
    with_rocm = [r for r in rels if r.rocm_indexes]
    py_ok = [r for r in with_rocm if r.supports_python(py)]
    if not py_ok:
        raise NoWheel(f"no ROCm wheel for Python {py}" + (f" of torch {opts.torch}" if opts.torch else "") +
                      f"; supported: Python {_python_range(with_rocm)}. Use --python with a supported interpreter "
                      "(e.g. python3.12).")
    system = None
    if f.rocm.found and f.rocm.value and f.rocm.value.version:
        system = "rocm" + ".".join(f.rocm.value.version.split(".")[:2])

    r714 = knowledge.rocm_release("7.14.0")
    therock_unvalidated = set(r714.gfx_build_only) if r714 else set()
    unvalidated = {g.gfx for g in gpus if g.gfx and g.gfx in therock_unvalidated}

    def indexes(r: knowledge.TorchRelease) -> list[str]:
        idxs = list(reversed(r.rocm_indexes))
        if opts.rocm:
            idxs = [i for i in idxs if i == f"rocm{opts.rocm}"]
        if unvalidated:  # an index whose ROCm is TheRock's (rocm7.14) only builds these, untested: last resort
            idxs.sort(key=lambda i: not knowledge.index_bundles_rocm(i))
        if system in idxs:  # prefer the index that matches the system ROCm
            idxs.remove(system)
            idxs.insert(0, system)
        return idxs

    def search(targets: tuple[Gpu, ...], allow_override: bool) -> tuple[str, str, dict[str, knowledge.OverrideRule]] | None:
        for r in py_ok:
            for i in indexes(r):
                version = opts.torch.split("+")[0] if opts.torch else r.version_on(i)
                fit = _fit(targets, set(knowledge.index_arches(i, version) or ()))
                if fit is not None and (allow_override or not fit):
                    return version, i, fit
        return None

    dgpus = tuple(g for g in gpus if g.integrated is not True)
    hidden_igpu = False
    choice = search(gpus, allow_override=False)
    if choice is None and len(dgpus) < len(gpus) and dgpus:
        choice = search(dgpus, allow_override=False)
        hidden_igpu = choice is not None
    if choice is None and allow_override:
        choice = search(gpus, allow_override=True)
    if choice is None and allow_override and len(dgpus) < len(gpus) and dgpus:
        choice = search(dgpus, allow_override=True)
        hidden_igpu = choice is not None
    if choice is None:
        why = ", ".join(sorted({g.gfx for g in gpus if g.gfx})) or "this GPU"
        raise NoWheel(f"no published ROCm wheel (known as of {knowledge.as_of()}) carries {why}" +
                      (f" on the rocm{opts.rocm} index" if opts.rocm else "") +
                      "; build torch from source with PYTORCH_ROCM_ARCH, or use AMD's TheRock wheels")
    torch_short, index, overrides = choice
    targets = dgpus if hidden_igpu else gpus
    if hidden_igpu:
        visible = ",".join(str(i) for i, g in enumerate(gpus) if g.integrated is not True)
        env["HIP_VISIBLE_DEVICES"] = visible
        notes.append(f"No wheel carries the iGPU ({', '.join(g.gfx or '?' for g in gpus if g.integrated)}): hide it with "
                     f"HIP_VISIBLE_DEVICES={visible} (indices in ROCm's enumeration order; check with rocminfo).")
    per_node = len(targets) > len([g for g in targets if g.gfx in overrides]) or len({r.value for r in overrides.values()}) > 1
    for g in targets:
        if g.gfx in overrides:
            rule = overrides[g.gfx]
            var = f"HSA_OVERRIDE_GFX_VERSION_{g.node}" if per_node else "HSA_OVERRIDE_GFX_VERSION"
            env[var] = rule.value
            caveat = "" if rule.verified else " (a community report, not confirmed)"
            notes.append(f"No wheel carries {g.gfx}; {var}={rule.value} runs it as {rule.target}{caveat}. AMD does not "
                         f"support this. Source: {rule.source}." + (" Per-node variables need ROCm >= 6.3." if per_node else ""))
    rel = knowledge.torch_release(torch_short)
    if rel and rel.unverified:
        notes.append(f"Knowledge for torch {rel.torch} is partly unconfirmed: {rel.unverified}.")
    if unvalidated and knowledge.index_bundles_rocm(index):
        notes.append(f"{index} rather than a newer index whose ROCm is TheRock's: TheRock only builds "
                     f"{', '.join(sorted(unvalidated))} ('Build Passing', not sanity-tested; ROCm/TheRock SUPPORTED_GPUS.md).")
    if not knowledge.index_bundles_rocm(index):
        notes.append(f"torch from {index} does not bundle ROCm: it pulls TheRock's ROCm as pip packages (rocm, rocm-sdk-*) "
                     "from the same index (pytorch/pytorch#191688); only the amdgpu kernel driver is needed from the system.")
    elif system and index != system:
        notes.append(f"The system ROCm is {f.rocm.value.version if f.rocm.value else '?'}; torch bundles its own ROCm "
                     f"({index}), which needs only the amdgpu kernel driver.")
    expected = sorted({overrides[g.gfx].target if g.gfx in overrides else (g.gfx or "") for g in targets} - {""})
    return f"{torch_short}+{index}", index, expected, env, notes


@dataclass(frozen=True)
class _Amd:
    source: str
    why: str
    torch_v: str
    index: str | None
    url: str | None
    find_links: str | None
    torch_req: str
    triton_req: str | None
    triton_exact: str | None
    expected: list[str]
    env: dict[str, str]
    notes: list[str]


def _amd_source(f: Facts, opts: Options, py: str) -> _Amd:
    """Which source serves every GPU, and why. auto: a pytorch.org index that carries them natively (an unused iGPU
    may be hidden) > TheRock, Release-Ready targets > pytorch.org with a same-family override > TheRock, build-only
    targets. --rocm X.Y means a pytorch.org index; --source names one source and gets it or a reason."""
    gpus = _gpus(f)
    want = opts.source if opts.source != "auto" or not opts.rocm else "pytorch"
    if opts.rocm and want != "pytorch":
        raise BadOption(f"--rocm names a download.pytorch.org index; it does not apply to --source {want}")

    def pytorch(allow_override: bool) -> _Amd:
        torch_v, index, expected, env, notes = _amd_choice(f, opts, py, allow_override)
        req, exact = triton_requirement(torch_v, "amd")
        carried = ", ".join(expected) or "the GPUs"
        why = (f"download.pytorch.org/whl/{index} has torch {torch_v.split('+')[0]} for Python {py} with code for {carried}"
               + (" (through an HSA override, see the notes)" if any(k.startswith("HSA_OVERRIDE") for k in env) else ""))
        return _Amd("pytorch", why, torch_v, index, knowledge.index_url(index), None, f"torch=={torch_v}", req, exact,
                    expected, env, notes)

    def therock(ready_only: bool, because: str = "") -> _Amd | None:
        c = sources.therock_choice(gpus, py, ready_only, opts.torch)
        if c is None:
            return None
        notes = list(c.notes)
        overrides = sorted(k for k in (f.env.value or {}) if k.startswith("HSA_OVERRIDE_GFX_VERSION")) if f.env.found else []
        if overrides:  # the runtime would look for the override's target, which the device extras do not install
            notes.append(f"Unset {', '.join(overrides)}: these wheels carry each GPU's own target, and an override makes "
                         "ROCm look for another one's code.")
        return _Amd("therock", because + c.why, c.torch_version, None, c.url, None, c.torch_req, c.triton_req, None,
                    list(c.expected_gfx), {}, notes)

    if want == "amd-repo":
        system = f.rocm.value.version if f.rocm.found and f.rocm.value else None
        try:
            c = sources.amd_repo_choice(system, py, opts.torch)
        except ValueError as exc:
            raise NoWheel(str(exc)) from None
        expected = sorted({g.gfx for g in gpus if g.gfx})
        return _Amd("amd-repo", c.why, c.torch_version, None, None, c.url, c.torch_req, c.triton_req, c.triton_req,
                    expected, {}, list(c.notes))
    if want == "therock":
        got = therock(False)
        if got is None:
            gfx = ", ".join(sorted({g.gfx or "unknown gfx" for g in gpus})) or "no AMD GPU found"
            raise NoWheel(f"TheRock's multi-arch wheels cannot serve this machine ({gfx}; Python {py}): every GPU needs a "
                          "known gfx that TheRock builds, Python 3.10-3.14, torch 2.11-2.14")
        return got
    if want == "pytorch":
        return pytorch(True)
    try:
        return pytorch(False)
    except NoWheel:
        pass
    native = {a for r in knowledge.torch_releases() for i in r.rocm_indexes for a in knowledge.index_arches(i, r.version_on(i)) or ()}
    missing = ", ".join(sorted({g.gfx for g in gpus if g.gfx and g.gfx not in native})) or "these GPUs together"
    got = therock(True, f"no download.pytorch.org wheel carries {missing} natively; ")
    if got:
        return got
    try:
        return pytorch(True)
    except NoWheel:
        got = therock(False, f"no download.pytorch.org wheel carries {missing}, even through an override; ")
        if got:
            return got
        raise


def _removals(f: Facts, plat: str, triton: str | None, family: list[str]) -> list[Step]:
    if not f.python.found or not f.python.value:
        return []
    env = f.python.value
    out = triton_removals(env, plat, triton)
    torch = env.dist("torch")
    if torch is not None:
        b = torch_build(f)
        want = {"amd": "rocm", "nvidia": "cuda", "cpu": "cpu"}[plat]
        if b != want:
            out.append(Step("torch", f"the installed torch {torch.version} is a {b} build; replaced by the {want} build"))
    for n in FAMILY:
        d = env.dist(n)
        if d is not None and n not in family and torch is not None and build_tag(d.local) != build_tag(torch.local):
            out.append(Step(n, f"{n} {d.version} is from another build than the torch being installed"))
    return out


