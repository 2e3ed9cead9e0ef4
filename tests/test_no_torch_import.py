"""The server and the command line never import torch: it would cost more than a
second of start-up (and run torch's own import-time code) for nothing, since all
the analysis knows of torch's API is in plain tables.

Checked with `python -X importtime`, which lists every module a process imports,
after the process has really analysed a file, on every path: check (one process
and the worker pool), --fix, and the server over stdio (diagnostics and a hover).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = ("import torch\n"
          "import torch.nn as nn\n"
          "x = torch.randn(3, requires_grad=True)\n"
          "y = x * 2\n"
          "y.backward()\n")


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def imported_modules(importtime_stderr: str) -> set[str]:
    names = set()
    for line in importtime_stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "autograd_lsp" in names, "-X importtime listed nothing: the check would prove nothing"
    return names


def assert_no_torch(names: set[str]) -> None:
    torch_modules = sorted(n for n in names if n == "torch" or n.startswith("torch."))
    assert not torch_modules, f"imported {torch_modules[:5]}"


def test_check_never_imports_torch(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = \"demo\"\n")
    for number in range(12):   # enough files for the worker pool
        (tmp_path / f"train_{number}.py").write_text(SOURCE)
    for flags in (["--no-cache"], [], ["--fix"]):
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "autograd_lsp", "check",
                               *flags, "."], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                              timeout=120)
        assert done.returncode in (0, 1), done.stderr[-2000:]
        assert_no_torch(imported_modules(done.stderr))


def _send(stdin, message: dict) -> None:
    body = json.dumps(message).encode()
    stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdin.flush()


def _read_until(stdout, predicate) -> dict:
    while True:
        length = None
        while True:
            line = stdout.readline()
            assert line, "the server closed its output"
            if not line.strip():
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        message = json.loads(stdout.read(length))
        if predicate(message):
            return message


def test_server_never_imports_torch(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    uri = path.as_uri()
    server = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "autograd_lsp.server"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=_env(), cwd=tmp_path)
    try:
        _send(server.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                             "params": {"processId": None, "rootUri": tmp_path.as_uri(),
                                        "capabilities": {}}})
        _read_until(server.stdout, lambda m: m.get("id") == 1)
        _send(server.stdin, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
        _send(server.stdin, {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}}})
        published = _read_until(server.stdout,
                                lambda m: m.get("method") == "textDocument/publishDiagnostics")
        assert [d["code"] for d in published["params"]["diagnostics"]] == ["AG101"]
        _send(server.stdin, {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": uri}, "position": {"line": 3, "character": 0}}})
        _read_until(server.stdout, lambda m: m.get("id") == 2)
        _send(server.stdin, {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None})
        _read_until(server.stdout, lambda m: m.get("id") == 3)
        _send(server.stdin, {"jsonrpc": "2.0", "method": "exit", "params": None})
        _, stderr = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert_no_torch(imported_modules(stderr.decode(errors="replace")))


def test_version_and_help_import_no_analysis(tmp_path):
    # Editors and scripts run `--version` to find the server: it must answer at once.
    for args in (["--version"], ["--help"], ["check", "--help"]):
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "autograd_lsp", *args],
                              cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr[-2000:]
        heavy = sorted(n for n in imported_modules(done.stderr)
                       if n.split(".")[0] in ("libcst", "lsprotocol", "pygls", "torch")
                       or n.startswith("autograd_lsp.analysis"))
        assert not heavy, f"{args} imported {heavy[:5]}"


def test_analysing_without_a_fix_to_build_needs_no_libcst(tmp_path):
    # libcst (0.1 s to import) only builds the fixes that rewrite a call's arguments.
    (tmp_path / "train.py").write_text(SOURCE)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "autograd_lsp", "check",
                           "--no-cache", "train.py"], cwd=tmp_path, env=_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1 and "AG101" in done.stdout, done.stdout + done.stderr[-2000:]
    names = imported_modules(done.stderr)
    assert "autograd_lsp.analysis.engine" in names
    assert "libcst" not in names
