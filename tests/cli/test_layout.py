"""The command modules stay thin (issue #14: parse, call one function, render, exit) and build no JSON by hand."""

from __future__ import annotations

from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "rocm_triton_doctor" / "cli"


def test_command_modules_are_thin_and_build_no_envelopes() -> None:
    mods = sorted(CLI.glob("*.py"))
    assert {m.stem for m in mods} == {"__init__", "_model", "_options", "_shared", "_exits", "check", "install", "smoke",
                                      "report", "fleet"}
    for m in mods:
        text = m.read_text()
        assert len(text.splitlines()) <= 120, m.name
        assert '"schema"' not in text and "json.dumps({" not in text, m.name  # envelopes: result.Result only
        assert "os.execv" not in text and "build_facts" not in text and "__class__(" not in text, m.name
