"""The command line's results cache, `.autograd_lsp_cache/` at the project root.

An entry holds the findings of one file text under one tool build and one set
of effective settings; its key is a hash of all three, so any change to the
text, the settings (select, ignore, severities, locale) or the analysis code
misses and the file is analysed again. Entries are written whole under a
temporary name and renamed, so concurrent runs never see half an entry. A
cache that cannot be read or written is skipped, never fatal: the run only
gets slower.

The folder is not trusted: an entry is read only from a regular file (never a
FIFO, a device or a symbolic link), up to `MAX_ENTRY_BYTES`, and used only if
it names its own key and every finding in it is well formed and names a real
rule. Anything else is a miss, and the file is analysed again.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from autograd_lsp import __version__

if TYPE_CHECKING:  # imported where used: the command line reads CACHE_FOLDER before loading the analyser
    from autograd_lsp.analysis import Finding, Fix, Settings, TextEdit

CACHE_FOLDER = ".autograd_lsp_cache"
# Bumped when the entry layout changes, so old entries are never misread.
FORMAT = 2
# An entry larger than this was not written by us.
MAX_ENTRY_BYTES = 4 * 1024 * 1024
_IGNORE_ALL = "# Automatically created by autograd-lsp.\n*\n"


@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """The version plus a hash of the analysis code: a development build whose
    rules changed without a version bump must not reuse old results."""
    from autograd_lsp import analysis
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
            data = json.loads(_read_regular_file(self._path(key), MAX_ENTRY_BYTES))
            if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
                raise ValueError("not an entry for this key")
            findings = [finding_from_json(item) for item in data["findings"]]
        except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError):
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
            data = json.dumps({"format": FORMAT, "key": key,
                               "findings": [finding_to_json(f) for f in findings]},
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
        # As .ruff_cache does, what we create never shows up in `git status`; but a
        # `.gitignore` of `*` goes only into folders we created ourselves: in a
        # folder given with --cache-dir (the project root, say) it would hide
        # every untracked file of the project.
        for folder in (self.folder, self._entries):
            try:
                folder.mkdir(parents=(folder is self.folder))
            except FileExistsError:
                continue
            (folder / ".gitignore").write_text(_IGNORE_ALL, encoding="utf-8")


def _read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of `path` if it is a regular file (not a link) of at most `limit`
    bytes; OSError or ValueError otherwise. Opening never blocks (a FIFO would)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise ValueError("not a cache entry")
        with os.fdopen(descriptor, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    finally:
        os.close(descriptor)
    if len(data) > limit:
        raise ValueError("not a cache entry")
    return data


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
    """A finding from an entry; TypeError or ValueError unless it is one we could
    have written: a real rule's code and name, a severity, sane positions, text
    without control characters."""
    from autograd_lsp.analysis import SEVERITIES, Finding
    code, name, severity, message, line, column, end_line, end_column, fixes = item
    if _rule_names().get(code) != name or severity not in SEVERITIES \
            or not _clean_text(message) or not _positions(line, column, end_line, end_column) \
            or not isinstance(fixes, list):
        raise TypeError("not a finding")
    return Finding(code, name, severity, message, line, column, end_line, end_column,
                   tuple(_fix_from_json(fix) for fix in fixes))


def _fix_from_json(item: list) -> Fix:
    from autograd_lsp.analysis import Fix
    title, safe, edits = item
    if not _clean_text(title) or not isinstance(safe, bool) or not isinstance(edits, list):
        raise TypeError("not a fix")
    return Fix(title, tuple(_edit_from_json(e) for e in edits), safe)


def _edit_to_json(edit: TextEdit) -> list:
    return [edit.line, edit.column, edit.end_line, edit.end_column, edit.new_text]


def _edit_from_json(item: list) -> TextEdit:
    from autograd_lsp.analysis import TextEdit
    line, column, end_line, end_column, new_text = item
    if not _positions(line, column, end_line, end_column) or not isinstance(new_text, str):
        raise TypeError("not an edit")
    return TextEdit(line, column, end_line, end_column, new_text)


@lru_cache(maxsize=1)
def _rule_names() -> dict:
    from autograd_lsp.analysis import SYNTAX_CODE, SYNTAX_NAME, all_rules
    return {SYNTAX_CODE: SYNTAX_NAME, **{rule.code: rule.name for rule in all_rules()}}


def _positions(line, column, end_line, end_column) -> bool:
    values = (line, column, end_line, end_column)
    return all(type(v) is int for v in values) and line >= 1 and column >= 0 \
        and (end_line, end_column) >= (line, column)


def _clean_text(text) -> bool:
    # Our messages and titles never hold control characters: such text was not written by us.
    return isinstance(text, str) and text.isprintable()
