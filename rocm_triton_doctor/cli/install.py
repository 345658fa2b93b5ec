"""`install`: parse and validate the options, run install.command.run, render its Result, exit."""

from __future__ import annotations

import re
import shutil

import click

from rocm_triton_doctor.cli._shared import (CONTEXT, ExitCode, Usage, console, fail, finish, output_option, python_option,
                                            split, usage_check)


def _torch(ctx: click.Context, _p: click.Parameter, value: str | None) -> str | None:
    from packaging.version import InvalidVersion, Version

    if value is not None:
        try:
            Version(value)
        except InvalidVersion:
            raise Usage(f"--torch {value}: not a version (e.g. 2.9.1)", ctx) from None
    return value


def _rocm(ctx: click.Context, _p: click.Parameter, value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[0-9]+\.[0-9]+(\.[0-9]+)?", value.strip()):
        raise Usage(f"--rocm {value}: expected a ROCm version X.Y (e.g. 6.4)", ctx)
    return value.strip() if value else value


def _from_lock(ctx: click.Context, _p: click.Parameter, value: str | None) -> str | None:
    # A lock that is missing or is no lock is a wrong option value (exit 2), not a problem with the machine (exit 1).
    if value is not None and not ctx.resilient_parsing:
        from rocm_triton_doctor.install import lock

        try:
            lock.read(value)
        except lock.LockError as exc:
            raise Usage(f"--from-lock: {exc}", ctx) from None
    return value


def _installer(ctx: click.Context, _p: click.Parameter, value: str) -> str:
    if value == "uv" and not shutil.which("uv"):
        raise Usage("--installer uv: uv is not on PATH", ctx)
    return value


@click.command("install", context_settings=CONTEXT)
@click.option("--torch", "torch_version", metavar="VERSION", callback=_torch, help="Install this torch release (e.g. 2.9.1).")
@click.option("--rocm", metavar="X.Y", callback=_rocm, help="Use PyTorch's rocmX.Y index.")
@click.option("--source", type=click.Choice(["auto", "pytorch", "therock", "amd-repo"]), default="auto", show_default=True,
              help="Where the AMD torch comes from: pytorch.org rocmX.Y, TheRock multi-arch (device extras), AMD's repo.")
@click.option("--index-url", metavar="URL", help="A mirror of the chosen index (https, file, or http on loopback).")
@click.option("--find-links", type=click.Path(exists=True, file_okay=False), metavar="DIR",
              help="A local wheelhouse to install from (with --offline: nothing leaves the machine).")
@click.option("--offline", is_flag=True, help="Use only --find-links; never contact an index.")
@click.option("--venv", metavar="PATH", help="Install into a fresh virtual environment at PATH (recommended; the "
              "default advice when this Python is externally managed).")
@python_option("The interpreter to install for (or to create --venv with). Default: the one running the doctor.")
@click.option("--with", "with_", multiple=True, metavar="PKG", help="Also install torchvision / torchaudio (same "
              "build and index); repeat or comma-separate.")
@click.option("--installer", type=click.Choice(["pip", "uv"]), default="pip", show_default=True, callback=_installer,
              help="The installer that changes the environment (downloads always use pip).")
@click.option("--dry-run", is_flag=True, help="Show the plan; change nothing.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before changing anything.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable plan/result.")
@output_option("--lock", "lock_path", help="After a verified install, write the exact versions, index and the machine "
               "it was verified on.")
@click.option("--from-lock", type=click.Path(dir_okay=False), metavar="FILE", callback=_from_lock,
              help="Reproduce a locked install; refuses when this machine differs in a way that matters.")
@click.option("--snapshot", "snapshot_path", type=click.Path(dir_okay=False), metavar="FILE",
              help="Plan for the machine a saved snapshot describes (needs --dry-run).")
@click.pass_context
def command(ctx: click.Context, torch_version: str | None, rocm: str | None, source: str, index_url: str | None,
            find_links: str | None, offline: bool, venv: str | None, python: str | None, with_: tuple[str, ...],
            installer: str, dry_run: bool, yes: bool, as_json: bool, lock_path: str | None, from_lock: str | None,
            snapshot_path: str | None) -> None:
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
    usage_check(ctx, not (lock_path and dry_run), "--lock records a verified install; --dry-run installs nothing")
    from rocm_triton_doctor.check.snapshot import SnapshotError
    from rocm_triton_doctor.install import command as install
    from rocm_triton_doctor.install.plan import BadOption, Options

    opts = Options(torch=torch_version, rocm=rocm, index_url=index_url, find_links=find_links, offline=offline,
                   venv=venv, python=python, with_=tuple(split(with_)), installer=installer, source=source)
    try:
        result = install.run(opts, dry_run=dry_run, yes=yes, as_json=as_json, lock_path=lock_path, from_lock=from_lock,
                             snapshot_path=snapshot_path, console=console(), err=console(stderr=True),
                             confirm=lambda q: click.confirm(q, default=False))
    except (BadOption, install.UsageProblem) as exc:
        raise Usage(str(exc), ctx) from None
    except SnapshotError as exc:
        fail(str(exc), ExitCode.COULD_NOT_CHECK, as_json, "install")
    finish(result, as_json=as_json, human=lambda _con: None)  # the human text was printed as the install went
