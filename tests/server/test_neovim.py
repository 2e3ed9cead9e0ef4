"""A real LSP client that owes nothing to pygls: headless Neovim 0.7.

Neovim opens the bundled example (or, for UTF-8, a copy with Chinese text and
an emoji on the AG101 line), receives pushed diagnostics, hovers a tensor,
applies the AG101 quick fix, sees the diagnostic go, and shuts the server
down; the server must exit with code 0.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_lsp.analysis import Settings, analyze
from autograd_lsp.analysis.edits import apply_edits

from tests.editors.projects import neovim_on_path
from tests.server.session import REPO

# Neovim 0.7 (Debian's): the virtual environment may hold a newer `nvim` too.
NVIM = neovim_on_path("0.7")
pytestmark = pytest.mark.skipif(NVIM is None, reason="Neovim 0.7 is not on PATH")

EXAMPLE = REPO / "examples" / "train_example.py"
FALLBACK_EXAMPLE = (
    "import torch\n"
    "x = torch.randn(3, requires_grad=True)\n"
    "loss = x * 2\n"
    "loss.backward()\n"
)
CLIENT = Path(__file__).with_name("neovim_client.lua")


def example_text() -> str:
    return EXAMPLE.read_text(encoding="utf-8") if EXAMPLE.exists() else FALLBACK_EXAMPLE


def run_neovim(path: Path, encoding: str, locale: str, hover: tuple[int, int], tmp_path: Path) -> dict:
    out = tmp_path / "neovim-results.json"
    env = dict(os.environ, AG_FILE=str(path), AG_OUT=str(out), AG_PYTHON=sys.executable,
               AG_PYTHONPATH=str(REPO), AG_ENCODING=encoding, AG_LOCALE=locale,
               AG_HOVER_LINE=str(hover[0]), AG_HOVER_CHARACTER=str(hover[1]),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    subprocess.run([NVIM, "--headless", "-n", "-i", "NONE", "-u", str(CLIENT)], env=env,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=120, check=False)
    assert out.exists(), "Neovim wrote no results"
    return json.loads(out.read_text(encoding="utf-8"))


def first_backward(text: str) -> tuple[int, int, str]:
    """(0-based line, code-point column of the receiver, receiver) of the first `X.backward()`."""
    for number, line in enumerate(text.splitlines()):
        column = line.find(".backward()")
        if column > 0:
            receiver = line[:column].split()[-1].split(";")[-1].strip()
            return number, column - len(receiver), receiver
    raise AssertionError("the example has no backward() call")


@pytest.mark.parametrize("encoding, locale", [("utf-16", "en"), ("utf-8", "zh-CN")])
def test_neovim_end_to_end(tmp_path, encoding, locale):
    text = example_text()
    if encoding == "utf-8":
        # Non-ASCII before the bug on its line: columns differ per encoding.
        line, column, receiver = first_backward(text)
        lines = text.splitlines(keepends=True)
        indent = lines[line][:len(lines[line]) - len(lines[line].lstrip())]
        lines[line] = lines[line].replace(indent, f'{indent}note = "反向传播😀"; ', 1)
        text = "".join(lines)
    path = tmp_path / "train_example.py"
    path.write_text(text, encoding="utf-8")
    line, column, receiver = first_backward(text)
    prefix = text.splitlines()[line][:column]
    client_column = len(prefix.encode("utf-8")) if encoding == "utf-8" else len(prefix.encode("utf-16-le")) // 2

    results = run_neovim(path, encoding, locale, (line, client_column), tmp_path)
    assert "error" not in results, results

    first = results["first"]
    codes = [d["code"] for d in first["diagnostics"]]
    assert "AG101" in codes
    if EXAMPLE.exists():
        assert "AG201" in codes
    ag101 = next(d for d in first["diagnostics"] if d["code"] == "AG101")
    assert ag101["range"]["start"] == {"line": line, "character": client_column}
    assert ag101["source"] == "autograd-lsp" and ag101["severity"] == 1
    core = next(f for f in analyze(text, Settings.build(locale="zh" if locale == "zh-CN" else "en"))
                if f.code == "AG101")
    assert ag101["message"] == core.message
    assert results["action_title"] == f"{core.fixes[0].title} (AG101)"
    assert ("不是标量" in ag101["message"]) == (locale == "zh-CN")

    hover = results["hover"]
    assert f"`{receiver}`" in hover
    assert ("requires grad: yes" in hover) if locale == "en" else ("需要梯度: 是" in hover)

    assert codes.count("AG101") - 1 == results["after_fix_codes"].count("AG101")
    assert results["fixed_line"] == apply_edits(text, core.fixes[0].edits).splitlines()[line]
    assert results["exit_code"] == 0, results
