"""`smoke --model` through the CLI (CliRunner), toy preset on the CPU (ours in Triton's interpreter): the exit codes
0/1/2/3, --json/--save, the result kept for `report` and its section there."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from click.testing import CliRunner

from rocm_triton_doctor.cli import _model, cli
from rocm_triton_doctor.smoke import model, model_forms

from ..conftest import SCENARIOS

TOY = ["smoke", "--model", "toy", "--device", "cpu", "--steps", "2", "--warmup", "1"]


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RTD_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_toy_run_json_save_and_report(cache: Path, tmp_path: Path) -> None:
    saved = tmp_path / "model.json"
    res = invoke(*TOY, "--forms", "sdpa,ours", "--json", "--save", str(saved))
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["schema"] == "rocm-triton-doctor/model/1" and d["command"] == "smoke --model" and d["status"] == "passed"
    assert d["ok"] and list(d["forms"]) == ["sdpa", "ours"] and d["steps"] == 2 and d["warmup"] == 1
    assert d["forms"]["ours"]["params_without_grad"] == 0 and d["checks"][0]["ok"]
    assert json.loads(saved.read_text())["forms"] == d["forms"]
    assert (cache / "last-model.json").exists()
    rep = invoke("report", "--snapshot", str(SCENARIOS / "cpu-only.json"))
    assert "### Last model run (`smoke --model toy`): **passed**" in rep.stdout
    assert "| ours | ok |" in rep.stdout and "rms_norm: ours" in rep.stdout
    assert "Last model run" not in invoke("report", "--snapshot", str(SCENARIOS / "cpu-only.json"), "--no-smoke").stdout


def test_human_table(cache: Path) -> None:
    res = invoke(*TOY, "--forms", "sdpa")
    assert res.exit_code == 0, res.output
    assert "smoke --model toy" in res.stdout and "sdpa" in res.stdout


def test_a_form_that_cuts_autograd_exits_1(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rocm_triton_doctor.kernels import rmsnorm

    # The seed's mistake: a norm whose output does not depend on its input through autograd.
    monkeypatch.setattr(rmsnorm, "autograd_op", lambda x, w, eps: torch.nn.functional.rms_norm(x.detach(), (x.shape[-1],), w, eps))
    res = invoke(*TOY, "--forms", "sdpa,ours", "--json")
    assert res.exit_code == 1, res.output
    d = json.loads(res.stdout)
    assert d["status"] == "failed" and not d["ok"] and any("got no gradient" in p for p in d["problems"])


@pytest.mark.parametrize("args,msg", [
    (["smoke", "--model", "nope"], "nope"),
    ([*TOY, "--forms", "bogus"], "unknown form"),
    (["smoke", "--steps", "3"], "only meaningful with --model"),
    ([*TOY, "--only", "rmsnorm"], "drop --only"),
    ([*TOY, "--compile"], "drop --compile"),
    ([*TOY, "--steps", "1"], "--steps"),
])
def test_usage_errors_exit_2(args: list[str], msg: str, cache: Path) -> None:
    res = invoke(*args)
    assert res.exit_code == 2 and msg in res.output, res.output


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_no_gpu_exits_3(cache: Path) -> None:
    res = invoke("smoke", "--model", "toy", "--device", "gpu", "--json")
    assert res.exit_code == 3 and json.loads(res.stdout)["status"] == "could-not-check"  # one line, no traceback


def test_cli_choices_match_the_harness() -> None:
    assert tuple(model_forms.PRESETS) == _model.PRESETS and _model.DTYPES == model.DTYPES


def test_suite_only_options_are_refused_and_a_run_with_nothing_trained_has_no_verdict(cache: Path) -> None:
    # --max-seconds, --tune, --rank-timeout and --collective-max-mib had been accepted and ignored with --model, and a
    # run whose every form was skipped said "passed" (fuzz round 2, 2026-11-23).
    for opt in (("--max-seconds", "5"), ("--tune",), ("--rank-timeout", "10"), ("--collective-max-mib", "1")):
        res = invoke(*TOY, "--forms", "sdpa", *opt)
        assert res.exit_code == 2 and "--model runs the model alone" in res.output, opt
    import importlib.util

    if importlib.util.find_spec("liger_kernel") is not None:
        pytest.skip("Liger-Kernel is installed here: its form would run")
    res = invoke(*TOY, "--forms", "liger", "--json")
    assert res.exit_code == 3 and json.loads(res.stdout)["status"] == "could-not-check"
