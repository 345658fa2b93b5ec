"""The fault matrix (issue #18): rows are faults, columns are commands. docs/reliability.md lists it with its result.

These are the cells the core code holds: the truth about the stack, crashed tools, snapshots, redaction, caches,
fleet inputs, and the surroundings the CLI already copes with. The CLI-contract cells (non-UTF-8 locales, exit codes
for interrupts and closed pipes, output paths that are devices/FIFOs/symlinks/directories, option validation) are
in test_cli_contract.py.
"""

from __future__ import annotations

from tests.faults.engine import WRONG_NESTED, WRONG_SECTIONS, Case, Fixtures

OK = frozenset({0})
OK_OR_PROBLEMS = frozenset({0, 1})  # a live machine's verdict depends on the machine; the contract is "not 2/3/4"
PROBLEMS = frozenset({1})
CANNOT = frozenset({3})

# The command line each column runs when only the surroundings are hostile: small and fast, on any machine.
PLAIN: dict[str, tuple[tuple[str, ...], frozenset[int]]] = {
    "check": (("check", "--no-runtime"), OK_OR_PROBLEMS),
    "install": (("install", "--dry-run"), OK),
    "smoke": (("smoke", "--device", "cpu", "--only", "add_mul"), OK),
    "report": (("report", "--no-runtime", "--no-smoke"), OK_OR_PROBLEMS),
    "fleet": (("fleet", "{fleet}"), OK_OR_PROBLEMS),
}

SURROUNDINGS: dict[str, dict[str, object]] = {
    "locale-C": {"env": {"LANG": "C", "LC_ALL": "C"}},
    "TERM-dumb": {"env": {"TERM": "dumb"}},
    "NO_COLOR": {"env": {"NO_COLOR": "1"}},
    "COLUMNS-40": {"env": {"COLUMNS": "40"}},
    "no-HOME": {"env": {"HOME": None}},
    "read-only-cwd": {"cwd": "{readonly}"},
}


def surroundings() -> list[Case]:
    out = []
    for fault, how in SURROUNDINGS.items():
        for cmd, (args, rc) in PLAIN.items():
            out.append(Case(fault, cmd, args, rc, env=how.get("env", {}), cwd=str(how.get("cwd", "{work}")),  # type: ignore[arg-type]
                            timeout=150 if cmd == "smoke" else 90))
    return out


def broken_stacks() -> list[Case]:
    """Fake torch / Triton packages that raise, segfault or hang at import, in a target interpreter (--python)."""
    out = []
    says = {"raise": "undefined symbol", "segv": "killed by SIGSEGV", "hang": "hung for"}
    for pkg in ("torch", "triton"):
        for how, text in says.items():
            py = f"{{py_{pkg}_{how}}}"
            # A hang after a real torch import must not be mistaken for torch's: Triton gets a longer limit.
            limit = "5" if pkg == "torch" else "20"
            fault = f"{pkg}-import-{how}"
            out.append(Case(fault, "check", ("check", "--python", py, "--runtime-timeout", limit), PROBLEMS,
                            has=(f"import {pkg}", text),
                            lacks=("HEALTHY",) + (("torch 2.13.0+cpu runs on the CPU",) if pkg == "torch" else ())))
            out.append(Case(fault, "smoke", ("smoke", "--device", "cpu", "--python", py), CANNOT,
                            env={"RTD_IMPORT_TIMEOUT": limit}, has=(f"cannot import {pkg}", text), one_line_error=True))
            # Defect 19: report had no --runtime-timeout, so a hung torch took 120 s with no output.
            out.append(Case(fault, "report", ("report", "--python", py, "--no-smoke", "--runtime-timeout", limit), PROBLEMS,
                            has=(f"import {pkg}", text), lacks=("HEALTHY",), timeout=90))
            out.append(Case(fault, "install", ("install", "--dry-run", "--python", py), OK))
    return out


