"""`report`: parse, build the issue report (check/render/issue.build), write or print it, exit with check's code."""

from __future__ import annotations

from typing import Any

import click

from rocm_triton_doctor.cli._shared import CONTEXT, ExitCode, fail, finish, output_option, python_option


@click.command("report", context_settings=CONTEXT)
@output_option("--output", "-o", help="Write the Markdown to FILE instead of printing it.")
@click.option("--no-redact", is_flag=True, help="Keep user and host names, home paths, serials and UUIDs.")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Report on a saved snapshot instead of this machine.")
@click.option("--from-text", "from_text", multiple=True, type=click.Path(dir_okay=False, allow_dash=True), metavar="FILE",
              help="Report on text pasted from an issue instead of this machine ('-' reads stdin).")
@click.option("--smoke", "smoke_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="A saved `smoke --save` result to include (default: the last smoke run on this machine).")
@click.option("--no-smoke", is_flag=True, help="Do not include a smoke result.")
@click.option("--no-runtime", is_flag=True, help="Do not import torch in a subprocess.")
@click.option("--timeout", default=10.0, show_default=True, type=click.FloatRange(0.1, 600),
              help="Seconds each external tool may run.")
@click.option("--runtime-timeout", default=120.0, show_default=True, type=click.FloatRange(1, 3600),
              help="Seconds the torch/Triton import subprocess may run (a hung import is reported, not waited on).")
@python_option("Interpreter whose environment to inspect.")
def command(output: str | None, no_redact: bool, snapshot_path: str | None,
            from_text: tuple[str, ...], smoke_path: str | None, no_smoke: bool,
            no_runtime: bool, timeout: float, runtime_timeout: float, python: str | None) -> None:
    """Write one paste-ready Markdown report for a GitHub issue (PyTorch, ROCm, Triton, vLLM, ComfyUI, ...).

    Verdict and findings, key facts, the last smoke summary, and the snapshot in a collapsed JSON block.
    Redacted by default. Works on exactly the broken machines: torch missing, ROCm broken, no GPU.
    The exit code is `check`'s (0 healthy, 1 problems found).

    \b
    Examples:
      rocm-triton-doctor report -o report.md
      rocm-triton-doctor report --snapshot snap.json --no-smoke
      rocm-triton-doctor report --from-text issue-paste.txt --no-smoke
    """
    from rocm_triton_doctor import check as pipeline
    from rocm_triton_doctor import outputs
    from rocm_triton_doctor.check import snapshot
    from rocm_triton_doctor.check.render import issue
    from rocm_triton_doctor.smoke.model_render import last_model_path
    from rocm_triton_doctor.smoke.report import last_result_path

    try:
        snap, source = pipeline.load_or_collect(snapshot_path, python=python, runtime=not no_runtime, from_text=from_text,
                                                timeout=timeout, runtime_timeout=runtime_timeout)
        smoke = None if no_smoke else _read(issue, smoke_path or last_result_path(), bool(smoke_path))
        model = None if no_smoke or smoke_path else _read(issue, last_model_path(), False)  # smoke --model
    except (snapshot.SnapshotError, issue.SmokeFileError) as exc:
        fail(str(exc), ExitCode.COULD_NOT_CHECK, False, "report")
    text, check = issue.build(snap, smoke, redact=not no_redact, source=source, model=model)
    result = check.to_result()
    if output:
        try:
            outputs.write_text(output, text)
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}", ExitCode.COULD_NOT_CHECK, False, "report")
        click.echo(f"report written to {output} ({len(text.splitlines())} lines)", err=True)
        finish(result, human=lambda _con: None)
    finish(result, markdown=text)


def _read(issue: Any, path: str, explicit: bool) -> dict[str, Any] | None:
    try:
        return issue.read_smoke(path, explicit=explicit)  # type: ignore[no-any-return]
    except issue.StaleSmokeCache as exc:  # a last-run cache is ours, not the user's input: never a blocker
        click.echo(f"rocm-triton-doctor report: note: {exc}; the report leaves that section out", err=True)
        return None
