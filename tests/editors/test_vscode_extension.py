"""The VS Code extension builds from its lock file and packages into a .vsix
without a single prompt (VS Code itself cannot run here: what the extension
does in VS Code is type-checked, not run)."""
from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

from tests.editors.projects import REPO, require

EXTENSION = REPO / "editors" / "vscode"


def test_the_extension_packages_without_prompts(tmp_path):
    npm = require(shutil.which("npm"), "Node.js and npm")
    work = tmp_path / "vscode"
    shutil.copytree(EXTENSION, work, ignore=shutil.ignore_patterns("node_modules", "dist", "out", "*.vsix"))
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=work, check=True,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=600)
    vsix = tmp_path / "autograd-lsp.vsix"
    # `vsce package` asks before packaging without a LICENSE or repository; with
    # no terminal to answer, a prompt would fail the run.
    result = subprocess.run([str(work / "node_modules" / ".bin" / "vsce"), "package",
                             "--allow-missing-repository", "-o", str(vsix)],
                            cwd=work, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Do you want to continue" not in result.stdout + result.stderr

    names = zipfile.ZipFile(vsix).namelist()
    assert sorted(names) == sorted([
        "extension.vsixmanifest", "[Content_Types].xml", "extension/package.json",
        "extension/readme.md", "extension/LICENSE.txt", "extension/dist/extension.js"])
    bundle = zipfile.ZipFile(vsix).read("extension/dist/extension.js").decode()
    # One file: the language client is inside, only VS Code's own API is required.
    assert 'require("vscode")' in bundle
    assert 'require("vscode-languageclient' not in bundle
    manifest = json.loads(zipfile.ZipFile(vsix).read("extension/package.json"))
    assert "onNotebook:jupyter-notebook" in manifest["activationEvents"]
    settings = manifest["contributes"]["configuration"]["properties"]
    assert {"autograd-lsp.trace.server", "autograd-lsp.debounceMs"} <= set(settings)


def test_the_lock_file_matches_the_manifest():
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((EXTENSION / "package-lock.json").read_text(encoding="utf-8"))
    root = lock["packages"][""]
    assert root["dependencies"] == manifest["dependencies"]
    assert root["devDependencies"] == manifest["devDependencies"]
