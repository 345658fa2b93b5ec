"""scripts/refresh_knowledge.py against loopback indexes: one speaking PEP 691 JSON, one PEP 503 HTML, one dead."""

from __future__ import annotations

import http.server
import importlib.util
import json
import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("refresh_knowledge", ROOT / "scripts" / "refresh_knowledge.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rk = _script()

WHEELS = {
    "rocm7.14": {"torch": ["torch-2.14.1%2Brocm7.14-cp312-cp312-manylinux_2_28_x86_64.whl",
                           "torch-2.14.2%2Brocm7.14-cp315-cp315-manylinux_2_28_x86_64.whl",
                           "torch-2.15.0%2Brocm7.14-cp312-cp312-manylinux_2_28_x86_64.whl"],
                 "triton-rocm": ["triton_rocm-3.8.0-cp312-cp312-manylinux_2_28_x86_64.whl"]},
    "rocm7.2": {"torch": ["torch-2.14.0%2Brocm7.2-cp312-cp312-manylinux_2_28_x86_64.whl",
                          "torch-2.13.0%2Brocm7.2-cp312-cp312-manylinux_2_28_x86_64.whl"],
                "triton-rocm": ["triton_rocm-3.7.1-cp312-cp312-manylinux_2_28_x86_64.whl"]},
}


@contextmanager
def index_server() -> Iterator[str]:
    """rocm7.14 answers PEP 691 JSON, rocm7.2 PEP 503 HTML; unknown projects 404."""

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            parts = [p for p in self.path.split("/") if p]
            files = WHEELS.get(parts[0], {}).get(parts[1]) if len(parts) == 2 else None
            if files is None:
                self.send_error(404)
                return
            if parts[0] == "rocm7.14" and "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
                body = json.dumps({"meta": {"api-version": "1.1"}, "name": parts[1],
                                   "files": [{"filename": f.replace("%2B", "+"), "url": f, "hashes": {}} for f in files]})
                ctype = "application/vnd.pypi.simple.v1+json"
            else:
                body = "<html><body>" + "".join(f'<a href="../../files/{f}#sha256=00">{f}</a>' for f in files) + "</body></html>"
                ctype = "text/html"
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a: object) -> None:
            pass

    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), H) as srv:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{srv.server_address[1]}/"
        finally:
            srv.shutdown()


RELEASES = [
    {"torch": "2.13.0", "rocm_indexes": ["rocm7.1", "rocm7.2"], "triton": "3.7.1", "triton_rocm_package": "triton-rocm"},
    {"torch": "2.14.1", "rocm_indexes": ["rocm7.2", "rocm7.14"], "index_versions": {"rocm7.2": "2.14.0"},
     "triton": "3.8.0", "triton_rocm_package": "triton-rocm"},
]


def test_reads_json_and_html_and_flags_stale_rows() -> None:
    with index_server() as base:
        res = rk.refresh(base, ["rocm7.14", "rocm7.2", "rocm9.9"], RELEASES, today="2026-11-22")
    assert res["indexes"]["rocm7.14"]["torch"] == ["2.15.0+rocm7.14", "2.14.2+rocm7.14", "2.14.1+rocm7.14"]
    assert res["indexes"]["rocm7.2"]["torch"] == ["2.14.0+rocm7.2", "2.13.0+rocm7.2"]  # from HTML, %2B unquoted
    assert res["indexes"]["rocm7.2"]["triton"] == {"triton-rocm": ["3.7.1"]}
    assert res["indexes"]["rocm9.9"]["torch"] == []  # the index answers, but has no torch (404)
    stale = "\n".join(res["stale"])
    assert "rocm7.14: torch 2.15 is on the index but has no knowledge row" in stale
    assert "rocm7.14: torch 2.14.1 row is behind: the index has 2.14.2" in stale
    assert "rocm7.2: triton-rocm==3.8.0 (torch 2.14.0's pin) is not on the index" in stale
    assert "rocm7.2: torch 2.13.0" not in stale  # agrees with the index


def test_unreachable_index_is_recorded_not_judged() -> None:
    res = rk.refresh("http://127.0.0.1:9/", ["rocm7.14"], RELEASES)
    assert res["indexes"]["rocm7.14"]["unreachable"] is True and res["stale"] == []


def test_main_writes_the_data_file_and_check_exits_1_when_stale(tmp_path: Path) -> None:
    out = tmp_path / "iv.json"
    with index_server() as base:
        assert rk.main(["--base", base, "--index", "rocm7.14", "--out", str(out)]) == 0
        assert rk.main(["--base", base, "--index", "rocm7.14", "--check"]) == 1
    data = json.loads(out.read_text())
    assert data["indexes"]["rocm7.14"]["url"].endswith("/rocm7.14") and data["stale"]


def test_checked_in_output_says_where_it_comes_from() -> None:
    data = json.loads((ROOT / "rocm_triton_doctor/knowledge/data/index_versions.json").read_text())
    assert "NOT a live run" in data["note"] and data["as_of"] == "2026-11-22"
    assert all(row.get("source") and row.get("as_of") for row in data["indexes"].values())
    releases = json.loads((ROOT / "rocm_triton_doctor/knowledge/data/torch_releases.json").read_text())["releases"]
    again = [s for i, r in data["indexes"].items() for s in rk.stale_rows(releases, i, r["torch"], r["triton"])]
    assert again == data["stale"]  # the checked-in verdicts are the script's own for the checked-in versions