def broken_tools() -> list[Case]:
    """rocminfo, rocm-smi, amd-smi, rocm_agent_enumerator on PATH that print garbage, hang or crash."""
    out = []
    for how, text in (("garbage", ""), ("hang", "did not answer in time"), ("crash", "crashed (killed by SIGSEGV)")):
        env = {"PATH": f"{{bin_{how}}}"}
        has = (text,) if text else ()
        out.append(Case(f"tools-{how}", "check", ("check", "--no-runtime", "--timeout", "3"), OK_OR_PROBLEMS, env=env,
                        has=has, lacks=("tool(s) answered: rocminfo",) if how != "garbage" else ()))
        out.append(Case(f"tools-{how}", "report", ("report", "--no-runtime", "--no-smoke"), OK_OR_PROBLEMS, env=env,
                        has=has))
        out.append(Case(f"tools-{how}", "install", ("install", "--dry-run"), frozenset({0, 1, 3}), env=env))
    return out


def snapshots() -> list[Case]:
    out = []
    for name in WRONG_SECTIONS:
        snap = f"{{snap_wrong_{name}}}"
        for cmd, args in (("check", ("check", "--snapshot", snap)),
                          ("report", ("report", "--snapshot", snap, "--no-smoke")),
                          ("install", ("install", "--snapshot", snap, "--dry-run"))):
            out.append(Case(f"snapshot-{name}-wrong-type", cmd, args, CANNOT, has=(f"section '{name}'",),
                            one_line_error=True))
    for name in WRONG_NESTED:
        snap = f"{{snap_nested_{name}}}"
        # Every nested case through check; report and install share its loader, so one nested case each suffices.
        for cmd, args in (("check", ("check", "--snapshot", snap)),
                          *((("report", ("report", "--snapshot", snap, "--no-smoke")),
                             ("install", ("install", "--snapshot", snap, "--dry-run"))) if name == "python-executable" else ())):
            out.append(Case(f"snapshot-nested-{name}", cmd, args, CANNOT, has=("wrong types inside the snapshot",),
                            one_line_error=True, lacks=("is not installed in 5",)))
    out.append(Case("snapshot-schema-only", "check", ("check", "--snapshot", "{snap_schema_only}"), CANNOT,
                    lacks=("HEALTHY",)))
    out.append(Case("snapshot-schema-only", "report", ("report", "--snapshot", "{snap_schema_only}", "--no-smoke"),
                    CANNOT, lacks=("HEALTHY",)))
    return out


def secrets() -> list[Case]:
    lacks = Fixtures.SECRET_VALUES
    snap = "{snap_secrets}"
    return [
        Case("snapshot-with-secrets", "report", ("report", "--snapshot", snap, "--no-smoke"), OK_OR_PROBLEMS,
             lacks=lacks, has=("<redacted>",)),
        Case("snapshot-with-secrets", "check", ("check", "--snapshot", snap, "--redact", "--json"), OK_OR_PROBLEMS,
             lacks=lacks),
        Case("snapshot-with-secrets-saved", "check", ("check", "--snapshot", snap, "--redact", "--save-snapshot",
                                                      "{work}/redacted.json"), OK_OR_PROBLEMS,
             files_lack=tuple(("{work}/redacted.json", s) for s in lacks)),
        Case("snapshot-with-secrets-saved", "report", ("report", "--snapshot", snap, "--no-smoke", "-o",
                                                       "{work}/report.md"), OK_OR_PROBLEMS,
             files_lack=tuple(("{work}/report.md", s) for s in lacks)),
    ]


def caches_and_fleet() -> list[Case]:
    return [
        Case("corrupt-smoke-cache", "smoke", ("smoke", "--device", "cpu", "--only", "add_mul"), OK,
             env={"RTD_CACHE_DIR": "{corrupt_cache_smoke}"}, timeout=150),
        Case("corrupt-smoke-file", "report", ("report", "--snapshot", "{scenario_cpu}", "--smoke", "{corrupt_smoke}"),
             CANNOT, one_line_error=True),
        Case("doctor-is-no-triton", "fleet", ("fleet", "{fleet}", "--strict"), OK, lacks=("rocm-triton-doctor 0.1",)),
    ]


def core() -> list[Case]:
    return [*surroundings(), *broken_stacks(), *broken_tools(), *snapshots(), *secrets(), *caches_and_fleet()]
