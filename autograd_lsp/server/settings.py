"""Editor settings and project configuration, merged per document.

Editor settings come from `initializationOptions` (flat, or under "settings" or
"autograd-lsp") and from `workspace/configuration` (section "autograd-lsp", one
request per workspace folder). Keys: enable, select, ignore, severity, locale.
The project's `[tool.autograd-lsp]` in the nearest pyproject.toml comes first;
editor settings that are given replace its values (severities are merged).

The locale is the reader's choice, so it is picked in this order: the `locale`
setting, the client's UI language from `initialize`, the project's `locale`,
the server process's environment (LC_ALL, LC_MESSAGES, LANG: Neovim and eglot
send no UI language, and inherit the user's), English.

Clients that watch no files for the server (Neovim 0.7, Neovim on Linux) never
say that a pyproject.toml changed; for them each analysis first compares the
modification times of the configurations read so far.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autograd_lsp.analysis import Settings
from autograd_lsp.analysis.records import record
from autograd_lsp.config import check_values

SECTION = "autograd-lsp"


@record
class EditorSettings:
    enable: bool | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    severities: tuple[tuple[str, str], ...] = ()
    locale: str | None = None

    def over(self, base: "EditorSettings") -> "EditorSettings":
        """These settings where given, `base`'s elsewhere."""
        return EditorSettings(
            enable=base.enable if self.enable is None else self.enable,
            select=base.select if self.select is None else self.select,
            ignore=base.ignore if self.ignore is None else self.ignore,
            severities=tuple(sorted({**dict(base.severities), **dict(self.severities)}.items())),
            locale=base.locale if self.locale is None else self.locale,
        )


def parse_editor_settings(raw: Any) -> tuple[EditorSettings, list[str]]:
    """Editor settings from a JSON value, and a list of problems found in it.
    Values of the wrong type are dropped (and reported), never fatal."""
    problems: list[str] = []
    if not isinstance(raw, dict):
        if raw not in (None, [], ""):
            problems.append(f"settings must be an object, not {type(raw).__name__}")
        return EditorSettings(), problems
    for wrapper in (SECTION, "settings"):
        if isinstance(raw.get(wrapper), dict):
            raw = raw[wrapper]
            break

    enable = raw.get("enable")
    if enable is not None and not isinstance(enable, bool):
        problems.append(f"enable: must be true or false, not {enable!r}")
        enable = None
    table = dict(raw)
    if "severity" not in table and "severities" in table:
        table["severity"] = table["severities"]
    # The one validator of every source of settings (see autograd_lsp.config).
    values, found = check_values(table)
    problems += found
    return EditorSettings(enable, values.get("select"), values.get("ignore"),
                          tuple(sorted(values.get("severity", {}).items())),
                          values.get("locale")), problems


@record
class DocumentSettings:
    """What one document is analysed with."""
    enabled: bool
    settings: Settings
    excluded: bool = False


@dataclass
class SettingsStore:
    """Editor settings (global and per workspace folder) and the project
    configurations found so far, with a generation counter that changes
    whenever any of them does."""
    client_locale: str | None = None
    environment_locale: str | None = None
    initialization: EditorSettings = EditorSettings()
    # folder URI ("" for the global scope) -> settings from workspace/configuration
    by_folder: dict[str, EditorSettings] = field(default_factory=dict)
    generation: int = 0
    _projects: dict[str, Any] = field(default_factory=dict)
    # pyproject.toml path -> its modification time when read
    _read_at: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def changed(self) -> None:
        self.generation += 1

    def forget_projects(self) -> None:
        self._projects.clear()
        self._read_at.clear()
        self.changed()

    def notice_changed_projects(self) -> None:
        """Forget the configurations whose pyproject.toml changed on disk since it
        was read (for clients that do not watch files)."""
        if any(_modified(Path(key)) != read_at for key, read_at in self._read_at.items()):
            self.forget_projects()

    def editor_settings_for(self, uri: str) -> EditorSettings:
        chosen = self.initialization
        if "" in self.by_folder:
            chosen = self.by_folder[""].over(chosen)
        folders = [f for f in self.by_folder if f and _under(uri, f)]
        if folders:
            chosen = self.by_folder[max(folders, key=len)].over(chosen)
        return chosen

    def for_document(self, uri: str, path: Path | None) -> DocumentSettings:
        editor = self.editor_settings_for(uri)
        project = self._project_for(path)
        project_locale = project.settings.locale if project and project.locale_given else None
        locale = (editor.locale or self.client_locale or project_locale or self.environment_locale
                  or (project.settings.locale if project else "en"))
        base = project.settings if project else Settings()
        severities = {**dict(base.severities), **dict(editor.severities)}
        try:
            settings = Settings.build(
                select=base.select if editor.select is None else editor.select,
                ignore=base.ignore if editor.ignore is None else editor.ignore,
                severities=severities, locale=locale)
        except ValueError as exc:
            self.problems.append(str(exc))
            settings = replace(base, locale=locale)
        excluded = bool(project and path and project.is_excluded(path))
        return DocumentSettings(editor.enable is not False, settings, excluded)

    def _project_for(self, path: Path | None):
        """The project configuration for a file on disk (None for unsaved buffers
        and when configuration support is unavailable)."""
        if path is None:
            return None
        try:
            from autograd_lsp.config import ConfigError, find_pyproject, load_pyproject
        except ImportError:
            return None
        pyproject = find_pyproject(path.parent)
        if pyproject is None:
            return None
        key = str(pyproject)
        if key not in self._projects:
            self._read_at[key] = _modified(pyproject)
            try:
                self._projects[key] = load_pyproject(pyproject)
            except ConfigError as exc:
                self.problems.append(str(exc))
                self._projects[key] = None
        return self._projects[key]


def _modified(path: Path):
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _under(uri: str, folder_uri: str) -> bool:
    folder = folder_uri.rstrip("/")
    return uri == folder or uri.startswith(folder + "/")
