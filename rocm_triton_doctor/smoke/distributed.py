"""`smoke --distributed`: every rank (launched by torchrun or srun) runs the smoke preset on its local device and a
collective check through torch.distributed; rank 0 collects everything and prints one table.

Collectives: all_reduce (sum; fp32 and bf16 with exactly representable expected values), all_gather, broadcast,
over sizes 1 KiB..--collective-max-mib. Bandwidth as nccl-tests/rccl-tests define it (doc/PERFORMANCE.md there):
algbw = bytes / time; busbw = algbw · 2(n−1)/n for all_reduce, · (n−1)/n for all_gather, · 1 for broadcast.
Results travel through the c10d store with a deadline, so a rank that fails or hangs is reported by rank 0 after
--rank-timeout seconds instead of hanging the job.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import time
from typing import Any

from rocm_triton_doctor.result import Result

KIB = 1024


def rank_env() -> tuple[int, int, int]:
    """(rank, world size, local rank) from torchrun (RANK/WORLD_SIZE/LOCAL_RANK) or Slurm srun (SLURM_*)."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:
        return int(env["RANK"]), int(env["WORLD_SIZE"]), int(env.get("LOCAL_RANK", "0"))
    if "SLURM_PROCID" in env and "SLURM_NTASKS" in env:
        if "MASTER_ADDR" not in env:
            raise RuntimeError("under srun, export MASTER_ADDR (the first node) and MASTER_PORT before starting")
        os.environ.setdefault("MASTER_PORT", "29500")
        os.environ["RANK"], os.environ["WORLD_SIZE"] = env["SLURM_PROCID"], env["SLURM_NTASKS"]
        os.environ["LOCAL_RANK"] = env.get("SLURM_LOCALID", "0")
        return int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"]), int(env.get("SLURM_LOCALID", "0"))
    raise RuntimeError("--distributed needs a launcher: torchrun --nproc-per-node N -m rocm_triton_doctor smoke "
                       "--distributed (or srun with MASTER_ADDR set)")


def _sizes(max_mib: float) -> list[int]:
    sizes, s = [], KIB
    while s <= max_mib * 2**20:
        sizes.append(s)
        s *= 8
    return sizes or [KIB]


