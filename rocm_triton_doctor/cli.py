"""Command line: parse options, call one function, render, exit (DESIGN §8: keep this thin)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from rocm_triton_doctor import __version__
from rocm_triton_doctor.exitcodes import ExitCode

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


def _console(stderr: bool = False) -> Any:
    from rich.console import Console  # only human output needs rich: keep --json start-up lean

    no_color = bool(os.environ.get("NO_COLOR"))
    console = Console(stderr=stderr, no_color=no_color, highlight=False, soft_wrap=True)
    if not console.is_terminal:  # piped or captured: do not squeeze tables into 80 columns
        console = Console(stderr=stderr, no_color=no_color, highlight=False, soft_wrap=True, width=200)
    return console


def _split(values: Sequence[str]) -> list[str]:
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def _fail(message: str, code: ExitCode, as_json: bool, command: str) -> None:
    """One clear line (and the same exit code in JSON), never a traceback."""
    if as_json:
        click.echo(json.dumps({"schema": f"rocm-triton-doctor/{command}/1", "command": command,
                               "tool_version": __version__, "status": "could-not-check" if code == 3 else "error",
                               "exit_code": int(code), "error": message}, indent=2))
    else:
        click.echo(f"rocm-triton-doctor {command}: {message}", err=True)
    sys.exit(int(code))


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="rocm-triton-doctor")
def cli() -> None:
    """Get PyTorch + Triton working on AMD GPUs under ROCm, and prove it.

    \b
    After a fresh setup:
      check    what is wrong on THIS machine, and the command that fixes it
      install  the matching torch + Triton wheels, safely, verified
      smoke    fused Triton kernels: correct? how fast vs torch and the hardware?

    Exit codes (every command): 0 healthy, 1 problems found, 2 usage error,
    3 could not check, 4 the doctor crashed.
    """


@cli.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the versioned JSON envelope (the API) instead of text.")
@click.option("--markdown", is_flag=True, help="Print Markdown, e.g. for a GitHub issue.")
@click.option("--save-snapshot", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="Also write everything the probes saw to FILE (re-diagnose it anywhere with --snapshot).")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Diagnose a saved snapshot instead of this machine (no GPU needed).")
@click.option("--root", type=click.Path(exists=True, file_okay=False), default="/", show_default=True,
              help="Read /sys, /dev, /etc, /opt under DIR instead of / (testing, chroots, mounted images).")
@click.option("--no-runtime", is_flag=True, help="Do not import torch in a subprocess (faster; fewer checks).")
@click.option("--python", "python", type=click.Path(dir_okay=False), metavar="PATH",
              help="Interpreter whose environment to inspect (default: the one running the doctor).")
@click.option("--only", multiple=True, metavar="ID", help="Run only these check ids or groups (repeat or comma-separate).")
@click.option("--skip", "skip_ids", multiple=True, metavar="ID", help="Skip these check ids or groups.")
@click.option("--list-checks", is_flag=True, help="List every check id with what it verifies, then exit.")
@click.option("--strict", is_flag=True, help="Warnings make the exit code 1.")
@click.option("--redact", is_flag=True, help="Hide user and host names, home paths, serial numbers and UUIDs.")
@click.option("-v", "--verbose", is_flag=True, help="Show passing details and not-applicable checks too.")
@click.option("--timeout", default=10.0, show_default=True, type=click.FloatRange(0.1, 600),
              help="Seconds to wait for each external tool (rocminfo, amd-smi, nvidia-smi).")
@click.option("--runtime-timeout", default=120.0, show_default=True, type=click.FloatRange(1, 3600),
              help="Seconds to wait for the torch runtime probe.")
def check(as_json: bool, markdown: bool, save_snapshot: str | None, snapshot_path: str | None, root: str,
          no_runtime: bool, python: str | None, only: tuple[str, ...], skip_ids: tuple[str, ...], list_checks: bool,
          strict: bool, redact: bool, verbose: bool, timeout: float, runtime_timeout: float) -> None:
    """Inspect this machine (or a saved snapshot) and say what is wrong for PyTorch + Triton.

    Never imports torch into the doctor itself: torch is probed in a subprocess with a timeout.

    \b
    Examples:
      rocm-triton-doctor check
      rocm-triton-doctor check --no-runtime --only gpus,overrides
      rocm-triton-doctor check --save-snapshot snap.json --redact
      rocm-triton-doctor check --snapshot snap.json --json
      rocm-triton-doctor check --python ~/rocm-env/bin/python --strict
    """
    from rocm_triton_doctor.check import checks, snapshot

    if as_json and markdown:
        raise click.UsageError("--json and --markdown are mutually exclusive")
    if list_checks:
        _list_checks(as_json)
        return
    try:
        selected = checks.select(_split(only), _split(skip_ids))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    collector = None
    if not snapshot_path:
        from rocm_triton_doctor.check.probes.collect import Collector

        # Start the torch subprocess first: it is the slow part and overlaps everything below (DESIGN §3).
        collector = Collector(root=root, python=python, runtime=not no_runtime, timeout=timeout,
                              runtime_timeout=runtime_timeout)
        collector.start()
    from rocm_triton_doctor.check.redact import Redactor
    from rocm_triton_doctor.check import diagnose

    if snapshot_path:
        try:
            snap = snapshot.load(snapshot_path)
        except snapshot.SnapshotError as exc:
            _fail(str(exc), ExitCode.COULD_NOT_CHECK, as_json, "check")
        source = snapshot_path
    else:
        assert collector is not None
        snap = _collect(collector, quiet=as_json or markdown)
        source = "this machine" if root == "/" else f"root {root}"
    red = Redactor(snap, enabled=redact)
    if save_snapshot:
        try:
            snapshot.save(red.obj(snap), save_snapshot)
        except OSError as exc:
            _fail(f"cannot write snapshot {save_snapshot}: {exc.strerror or exc}", ExitCode.COULD_NOT_CHECK, as_json,
                  "check")
    report = diagnose(snap, selected, strict=strict, source=source)
    if as_json:
        click.echo(json.dumps(red.obj(report.to_dict()), indent=2))
    elif markdown:
        from rocm_triton_doctor.check.render import markdown as md

        click.echo(md.render(report, verbose=verbose, redactor=red))
    else:
        from rocm_triton_doctor.check.render import human

        human.render(report, _console(), verbose=verbose, redactor=red)
        if save_snapshot:
            click.echo(f"snapshot written to {save_snapshot}", err=True)
    sys.exit(int(report.verdict.exit_code))


@cli.command(context_settings=CONTEXT)
@click.option("--device", type=click.Choice(["auto", "cpu", "gpu", "cuda"]), default="auto", show_default=True,
              help="gpu/cuda: the GPU torch sees (ROCm GPUs are 'cuda' devices in torch); cpu: Triton interpreter.")
@click.option("--preset", type=click.Choice(["quick", "seed", "full", "bench"]), default="quick", show_default=True,
              help="quick: a minute on one GPU; seed: exactly the published seed shapes; full: large shapes; "
              "bench: the performance targets' cases (>= 256 MiB memory-bound, GEMM 4096^3/8192^3, attention S=4096).")
@click.option("--only", multiple=True, metavar="KERNEL", help="Run only these kernels (repeat or comma-separate).")
@click.option("--compile", "with_compile", is_flag=True, help="Also time torch.compile (default mode) of each baseline.")
@click.option("--json", "as_json", is_flag=True, help="Print the versioned JSON result instead of the table.")
@click.option("--junit", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="Also write JUnit XML (one testcase per case) for CI systems.")
@click.option("--plot", type=click.Path(dir_okay=False, writable=True), metavar="FILE.png",
              help="Also plot speed-up over torch and %% of the device ceiling (needs the 'plot' extra).")
@click.option("--save", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="Also write the JSON result to FILE (while printing the table).")
@click.option("--compile-only", is_flag=True, help="Compile every kernel for --arch targets; no GPU needed.")
@click.option("--arch", metavar="LIST", help="Targets for --compile-only: e.g. gfx942,gfx1100,sm_90; 'all' = every "
              "target the knowledge base lists. Default: the GPUs `check` finds.")
@click.option("--seed", default=0, show_default=True, help="Base seed for the random inputs.")
@click.option("--python", "python", type=click.Path(dir_okay=False, exists=True), metavar="PATH",
              help="Run the suite with another interpreter's torch and Triton (e.g. the venv `install` made).")
@click.option("--distributed", is_flag=True, help="Run on every rank of a torchrun/srun job, check collectives, and "
              "print one table on rank 0.")
@click.option("--rank-timeout", default=300.0, show_default=True, type=click.FloatRange(5, 86400),
              help="With --distributed: seconds rank 0 waits for each rank (and the collectives' timeout).")
@click.option("--collective-max-mib", default=256.0, show_default=True, type=click.FloatRange(0.001, 65536),
              help="With --distributed: largest collective message, MiB (sizes go from 1 KiB up by 8x).")
@click.option("--fail-rank", type=int, hidden=True, help="Test hook: this rank adds a wrong-result case.")
@click.option("--hang-rank", type=int, hidden=True, help="Test hook: this rank does not answer in time.")
@click.option("--broken", type=click.Choice(["wrong", "crash"]), hidden=True,
              help="Add a deliberately broken case (tests the reporting path).")
def smoke(device: str, preset: str, only: tuple[str, ...], with_compile: bool, as_json: bool, junit: str | None,
          plot: str | None, save: str | None, compile_only: bool, arch: str | None, seed: int,
          python: str | None, distributed: bool, rank_timeout: float, collective_max_mib: float,
          fail_rank: int | None, hang_rank: int | None, broken: str | None) -> None:
    """Run fused Triton kernels: correct on this device? how fast against torch and the hardware's own ceilings?

    Kernels: GEMM (+bias, ReLU, GELU, dropout epilogues), fused add-multiply, bias+GELU+dropout+residual, RMSNorm,
    LayerNorm, softmax, SwiGLU, attention forward. Each result is checked against an fp32/fp64 torch reference.

    \b
    Examples:
      rocm-triton-doctor smoke                         # quick preset on the GPU (or the CPU interpreter)
      rocm-triton-doctor smoke --device cpu --json     # correctness only, in Triton's interpreter
      rocm-triton-doctor smoke --preset seed --compile # the published seed shapes, vs eager and torch.compile
      rocm-triton-doctor smoke --compile-only --arch gfx942,gfx1100,sm_90
    """
    if python and os.path.abspath(python) != os.path.abspath(sys.executable):
        _reexec_in(python)
    from rocm_triton_doctor.smoke import runner

    device = "cuda" if device == "gpu" else device
    if distributed:
        _smoke_distributed(device, preset, tuple(_split(only)), as_json, save, rank_timeout, collective_max_mib,
                           fail_rank, hang_rank)
        return
    if compile_only:
        _smoke_compile_only(arch, as_json)
        return
    if arch:
        raise click.UsageError("--arch is only meaningful with --compile-only")
    err = _console(stderr=True)
    progress = None
    status = None
    if not as_json and err.is_terminal:
        status = err.status("starting…")
        status.start()
        progress = lambda msg, i, n: status.update(f"[{i + 1}/{n}] {msg}")  # noqa: E731
    try:
        report = runner.run_smoke(device, preset, tuple(_split(only)), with_compile, seed, progress, broken)
    except runner.SmokeCannotStart as exc:
        _fail(str(exc), ExitCode.COULD_NOT_CHECK, as_json, "smoke")
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        if status is not None:
            status.stop()
    from rocm_triton_doctor.smoke import render

    runner.save_last(report)
    try:
        if save:
            with open(save, "w", encoding="utf-8") as fh:
                json.dump(report.to_dict(), fh, indent=1)
        if junit:
            render.junit(report, junit)
        if plot:
            render.plot(report, plot)
    except (OSError, ValueError) as exc:
        _fail(f"cannot write output: {exc}", ExitCode.COULD_NOT_CHECK, as_json, "smoke")
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        render.table(report, _console())
    sys.exit(report.exit_code)


@cli.command(context_settings=CONTEXT)
@click.option("--torch", "torch_version", metavar="VERSION", help="Install this torch release (e.g. 2.9.1).")
@click.option("--rocm", metavar="X.Y", help="Use PyTorch's rocmX.Y index.")
@click.option("--index-url", metavar="URL", help="A mirror of the chosen index (https, file, or http on loopback).")
@click.option("--find-links", type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="A local wheelhouse to install from (with --offline: nothing leaves the machine).")
@click.option("--offline", is_flag=True, help="Use only --find-links; never contact an index.")
@click.option("--venv", metavar="PATH", help="Install into a fresh virtual environment at PATH (recommended; the "
              "default advice when this Python is externally managed).")
@click.option("--python", type=click.Path(dir_okay=False), metavar="PATH",
              help="The interpreter to install for (or to create --venv with). Default: the one running the doctor.")
@click.option("--with", "with_", multiple=True, metavar="PKG", help="Also install torchvision / torchaudio (same "
              "build and index); repeat or comma-separate.")
@click.option("--installer", type=click.Choice(["pip", "uv"]), default="pip", show_default=True)
@click.option("--dry-run", is_flag=True, help="Show the plan; change nothing.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before changing anything.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable plan/result.")
@click.option("--lock", "lock_path", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="After a verified install, write the exact versions, index and the machine it was verified on.")
@click.option("--from-lock", type=click.Path(dir_okay=False), metavar="FILE",
              help="Reproduce a locked install; refuses when this machine differs in a way that matters.")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Plan for the machine a saved snapshot describes (needs --dry-run).")
def install(torch_version: str | None, rocm: str | None, index_url: str | None, find_links: str | None, offline: bool,
            venv: str | None, python: str | None, with_: tuple[str, ...], installer: str, dry_run: bool, yes: bool,
            as_json: bool, lock_path: str | None, from_lock: str | None, snapshot_path: str | None) -> None:
    """Install the torch + Triton wheels that match this machine, safely, then verify them.

    Everything is downloaded before anything is removed; a failed install restores the environment exactly
    (or removes a half-made --venv). Never uses sudo, never edits shell rc files.

    \b
    Examples:
      rocm-triton-doctor install --venv ~/rocm-env            # the recommended path
      rocm-triton-doctor install --dry-run --json             # just the plan
      rocm-triton-doctor install --torch 2.9.1 --with torchvision --yes
      rocm-triton-doctor install --find-links ./wheels --offline --venv ./env --yes
      rocm-triton-doctor install --venv ./env --yes --lock stack.lock
      rocm-triton-doctor install --venv ./env2 --from-lock stack.lock --yes
    """
    from rocm_triton_doctor.install import command
    from rocm_triton_doctor.install.plan import BadOption, Options

    opts = Options(torch=torch_version, rocm=rocm, index_url=index_url, find_links=find_links, offline=offline,
                   venv=venv, python=python, with_=tuple(_split(with_)), installer=installer)
    try:
        code = command.run(opts, dry_run=dry_run, yes=yes, as_json=as_json, lock_path=lock_path, from_lock=from_lock,
                           snapshot_path=snapshot_path, console=_console(), err=_console(stderr=True),
                           confirm=lambda q: click.confirm(q, default=False))
    except (BadOption, command.UsageProblem) as exc:
        raise click.UsageError(str(exc)) from None
    except Exception as exc:  # SnapshotError etc.: one line, exit 3
        from rocm_triton_doctor.check.snapshot import SnapshotError

        if isinstance(exc, SnapshotError):
            _fail(str(exc), ExitCode.COULD_NOT_CHECK, as_json, "install")
        raise
    sys.exit(code)


@cli.command(context_settings=CONTEXT)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), metavar="FILE",
              help="Write the Markdown to FILE instead of printing it.")
@click.option("--no-redact", is_flag=True, help="Keep user and host names, home paths, serials and UUIDs.")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Report on a saved snapshot instead of this machine.")
@click.option("--smoke", "smoke_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="A saved `smoke --save` result to include (default: the last smoke run on this machine).")
@click.option("--no-smoke", is_flag=True, help="Do not include a smoke result.")
@click.option("--no-runtime", is_flag=True, help="Do not import torch in a subprocess.")
@click.option("--python", "python", type=click.Path(dir_okay=False), metavar="PATH",
              help="Interpreter whose environment to inspect.")
def report(output: str | None, no_redact: bool, snapshot_path: str | None, smoke_path: str | None, no_smoke: bool,
           no_runtime: bool, python: str | None) -> None:
    """Write one paste-ready Markdown report for a GitHub issue (PyTorch, ROCm, Triton, vLLM, ComfyUI, ...).

    Verdict and findings, key facts, the last smoke summary, and the snapshot in a collapsed JSON block.
    Redacted by default. Works on exactly the broken machines: torch missing, ROCm broken, no GPU.
    The exit code is `check`'s (0 healthy, 1 problems found).

    \b
    Examples:
      rocm-triton-doctor report -o report.md
      rocm-triton-doctor report --snapshot snap.json --no-smoke
    """
    import datetime as dt

    from rocm_triton_doctor.check import snapshot
    from rocm_triton_doctor.check.render import issue as issue_report
    from rocm_triton_doctor.check.redact import Redactor
    from rocm_triton_doctor.check import diagnose
    from rocm_triton_doctor.smoke.runner import last_result_path

    if snapshot_path:
        try:
            snap = snapshot.load(snapshot_path)
        except snapshot.SnapshotError as exc:
            _fail(str(exc), ExitCode.COULD_NOT_CHECK, False, "report")
    else:
        from rocm_triton_doctor.check.probes.collect import Collector

        snap = _collect(Collector(python=python, runtime=not no_runtime), quiet=True)
    smoke_data = None
    if not no_smoke:
        path = smoke_path or last_result_path()
        try:
            with open(path, encoding="utf-8") as fh:
                smoke_data = json.load(fh)
        except FileNotFoundError:
            if smoke_path:
                _fail(f"smoke result not found: {smoke_path}", ExitCode.COULD_NOT_CHECK, False, "report")
        except (OSError, ValueError) as exc:
            _fail(f"cannot read smoke result {path}: {exc}", ExitCode.COULD_NOT_CHECK, False, "report")
    red = Redactor(snap, enabled=not no_redact)
    check_report = diagnose(snap, source=snapshot_path or "this machine")
    check_report = check_report.__class__(red.obj(snap), check_report.facts, check_report.findings,
                                          check_report.verdict, check_report.source)
    created = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = issue_report.render(check_report, smoke_data, red, created)
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror or exc}", ExitCode.COULD_NOT_CHECK, False, "report")
        click.echo(f"report written to {output} ({len(text.splitlines())} lines)", err=True)
    else:
        click.echo(text)
    sys.exit(int(check_report.verdict.exit_code))


@cli.command(context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable drift report.")
@click.option("--slow", "slow_ratio", default=0.8, show_default=True, type=click.FloatRange(0.01, 1.0),
              help="A node is a slow outlier in a smoke case below this fraction of the fleet median.")
@click.option("--strict", is_flag=True, help="Drift and slow outliers also make the exit code 1.")
def fleet(paths: tuple[str, ...], as_json: bool, slow_ratio: float, strict: bool) -> None:
    """Compare many machines: which drifted (ROCm, driver, kernel, torch, Triton, gfx), which fail, which are slow.

    PATHS are `check --json`, `smoke --json` and `smoke --distributed --json` files, or directories of them.
    Exit code by the worst node: 1 when a node fails (with --strict also on drift).

    \b
    Example:
      for h in $(cat hosts); do ssh $h rocm-triton-doctor check --json > results/$h.json; done
      rocm-triton-doctor fleet results/
    """
    from rocm_triton_doctor import fleet as fleetmod

    try:
        nodes = fleetmod.collect(list(paths), slow_ratio)
    except fleetmod.FleetError as exc:
        _fail(str(exc), ExitCode.COULD_NOT_CHECK, as_json, "fleet")
    code = fleetmod.exit_code(nodes, strict)
    if as_json:
        click.echo(json.dumps(fleetmod.to_dict(nodes, strict), indent=2))
    else:
        fleetmod.table(nodes, _console())
    sys.exit(code)


def _reexec_in(python: str) -> None:
    """Run this same command in another interpreter. The doctor and its pure-Python dependencies are appended to the
    END of that interpreter's sys.path, so its own torch/Triton (and anything else it has) always win."""
    import importlib

    paths = []
    for name in ("rocm_triton_doctor", "click", "rich", "packaging", "markdown_it", "mdurl", "pygments"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        paths.append(os.path.dirname(os.path.dirname(os.path.abspath(str(mod.__file__)))))
    args, skip = [], False
    for a in sys.argv[1:]:
        if skip:
            skip = False
            continue
        if a == "--python":
            skip = True
            continue
        if a.startswith("--python="):
            continue
        args.append(a)
    code = (f"import sys; sys.path.extend({list(dict.fromkeys(paths))!r}); "
            "from rocm_triton_doctor.cli import main; main()")
    sys.stdout.flush()
    os.execv(python, [python, "-c", code, *args])


def _smoke_distributed(device: str, preset: str, only: tuple[str, ...], as_json: bool, save: str | None,
                       rank_timeout: float, max_mib: float, fail_rank: int | None, hang_rank: int | None) -> None:
    from rocm_triton_doctor.smoke import distributed, runner

    try:
        result = distributed.run(device, preset, only, rank_timeout, max_mib, fail_rank, hang_rank)
    except runner.SmokeCannotStart as exc:
        _fail(str(exc), ExitCode.COULD_NOT_CHECK, as_json, "smoke")
    except RuntimeError as exc:
        _fail(str(exc), ExitCode.COULD_NOT_CHECK, as_json, "smoke")
    if result is None:  # not rank 0: rank 0 reports for everyone
        sys.exit(0)
    if save:
        with open(save, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        distributed.table(result, _console())
    sys.stdout.flush()
    os._exit(int(result["exit_code"]))  # do not wait for a hung rank's collectives to time out on teardown


def _smoke_compile_only(arch: str | None, as_json: bool) -> None:
    from rocm_triton_doctor.smoke import aot, render

    targets = _aot_targets(arch)
    try:
        import triton
    except Exception as exc:  # noqa: BLE001
        _fail(f"cannot import triton ({type(exc).__name__}: {exc}); run `rocm-triton-doctor check`",
              ExitCode.COULD_NOT_CHECK, as_json, "smoke")
    results = aot.audit(targets)
    findings = aot.findings(results, triton.__version__)
    code = 1 if any(f["severity"] == "fail" for f in findings) else 0
    if as_json:
        click.echo(json.dumps({"schema": "rocm-triton-doctor/smoke-aot/1", "command": "smoke --compile-only",
                               "triton": triton.__version__, "targets": targets, "exit_code": code,
                               "findings": findings, "results": [r.to_dict() for r in results]}, indent=2))
    else:
        console = _console()
        render.aot_table(results, console)
        for f in findings:
            mark = {"fail": "[bold red]✗[/]", "warn": "[yellow]![/]", "ok": "[green]✓[/]"}[f["severity"]]
            console.print(f"{mark} {f['title']}")
    sys.exit(code)


def _aot_targets(arch: str | None) -> list[str]:
    from rocm_triton_doctor import knowledge

    if arch == "all":
        return list(knowledge.all_gfx()) + ["sm_80", "sm_90"]
    if arch:
        from rocm_triton_doctor.kernels.policy import target_from_name

        names = _split([arch])
        for n in names:
            try:
                target_from_name(n)
            except ValueError as exc:
                raise click.UsageError(str(exc)) from None
        return names
    # Default: the GPUs `check` finds here (static probes only, no torch import).
    from rocm_triton_doctor.check.facts import build_facts
    from rocm_triton_doctor.check.probes.collect import Collector

    facts = build_facts(Collector(runtime=False).collect())
    found = sorted({g.gfx for g in (facts.gpus.value or ()) if g.gfx}) if facts.gpus.found else []
    if facts.nvidia.found and facts.nvidia.value:
        found += sorted({"sm_" + g.compute_cap.replace(".", "") for g in facts.nvidia.value.gpus if g.compute_cap})
    if not found:
        raise click.UsageError("no GPU found to compile for: name targets with --arch (e.g. gfx942,gfx1100) or --arch all")
    return found


def _collect(collector: Any, quiet: bool) -> dict[str, Any]:
    err = _console(stderr=True)
    if quiet or not err.is_terminal:
        return collector.collect()  # type: ignore[no-any-return]
    with err.status("probing this machine…") as status:
        collector.progress = lambda msg: status.update(msg + "…")
        return collector.collect()  # type: ignore[no-any-return]


def _list_checks(as_json: bool) -> None:
    from rocm_triton_doctor.check.checks import REGISTRY

    if as_json:
        click.echo(json.dumps([{"id": c.id, "group": c.group, "what": c.what, "why": c.why, "fix": c.fix}
                               for c in REGISTRY], indent=2))
        return
    width = max(len(c.id) for c in REGISTRY)
    for c in REGISTRY:
        click.echo(f"{c.id.ljust(width)}  [{c.group}] {c.what}")


def main(argv: Sequence[str] | None = None) -> None:
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="rocm-triton-doctor", standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("rocm-triton-doctor: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        if os.environ.get("RTD_DEBUG"):
            raise
        click.echo(f"rocm-triton-doctor: internal error: {type(exc).__name__}: {exc} "
                   "(set RTD_DEBUG=1 for a traceback; please report it)", err=True)
        sys.exit(int(ExitCode.CRASHED))
