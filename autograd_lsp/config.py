"""Project configuration: `[tool.autograd-lsp]` in the nearest `pyproject.toml`.

The file is read as data (TOML), never executed. Recognised keys:

    [tool.autograd-lsp]
    select = ["AG1", "missing-zero-grad"]   # rule names or code prefixes
    ignore = ["AG3"]
    exclude = ["build/*", "notebooks/**"]   # globs relative to the pyproject's folder
    severity = { nonscalar-backward = "warning", AG3 = "error" }
    locale = "zh"                           # "en" or "zh"

Command-line flags and editor settings override these via `settings_with`.
Every source of settings (this file, the command line's flags, the editor's
`initializationOptions` and `workspace/configuration`) is checked by the one
validator here, `check_values`, so a typo gets the same words everywhere: an
error in pyproject.toml and on the command line, a message in the editor.
"""
from __future__ import annotations

import fnmatch
import re
import sys
from dataclasses import field
from pathlib import Path, PurePosixPath

from autograd_lsp.analysis import SEVERITIES, Settings, all_rules
from autograd_lsp.analysis.records import record
# Re-exported: the command line reads the locales before it loads the analyser.
from autograd_lsp.locales import LOCALES, normalize_locale  # noqa: F401

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SECTION = "autograd-lsp"
KNOWN_KEYS = ("select", "ignore", "exclude", "severity", "locale")
_CODE_PREFIX = re.compile(r"AG[0-9]*")


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and key."""


@record
class ProjectConfig:
    settings: Settings = field(default_factory=Settings)
    exclude: tuple[str, ...] = ()
    # The folder of the pyproject.toml the configuration came from.
    root: Path | None = None
    # Whether `locale` was written in the file (else settings.locale is the default).
    locale_given: bool = False

    def is_excluded(self, path: Path | str) -> bool:
        """Whether `path` matches one of the `exclude` globs.

        A pattern matches the path relative to `root` or any of its parent folders,
        so `build` or `build/*` excludes everything below `build/`. Paths outside
        `root` are never excluded.
        """
        if not self.exclude:
            return False
        relative = _relative_to_root(Path(path), self.root)
        if relative is None:
            return False
        candidates = [relative] + [str(p) for p in PurePosixPath(relative).parents if str(p) != "."]
        return any(_glob_matches(candidate, pattern)
                   for pattern in self.exclude for candidate in candidates)

    def settings_with(self, select=None, ignore=None, severities=None, locale=None) -> Settings:
        """These settings with the given values replacing the configured ones
        (`None` keeps the configured value; severities are merged, given ones win)."""
        base = self.settings
        merged = dict(base.severities)
        merged.update(severities or {})
        return Settings.build(
            select=base.select if select is None else tuple(select),
            ignore=base.ignore if ignore is None else tuple(ignore),
            severities=merged,
            locale=base.locale if locale is None else locale,
        )


def find_pyproject(start: Path) -> Path | None:
    """The nearest `pyproject.toml` in `start` (a file's folder, or a folder) or above it."""
    start = Path(start).absolute()
    folder = start if start.is_dir() else start.parent
    for candidate_folder in (folder, *folder.parents):
        candidate = candidate_folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(start: Path) -> ProjectConfig:
    """The configuration that applies to `start`; defaults when no pyproject.toml
    is found or it has no `[tool.autograd-lsp]` table. Raises ConfigError."""
    pyproject = find_pyproject(start)
    if pyproject is None:
        return ProjectConfig()
    return load_pyproject(pyproject)


def load_pyproject(pyproject: Path) -> ProjectConfig:
    try:
        data = tomllib.loads(pyproject.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{pyproject}: not valid UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from None
    root = pyproject.parent
    tool = data.get("tool", {})
    table = tool.get(SECTION, {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.{SECTION}] must be a table")
    return _from_table(table, pyproject, root)


def _from_table(table: dict, pyproject: Path, root: Path) -> ProjectConfig:
    unknown = sorted(set(table) - set(KNOWN_KEYS))
    if unknown:
        raise ConfigError(f"{pyproject}: tool.{SECTION}.{unknown[0]}: unknown key "
                          f"(expected one of {', '.join(KNOWN_KEYS)})")
    values, problems = check_values(table)
    if problems:
        raise ConfigError(f"{pyproject}: tool.{SECTION}.{problems[0]}")
    settings = Settings.build(select=values.get("select", ()), ignore=values.get("ignore", ()),
                              severities=values.get("severity", {}),
                              locale=values.get("locale") or "en")
    return ProjectConfig(settings=settings, exclude=values.get("exclude", ()), root=root,
                         locale_given="locale" in values)


def check_values(table: dict) -> tuple[dict, list[str]]:
    """The settings in `table` that are valid, by key (select, ignore, exclude:
    tuples of strings; severity: dict; locale: "en" or "zh"), and a problem
    ("key: what is wrong") for each value left out. Keys this function does not
    know are the caller's business."""
    values: dict = {}
    problems: list[str] = []
    for key in ("select", "ignore", "exclude"):
        if table.get(key) is None:
            continue
        value = table[key]
        if isinstance(value, str):
            # A single string is a common slip for a one-element list; accept it.
            value = [value]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            problems.append(f"{key}: must be a list of strings, not {value!r}")
            continue
        items = tuple(item.strip() for item in value if item.strip())
        unknown_rules = unknown_rule_keys(items) if key != "exclude" else []
        if unknown_rules:
            problems.append(f"{key}: unknown rule {unknown_rules[0]!r} "
                            "(expected a rule name, a code prefix like AG1, or ALL)")
            continue
        values[key] = items
    severities = table.get("severity")
    if isinstance(severities, dict):
        kept = {}
        for key, value in severities.items():
            if unknown_rule_keys([str(key)]):
                problems.append(f"severity.{key}: unknown rule {str(key)!r}")
            elif value not in SEVERITIES:
                problems.append(f"severity.{key}: must be one of {', '.join(SEVERITIES)}, not {value!r}")
            else:
                kept[str(key)] = value
        values["severity"] = kept
    elif severities is not None:
        problems.append(f"severity: must be a table of rule name or code -> {' | '.join(SEVERITIES)}")
    locale = table.get("locale")
    if locale not in (None, "", "auto"):
        normalized = normalize_locale(locale)
        if normalized is None:
            problems.append(f"locale: must be one of {', '.join(LOCALES)}, not {locale!r}")
        values["locale"] = normalized
    return values, problems




def _relative_to_root(path: Path, root: Path | None) -> str | None:
    absolute = path.absolute()
    if root is None:
        return absolute.as_posix()
    try:
        return absolute.relative_to(root.absolute()).as_posix()
    except ValueError:
        return None


def _glob_matches(relative: str, pattern: str) -> bool:
    pattern = pattern.strip().rstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    # fnmatch's "*" crosses "/", so "**" works as is; "**/" may also stand for no
    # folder at all, as in gitignore ("**/cache" matches "cache").
    return any(fnmatch.fnmatchcase(relative, variant)
               for variant in {pattern, pattern.replace("**/", "")})


def unknown_rule_keys(keys) -> list[str]:
    """The keys that name no rule: a key is a rule name, a code prefix ("AG1") or "ALL"."""
    names = {rule.name for rule in all_rules()}
    return [key for key in keys
            if key != "ALL" and key not in names and not _CODE_PREFIX.fullmatch(key.upper())]