def collectives(torch: Any, dist: Any, device: Any, world: int, rank: int, max_mib: float) -> list[dict[str, Any]]:
    out = []
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    for size in _sizes(max_mib):
        for op, dtype in (("all_reduce", torch.float32), ("all_reduce", torch.bfloat16), ("all_gather", torch.float32),
                          ("broadcast", torch.float32)):
            elem = torch.empty((), dtype=dtype).element_size()
            n = max(1, size // elem)
            fn: Any
            row: dict[str, Any] = {"op": op, "dtype": str(dtype).replace("torch.", ""), "bytes": n * elem, "ok": True, "error": None}
            try:
                if op == "all_reduce":
                    x = torch.full((n,), float(rank + 1), dtype=dtype, device=device)
                    fn = lambda x=x: dist.all_reduce(x)  # noqa: E731
                    expect = world * (world + 1) / 2  # exact in fp32 and, for world <= 16, in bf16
                    fn()
                    sync()
                    row["ok"] = bool((x == expect).all())
                    factor = 2 * (world - 1) / world
                elif op == "all_gather":
                    x = torch.full((n,), float(rank), dtype=dtype, device=device)
                    parts = [torch.empty_like(x) for _ in range(world)]
                    fn = lambda x=x, parts=parts: dist.all_gather(parts, x)  # noqa: E731
                    fn()
                    sync()
                    row["ok"] = all(bool((p == i).all()) for i, p in enumerate(parts))
                    factor = (world - 1) / world
                else:
                    x = torch.full((n,), 42.0 if rank == 0 else -1.0, dtype=dtype, device=device)
                    fn = lambda x=x: dist.broadcast(x, src=0)  # noqa: E731
                    fn()
                    sync()
                    row["ok"] = bool((x == 42.0).all())
                    factor = 1.0
                iters = 5 if size >= 2**24 else 20
                sync()
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn()
                sync()
                secs = (time.perf_counter() - t0) / iters
                total = n * elem * (world if op == "all_gather" else 1)
                row["time_us"] = round(secs * 1e6, 1)
                row["algbw_gbps"] = round(total / secs / 1e9, 6)
                row["busbw_gbps"] = round(total / secs / 1e9 * factor, 6)
            except Exception as exc:  # noqa: BLE001 - a collective that fails or times out is this rank's result
                first = (str(exc).strip().splitlines() or [""])[0][:200]
                row["ok"], row["error"] = False, f"{type(exc).__name__}: {first}"
            out.append(row)
            if row["error"]:
                return out  # the group is broken now; later collectives would only wait for the same timeout
    return out


def run(device: str, preset: str, only: tuple[str, ...], rank_timeout: float, max_mib: float,
        fail_rank: int | None = None, hang_rank: int | None = None) -> Result | None:
    """Run this rank's part. Returns the fleet-wide result on rank 0, None on the other ranks."""
    rank, world, local = rank_env()
    from rocm_triton_doctor.smoke.runner import import_stack, resolve_device, run_smoke

    torch, _ = import_stack(device)
    import torch.distributed as dist

    device = resolve_device(device, torch)
    on_gpu = device != "cpu"
    timeout = _dt.timedelta(seconds=rank_timeout)
    dist.init_process_group("nccl" if on_gpu else "gloo", timeout=timeout)
    store = dist.distributed_c10d._get_default_store()
    dev = torch.device(f"cuda:{local}") if on_gpu else torch.device("cpu")
    if on_gpu:
        torch.cuda.set_device(dev)
    result: dict[str, Any] = {"rank": rank, "local_rank": local, "host": socket.gethostname(), "status": "pass",
                              "error": None}
    try:
        from rocm_triton_doctor.check.facts import build_facts
        from rocm_triton_doctor.check.probes.collect import Collector
        from rocm_triton_doctor.check.summary import facts_summary

        result["facts"] = facts_summary(build_facts(Collector(runtime=False).collect()))
        if hang_rank == rank:
            time.sleep(rank_timeout * 3)  # test hook: a rank that never answers in time
        report = run_smoke(device, preset, only, broken="wrong" if fail_rank == rank else None)
        result["device_name"] = report.device_name
        result["target"] = report.target
        result["versions"] = report.versions
        result["smoke"] = report.to_dict()
        if report.exit_code != 0:
            result["status"] = "fail"
        result["collectives"] = collectives(torch, dist, dev, world, rank, max_mib)
        if not all(c["ok"] for c in result["collectives"]):
            result["status"] = "fail"
    except Exception as exc:  # noqa: BLE001
        result["status"], result["error"] = "error", f"{type(exc).__name__}: {exc}"[:300]
    store.set(f"rtd/result/{rank}", json.dumps(result))
    if rank != 0:
        # Stay until rank 0 has everything: a rank that exits early makes torchrun stop the whole job, rank 0 too.
        deadline = time.monotonic() + 2 * rank_timeout
        while time.monotonic() < deadline and not store.check(["rtd/done"]):
            time.sleep(0.2)
        try:
            dist.destroy_process_group()
        except Exception:  # noqa: BLE001 - teardown after a failed collective may complain; nothing to report
            pass
        return None
    ranks = [result]
    deadline = time.monotonic() + rank_timeout
    for r in range(1, world):
        key = f"rtd/result/{r}"
        while time.monotonic() < deadline and not store.check([key]):
            time.sleep(0.2)
        if store.check([key]):
            ranks.append(json.loads(store.get(key)))
        else:
            ranks.append({"rank": r, "status": "no answer", "error": f"rank {r} did not report within "
                          f"{rank_timeout:.0f} s (hung or crashed)", "host": None, "local_rank": None})
    store.set("rtd/done", "1")
    return summarize(ranks, world, preset, device)


def summarize(ranks: list[dict[str, Any]], world: int, preset: str, device: str) -> Result:
    import statistics

    pct = {}
    for r in ranks:
        vals = [c["pct_ceiling"] for c in (r.get("smoke") or {}).get("results", []) if c.get("pct_ceiling") is not None]
        if vals:
            pct[r["rank"]] = statistics.mean(vals)
    med = statistics.median(pct.values()) if pct else None
    for r in ranks:
        r["mean_pct_ceiling"] = round(pct[r["rank"]], 1) if r["rank"] in pct else None
        r["outlier"] = bool(med and r["rank"] in pct and pct[r["rank"]] < 0.8 * med)
    ok = all(r["status"] == "pass" for r in ranks)
    return Result("distributed/1", "smoke --distributed", "passed" if ok else "failed", 0 if ok else 1,
                  {"world_size": world, "preset": preset, "device": device, "ranks": sorted(ranks, key=lambda r: r["rank"])})


def table(d: dict[str, Any], console: Any) -> None:
    from rich.table import Table
    from rich.text import Text

    t = Table(title=f"distributed smoke: {d['world_size']} rank(s), preset {d['preset']}", title_justify="left")
    for col in ("rank", "node", "GPU", "target", "torch / Triton", "smoke", "% ceiling", "all_reduce busbw",
                "all_gather busbw", "broadcast busbw"):
        t.add_column(col)
    for r in d["ranks"]:
        smoke = (r.get("smoke") or {}).get("counts") or {}
        coll = r.get("collectives") or []

        def bw(op: str, coll: list[dict[str, Any]] = coll) -> str:
            rows = [c for c in coll if c["op"] == op and c.get("busbw_gbps") is not None and c["dtype"] == "float32"]
            if not rows:
                return "—"
            best = max(rows, key=lambda c: c["bytes"])
            return f"{best['busbw_gbps']:.1f} GB/s @ {best['bytes'] // 1024} KiB" + ("" if all(c["ok"] for c in coll) else " ✗")

        status = Text(r["status"], style="green" if r["status"] == "pass" else "bold red")
        v = r.get("versions") or {}
        pct = r.get("mean_pct_ceiling")
        t.add_row(str(r["rank"]), f"{r.get('host') or '?'}:{r.get('local_rank')}", r.get("device_name") or "—",
                  r.get("target") or "—", f"{v.get('torch', '—')} / {v.get('triton', '—')}",
                  status if not smoke else Text(", ".join(f"{n} {k}" for k, n in smoke.items()),
                                                style="green" if r["status"] == "pass" else "bold red"),
                  "—" if pct is None else (f"{pct}%" + (" (outlier)" if r.get("outlier") else "")),
                  bw("all_reduce"), bw("all_gather"), bw("broadcast"))
    console.print(t)
    for r in d["ranks"]:
        if r.get("error"):
            console.print(Text(f"  rank {r['rank']}: {r['error']}", style="red"))
        for c in (r.get("smoke") or {}).get("results", []):
            if c.get("status") != "pass":
                console.print(Text(f"  rank {r['rank']}: {c['kernel']}[{c['case']}] {c['status']}: "
                                   f"{c.get('error') or '; '.join(c.get('problems') or [])}"[:300], style="red"))
        for c in r.get("collectives") or []:
            if not c["ok"]:
                console.print(Text(f"  rank {r['rank']}: {c['op']} {c['dtype']} {c['bytes']} B: "
                                   f"{c.get('error') or 'wrong result'}", style="red"))
    console.print(Text(f"Distributed smoke {d['status'].upper()} (exit {d['exit_code']})",
                       style="bold green" if d["exit_code"] == 0 else "bold red"))


def run_rank(device: str, preset: str, only: tuple[str, ...], rank_timeout: float, max_mib: float,
             fail_rank: int | None = None, hang_rank: int | None = None, save: str | None = None) -> Result | None:
    """`smoke --distributed`: this rank's part; on rank 0 the fleet-wide Result (also written to `save`), or an
    error Result when the job cannot start; None on the other ranks."""
    from rocm_triton_doctor import outputs
    from rocm_triton_doctor.result import ExitCode
    from rocm_triton_doctor.smoke.runner import SmokeCannotStart

    try:
        result = run(device, preset, only, rank_timeout, max_mib, fail_rank, hang_rank)
    except (SmokeCannotStart, RuntimeError) as exc:
        return Result.error("smoke --distributed", str(exc), ExitCode.COULD_NOT_CHECK, schema="distributed/1")
    if result is not None and save:
        try:
            outputs.write_text(save, json.dumps(result.to_dict(), indent=1))
        except OSError as exc:
            return Result.error("smoke --distributed", f"cannot write output: {exc.strerror or exc}",
                                ExitCode.COULD_NOT_CHECK, schema="distributed/1")
    return result
