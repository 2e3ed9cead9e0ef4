"""The command line's results cache, `.autograd_lsp_cache/` at the project root.

An entry holds the findings of one file text under one tool build and one set
of effective settings; its key is a hash of all three, so any change to the
text, the settings (select, ignore, severities, locale) or the analysis code
misses and the file is analysed again. Entries are written whole under a
temporary name and renamed, so concurrent runs never see half an entry. A
cache that cannot be read or written is skipped, never fatal: the run only
gets slower.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path

from analysis import Finding, Fix, Settings, TextEdit
from autograd_lsp import __version__

CACHE_FOLDER = ".autograd_lsp_cache"
# Bumped when the entry layout changes, so old entries are never misread.
FORMAT = 1


@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """The version plus a hash of the analysis code: a development build whose
    rules changed without a version bump must not reuse old results."""
    import analysis
    digest = hashlib.sha256(f"{__version__}:{FORMAT}".encode())
    root = Path(analysis.__file__).parent
    for path in sorted(root.rglob("*.py")):
        try:
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"?")
    return f"{__version__}-{digest.hexdigest()[:16]}"


def settings_key(settings: Settings) -> str:
    return json.dumps([list(settings.select), list(settings.ignore),
                       [list(pair) for pair in settings.severities], settings.locale])


def project_root(start: Path) -> Path:
    """The folder of the nearest pyproject.toml (or .git) at or above `start`,
    else `start`: where Ruff would put its cache too."""
    start = start.absolute()
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file() or (folder / ".git").exists():
            return folder
    return start


class ResultsCache:
    """Findings by (text, settings, tool build). Lookups and stores run in the
    main process only; workers just analyse."""

    def __init__(self, folder: Path, fingerprint: str | None = None):
        self.folder = folder
        self.fingerprint = fingerprint or tool_fingerprint()
        self.usable = True
        self.hits = 0
        self.misses = 0
        self._entries = folder / self.fingerprint

    def key(self, text: str, settings: Settings) -> str:
        digest = hashlib.sha256()
        digest.update(self.fingerprint.encode())
        digest.update(b"\0")
        digest.update(settings_key(settings).encode())
        digest.update(b"\0")
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self._entries / key[:2] / f"{key[2:]}.json"

    def get(self, key: str) -> list[Finding] | None:
        if not self.usable:
            return None
        try:
            data = json.loads(self._path(key).read_bytes())
            findings = [finding_from_json(item) for item in data["findings"]]
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            # Missing, half-written by a crashed run, or edited by hand: a miss.
            self.misses += 1
            return None
        self.hits += 1
        return findings

    def put(self, key: str, findings: list[Finding]) -> None:
        if not self.usable:
            return
        path = self._path(key)
        try:
            self._prepare()
            path.parent.mkdir(exist_ok=True)
            data = json.dumps({"findings": [finding_to_json(f) for f in findings]},
                              ensure_ascii=False, separators=(",", ":"))
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as file:
                    file.write(data)
                os.replace(temporary, path)
            except BaseException:
                _unlink(temporary)
                raise
        except OSError:
            # A read-only checkout or a full disk: go on without a cache.
            self.usable = False

    def _prepare(self) -> None:
        if self._entries.is_dir():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        ignore = self.folder / ".gitignore"
        if not ignore.exists():
            # As .ruff_cache does: the folder never shows up in `git status`.
            ignore.write_text("# Automatically created by autograd-lsp.\n*\n", encoding="utf-8")
        self._entries.mkdir(exist_ok=True)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# -- findings as JSON ----------------------------------------------------------------------

def finding_to_json(finding: Finding) -> list:
    return [finding.code, finding.name, finding.severity, finding.message,
            finding.line, finding.column, finding.end_line, finding.end_column,
            [[fix.title, fix.safe, [_edit_to_json(edit) for edit in fix.edits]]
             for fix in finding.fixes]]


def finding_from_json(item: list) -> Finding:
    code, name, severity, message, line, column, end_line, end_column, fixes = item
    if not all(isinstance(v, str) for v in (code, name, severity, message)) or \
            not all(type(v) is int for v in (line, column, end_line, end_column)):
        raise TypeError("not a finding")
    return Finding(code, name, severity, message, line, column, end_line, end_column,
                   tuple(Fix(title, tuple(_edit_from_json(e) for e in edits), safe)
                         for title, safe, edits in fixes))


def _edit_to_json(edit: TextEdit) -> list:
    return [edit.line, edit.column, edit.end_line, edit.end_column, edit.new_text]


def _edit_from_json(item: list) -> TextEdit:
    line, column, end_line, end_column, new_text = item
    return TextEdit(line, column, end_line, end_column, new_text)
