"""Finding the Python files to check and reading them as text.

Reading is careful because the command line must never stop on one bad file:
every problem becomes a `SourceError` with a one-line reason, and the caller
moves on to the next file.
"""
from __future__ import annotations

import io
import os
import stat
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

# Folders that hold tools' or other projects' files, never the code under check.
SKIPPED_FOLDERS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "build", "node_modules",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ci-venv",
})


class SourceError(Exception):
    """A path that cannot be checked; str() is the reason, without the path."""


@dataclass
class SourceFile:
    path: Path
    text: str
    # How to write the text back unchanged apart from the edits (PEP 263 cookie or BOM).
    encoding: str = "utf-8"


def discover(paths: list[str], is_excluded: Callable[[Path], bool]) -> Iterator[tuple[Path, str | None]]:
    """(path, None) for each Python file under `paths`, in a stable order, or
    (path, reason) for an argument that does not exist. A file named explicitly is
    checked whatever its suffix; folders contribute their `*.py` files."""
    seen: set[Path] = set()
    for argument in paths:
        root = Path(argument)
        if not os.path.lexists(root):
            yield root, "no such file or folder"
            continue
        if root.is_dir():
            for file in _walk(root, is_excluded):
                if file not in seen:
                    seen.add(file)
                    yield file, None
        elif root not in seen and not is_excluded(root):
            seen.add(root)
            yield root, None


def _walk(root: Path, is_excluded: Callable[[Path], bool]) -> Iterator[Path]:
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        # Pruning in place keeps os.walk out of skipped folders entirely.
        subfolders[:] = sorted(name for name in subfolders
                               if name not in SKIPPED_FOLDERS
                               and not name.endswith(".egg-info")
                               and not is_excluded(here / name))
        for name in sorted(files):
            if name.endswith(".py"):
                path = here / name
                if not is_excluded(path):
                    yield path


def read_source(path: Path) -> SourceFile:
    """The file's text, decoded as Python would (UTF-8 unless a coding cookie or
    BOM says otherwise). Raises SourceError."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            # Reading a FIFO or a device could block forever or never end.
            raise SourceError("not a regular file, skipped")
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    if b"\x00" in data:
        raise SourceError("binary file (contains NUL bytes), skipped")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "unknown encoding" in str(exc):
            raise SourceError(f"cannot decode: {exc}") from None
        # Undecodable bytes in the first two lines: say where, as for the rest.
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError(f"not valid {_encoding_label(encoding)} (byte 0x{data[exc.start]:02x} "
                          f"on line {line}), skipped") from None
    if text.startswith("\ufeff"):
        # The BOM is not part of the code; positions start after it, as in editors.
        text = text[1:]
    return SourceFile(path, text, encoding)


def write_source(source: SourceFile, text: str) -> None:
    """Replace the file's content with `text`, in its original encoding.
    Raises SourceError."""
    try:
        data = text.encode(source.encoding)
    except UnicodeEncodeError:
        raise SourceError(f"the fixed text cannot be encoded as {source.encoding}") from None
    try:
        source.path.write_bytes(data)
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None
    source.text = text


def _encoding_label(encoding: str) -> str:
    return "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
