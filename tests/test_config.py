"""Project configuration from `[tool.autograd-lsp]` in pyproject.toml."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from autograd_lsp.analysis import analyze
from autograd_lsp.config import ConfigError, ProjectConfig, find_pyproject, load_config

NONSCALAR = ("import torch\n"
             "x = torch.randn(3, requires_grad=True)\n"
             "y = x * 2\n"
             "y.backward()\n")


def write_pyproject(folder: Path, body: str) -> Path:
    path = folder / "pyproject.toml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_find_pyproject_takes_the_nearest(tmp_path):
    outer = write_pyproject(tmp_path, "")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    inner = write_pyproject(tmp_path / "pkg", "")
    script = tmp_path / "pkg" / "sub" / "train.py"
    script.write_text("")
    assert find_pyproject(script) == inner
    assert find_pyproject(tmp_path / "pkg" / "sub") == inner
    assert find_pyproject(tmp_path) == outer


def test_no_pyproject_gives_defaults(tmp_path):
    if find_pyproject(tmp_path) is not None:
        pytest.skip("a pyproject.toml exists above the temporary folder")
    config = load_config(tmp_path)
    assert config == ProjectConfig()
    assert config.root is None and not config.is_excluded(tmp_path / "x.py")


def test_pyproject_without_our_table_gives_defaults(tmp_path):
    write_pyproject(tmp_path, """
        [project]
        name = "demo"
        [tool.black]
        line-length = 100
    """)
    config = load_config(tmp_path)
    assert config.settings == ProjectConfig().settings
    assert config.root == tmp_path


def test_all_keys_are_read(tmp_path):
    write_pyproject(tmp_path, """
        [tool.autograd-lsp]
        select = ["AG1", "nonscalar-backward"]
        ignore = ["AG3"]
        exclude = ["generated/*"]
        locale = "zh"
        [tool.autograd-lsp.severity]
        nonscalar-backward = "warning"
        AG2 = "error"
    """)
    config = load_config(tmp_path / "train.py")
    assert config.settings.select == ("AG1", "nonscalar-backward")
    assert config.settings.ignore == ("AG3",)
    assert dict(config.settings.severities) == {"nonscalar-backward": "warning", "AG2": "error"}
    assert config.settings.locale == "zh"
    assert config.exclude == ("generated/*",)
    assert config.root == tmp_path


def test_configured_severity_and_locale_reach_the_findings(tmp_path):
    write_pyproject(tmp_path, """
        [tool.autograd-lsp]
        locale = "zh"
        severity = { AG101 = "info" }
    """)
    [finding] = [f for f in analyze(NONSCALAR, load_config(tmp_path).settings) if f.code == "AG101"]
    assert finding.severity == "info"
    assert "不是标量" in finding.message


def test_ignore_silences_a_rule(tmp_path):
    write_pyproject(tmp_path, '[tool.autograd-lsp]\nignore = ["nonscalar-backward"]\n')
    assert not [f for f in analyze(NONSCALAR, load_config(tmp_path).settings) if f.code == "AG101"]


def test_a_single_string_is_taken_as_a_list(tmp_path):
    write_pyproject(tmp_path, '[tool.autograd-lsp]\nselect = "AG1"\n')
    assert load_config(tmp_path).settings.select == ("AG1",)


@pytest.mark.parametrize("body, where", [
    ('[tool.autograd-lsp]\nselect = 3\n', "tool.autograd-lsp.select"),
    ('[tool.autograd-lsp]\nignore = ["AG1", 2]\n', "tool.autograd-lsp.ignore"),
    ('[tool.autograd-lsp]\nexclude = {a = 1}\n', "tool.autograd-lsp.exclude"),
    ('[tool.autograd-lsp]\nseverity = "error"\n', "tool.autograd-lsp.severity"),
    ('[tool.autograd-lsp.severity]\nAG101 = "fatal"\n', "tool.autograd-lsp.severity.AG101"),
    ('[tool.autograd-lsp.severity]\nno-such-rule = "error"\n', "tool.autograd-lsp.severity.no-such-rule"),
    ('[tool.autograd-lsp]\nlocale = "fr"\n', "tool.autograd-lsp.locale"),
    ('[tool.autograd-lsp]\nselcet = ["AG1"]\n', "tool.autograd-lsp.selcet"),
    ('[tool.autograd-lsp]\nselect = ["nonscalar-backwrd"]\n', "tool.autograd-lsp.select"),
    ('[tool]\nautograd-lsp = 1\n', "[tool.autograd-lsp]"),
])
def test_wrong_values_name_the_file_and_key(tmp_path, body, where):
    path = write_pyproject(tmp_path, body)
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    assert str(path) in str(error.value)
    assert where in str(error.value)


def test_malformed_toml_names_the_file(tmp_path):
    path = write_pyproject(tmp_path, "[tool.autograd-lsp\nselect = [\n")
    with pytest.raises(ConfigError, match="invalid TOML") as error:
        load_config(tmp_path)
    assert str(path) in str(error.value)


def test_non_utf8_pyproject_is_a_config_error(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.autograd-lsp]\nlocale = \"\xff\"\n")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config(tmp_path)


@pytest.mark.parametrize("pattern, path, excluded", [
    ("generated", "generated/model.py", True),
    ("generated/*", "generated/deep/model.py", True),
    ("generated/", "generated/model.py", True),
    ("**/migrations", "app/migrations/0001.py", True),
    ("**/migrations", "migrations/0001.py", True),
    ("*_pb2.py", "proto/thing_pb2.py", True),
    ("./scratch.py", "scratch.py", True),
    ("generated", "src/generated_code.py", False),
    ("scratch.py", "src/train.py", False),
])
def test_exclude_globs_are_relative_to_the_pyproject(tmp_path, pattern, path, excluded):
    config = ProjectConfig(exclude=(pattern,), root=tmp_path)
    assert config.is_excluded(tmp_path / path) is excluded


def test_paths_outside_the_root_are_never_excluded(tmp_path):
    config = ProjectConfig(exclude=("*",), root=tmp_path / "project")
    assert not config.is_excluded(tmp_path / "elsewhere" / "x.py")


def test_settings_with_overrides_and_merges(tmp_path):
    write_pyproject(tmp_path, """
        [tool.autograd-lsp]
        select = ["AG1"]
        ignore = ["AG3"]
        locale = "zh"
        severity = { AG101 = "warning", AG102 = "info" }
    """)
    config = load_config(tmp_path)
    same = config.settings_with()
    assert same == config.settings
    changed = config.settings_with(select=["AG2"], ignore=[], severities={"AG101": "error"}, locale="en")
    assert changed.select == ("AG2",)
    assert changed.ignore == ()
    assert dict(changed.severities) == {"AG101": "error", "AG102": "info"}
    assert changed.locale == "en"
