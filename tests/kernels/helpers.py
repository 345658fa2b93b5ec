"""Shared helpers for tests/kernels: a spec's interpreter cases, and checking one against its reference."""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"  # before any @triton.jit function is created

import torch

from rocm_triton_doctor.kernels.base import Case, KernelSpec
from rocm_triton_doctor.kernels.policy import target_for_device
from rocm_triton_doctor.smoke import correctness

CPU = torch.device("cpu")


def interpreter_cases(spec: KernelSpec) -> list[Case]:
    return spec.cases("quick", target_for_device("cpu"))


def check_in_interpreter(case: Case) -> None:
    gen = torch.Generator().manual_seed(7)
    inputs = case.setup(CPU, gen)
    v = correctness.check_case(case, inputs, CPU, tf32=False)
    assert v.ok, v.problems
