"""`fleet`: parse, compare the result files (fleet.run), render the drift table or the JSON, exit."""

from __future__ import annotations

import click

from rocm_triton_doctor.cli._shared import CONTEXT, finish


@click.command("fleet", context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable drift report.")
@click.option("--slow", "slow_ratio", default=0.8, show_default=True, type=click.FloatRange(0.01, 1.0),
              help="A node is a slow outlier in a smoke case below this fraction of the fleet median.")
@click.option("--strict", is_flag=True, help="Drift and slow outliers also make the exit code 1.")
def command(paths: tuple[str, ...], as_json: bool, slow_ratio: float, strict: bool) -> None:
    """Compare many machines: which drifted (ROCm, driver, kernel, torch, Triton, gfx), which fail, which are slow.

    PATHS are `check --json`, `smoke --json` and `smoke --distributed --json` files, or directories of them.
    Exit code by the worst node: 1 when a node fails (with --strict also on drift).

    \b
    Example:
      for h in $(cat hosts); do ssh $h rocm-triton-doctor check --json > results/$h.json; done
      rocm-triton-doctor fleet results/
    """
    from rocm_triton_doctor import fleet

    result, nodes = fleet.run(list(paths), slow_ratio, strict)
    finish(result, as_json=as_json, human=lambda con: fleet.table(nodes, con))
