"""`check`: parse, diagnose (check.load_or_collect -> check.diagnose), render, exit."""

from __future__ import annotations

import json
from typing import Any

import click

from rocm_triton_doctor.cli._shared import (CONTEXT, ExitCode, Usage, fail, finish, output_option, python_option, spinner,
                                            split, usage_check)
from rocm_triton_doctor.cli._options import workload_options


@click.command("check", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the versioned JSON envelope (the API) instead of text.")
@click.option("--markdown", is_flag=True, help="Print Markdown, e.g. for a GitHub issue.")
@output_option("--save-snapshot", help="Also write everything the probes saw to FILE (re-diagnose it anywhere with "
               "--snapshot).")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Diagnose a saved snapshot instead of this machine (no GPU needed).")
@click.option("--from-text", "from_text", multiple=True, type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Diagnose text pasted from an issue (rocminfo, collect_env, pip list, ls -l /dev/kfd, errors...); "
              "'-' reads stdin. Repeatable.")
@click.option("--no-runtime", is_flag=True, help="Do not import torch in a subprocess (faster; fewer checks).")
@workload_options  # --root, --pid, --unit
@python_option("Interpreter whose environment to inspect (default: the one running the doctor).")
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
@click.pass_context
def command(ctx: click.Context, as_json: bool, markdown: bool, save_snapshot: str | None, snapshot_path: str | None,
            from_text: tuple[str, ...], root: str, workload: tuple[int | None, str | None], no_runtime: bool, python: str | None,
            only: tuple[str, ...], skip_ids: tuple[str, ...], list_checks: bool, strict: bool, redact: bool, verbose: bool,
            timeout: float, runtime_timeout: float) -> None:
    """Inspect this machine (or a saved snapshot) and say what is wrong for PyTorch + Triton.

    Never imports torch into the doctor itself: torch is probed in a subprocess with a timeout.

    \b
    Examples:
      rocm-triton-doctor check
      rocm-triton-doctor check --no-runtime --only gpus,overrides
      rocm-triton-doctor check --save-snapshot snap.json --redact
      rocm-triton-doctor check --snapshot snap.json --json
      rocm-triton-doctor check --from-text issue-paste.txt
      rocm-triton-doctor check --python ~/rocm-env/bin/python --strict
    """
    from rocm_triton_doctor import check as pipeline
    from rocm_triton_doctor.check import checks, snapshot
    from rocm_triton_doctor.check.redact import Redactor

    usage_check(ctx, not (as_json and markdown), "--json and --markdown are mutually exclusive")
    usage_check(ctx, not (from_text and snapshot_path), "--from-text and --snapshot are mutually exclusive")
    if list_checks:
        return _list_checks(as_json)
    only_ids, skip = split(only), split(skip_ids)
    both = sorted(set(only_ids) & set(skip))
    usage_check(ctx, not both, f"--only and --skip both name {', '.join(both)}")
    try:
        selected = checks.select(only_ids, skip)
    except ValueError as exc:
        raise Usage(str(exc), ctx) from None
    usage_check(ctx, bool(selected), "--only/--skip leave no check to run")
    try:
        snap, source = pipeline.load_or_collect(snapshot_path, root=root, python=python, runtime=not no_runtime, workload=workload,
                                                timeout=timeout, runtime_timeout=runtime_timeout, from_text=from_text,
                                                progress=None if (as_json or markdown) else _spinner)
    except snapshot.SnapshotError as exc:
        fail(str(exc), ExitCode.COULD_NOT_CHECK, as_json, "check")
    red = Redactor(snap, enabled=redact)
    if save_snapshot:
        try:
            snapshot.save(red.obj(snap), save_snapshot)
        except OSError as exc:
            fail(f"cannot write snapshot {save_snapshot}: {exc.strerror or exc}", ExitCode.COULD_NOT_CHECK, as_json,
                 "check")
    report = pipeline.diagnose(snap, selected, strict=strict, source=source)

    def human(con: Any) -> None:
        from rocm_triton_doctor.check.render import human as h

        h.render(report, con, verbose=verbose, redactor=red)
        if save_snapshot:
            click.echo(f"snapshot written to {save_snapshot}", err=True)

    md = None
    if markdown:
        from rocm_triton_doctor.check.render import markdown as m

        md = m.render(report, verbose=verbose, redactor=red)
    finish(report.to_result(), as_json=as_json, markdown=md, human=human, redact=red.obj)


def _spinner(collector: Any) -> dict[str, Any]:
    with spinner(True, "probing this machine…") as status:
        if status is not None:
            collector.progress = lambda msg: status.update(msg + "…")
        return collector.collect()  # type: ignore[no-any-return]


def _list_checks(as_json: bool) -> None:
    from rocm_triton_doctor.check.checks import REGISTRY, SETS

    if as_json:
        click.echo(json.dumps([{"id": c.id, "group": c.group, "what": c.what, "why": c.why, "fix": c.fix,
                                "sets": [n for n, ids in SETS.items() if c.id in ids]} for c in REGISTRY], indent=2))
        return
    width = max(len(c.id) for c in REGISTRY)
    for c in REGISTRY:
        click.echo(f"{c.id.ljust(width)}  [{c.group}] {c.what}")
    for name, ids in SETS.items():
        click.echo(f"set {name}: {', '.join(ids)}")
