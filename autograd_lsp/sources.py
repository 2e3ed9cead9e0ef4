"""Finding the Python files to check and reading them as text.

Reading is careful because the command line must never stop on one bad file:
every problem becomes a `SourceError` with a one-line reason, and the caller
moves on to the next file.
"""
from __future__ import annotations

import codecs
import os
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

# Folders that hold tools' or other projects' files, never the code under check.
SKIPPED_FOLDERS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "build", "node_modules",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ci-venv",
    # Jupyter's autosaved copies of the notebooks beside them.
    ".ipynb_checkpoints",
})
# What a folder walk checks: Python files and Jupyter notebooks.
CHECKED_SUFFIXES = (".py", ".ipynb")


class SourceError(Exception):
    """A path that cannot be checked; str() is the reason, without the path."""


@dataclass
class SourceFile:
    path: Path
    text: str
    # How to write the text back unchanged apart from the edits (PEP 263 cookie or BOM).
    encoding: str = "utf-8"
    # The bytes read, to notice a change made to the file before writing it back.
    data: bytes = b""


def discover(paths: list[str], is_excluded: Callable[[Path], bool]) -> Iterator[tuple[Path, str | None]]:
    """(path, None) for each Python file or notebook under `paths`, in a stable
    order, or (path, reason) for an argument that does not exist or a folder that
    cannot be read. A file named explicitly is checked whatever its suffix;
    folders contribute their `*.py` and `*.ipynb` files."""
    seen: set[Path] = set()
    for argument in paths:
        root = Path(argument)
        if not os.path.lexists(root):
            yield root, "no such file or folder"
            continue
        if root.is_dir():
            for file, reason in _walk(root, is_excluded):
                if reason is not None:
                    yield file, reason
                elif file not in seen:
                    seen.add(file)
                    yield file, None
        elif root not in seen and not is_excluded(root):
            seen.add(root)
            yield root, None


def _walk(root: Path, is_excluded: Callable[[Path], bool]) -> Iterator[tuple[Path, str | None]]:
    unreadable: list[OSError] = []
    for folder, subfolders, files in os.walk(root, onerror=unreadable.append):
        # os.walk skips a folder it cannot list; say so instead of checking less in silence.
        while unreadable:
            error = unreadable.pop()
            yield Path(error.filename or folder), f"cannot read folder: {error.strerror or error}"
        here = Path(folder)
        # Pruning in place keeps os.walk out of skipped folders entirely.
        subfolders[:] = sorted(name for name in subfolders
                               if name not in SKIPPED_FOLDERS
                               and not name.endswith(".egg-info")
                               and not is_excluded(here / name))
        for name in sorted(files):
            if name.endswith(CHECKED_SUFFIXES):
                path = here / name
                if not is_excluded(path):
                    yield path, None
    while unreadable:
        error = unreadable.pop()
        yield Path(error.filename or root), f"cannot read folder: {error.strerror or error}"


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
        encoding, _ = tokenize.detect_encoding(_first_lines(data))
    except SyntaxError as exc:
        if "unknown encoding" in str(exc):
            raise SourceError(f"cannot decode: {exc}") from None
        # Undecodable bytes in the first two lines: say where, as for the rest.
        encoding = "utf-8"
    try:
        if not codecs.lookup(encoding)._is_text_encoding:
            raise SourceError(f"cannot decode: {encoding} is not a text encoding") from None
    except LookupError:
        raise SourceError(f"cannot decode: unknown encoding {encoding}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError(f"not valid {_encoding_label(encoding)} (byte 0x{data[exc.start]:02x} "
                          f"on line {line}), skipped") from None
    if text.startswith("\ufeff"):
        # The BOM is not part of the code; positions start after it, as in editors.
        text = text[1:]
    return SourceFile(path, text, encoding, data)


def write_source(source: SourceFile, text: str) -> None:
    """Replace the file's content with `text`, in its original encoding (and BOM),
    unless the file changed since it was read. The new content goes to a
    temporary file beside it, which then replaces it: a crash or a full disk
    never leaves half a file. Raises SourceError."""
    try:
        data = text.encode(source.encoding)
    except UnicodeEncodeError:
        raise SourceError(f"the fixed text cannot be encoded as {source.encoding}") from None
    try:
        # Through a symbolic link, the file it points to is the one to replace.
        target = Path(os.path.realpath(source.path))
        if target.read_bytes() != source.data:
            raise SourceError("changed while it was being fixed; not written")
        mode = stat.S_IMODE(target.stat().st_mode)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                             suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            os.chmod(temporary, mode)
            os.replace(temporary, target)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
    except OSError as exc:
        raise SourceError(f"cannot write: {exc.strerror or exc}") from None
    source.text, source.data = text, data


_BYTE_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def _first_lines(data: bytes):
    """A readline over the first two lines of `data`, ended as Python ends them:
    a coding cookie in a file with "\r" line ends is still on line one or two."""
    lines = iter(match.group(0) for _, match in zip(range(2), _BYTE_LINE.finditer(data)))
    return lambda: next(lines, b"")


def _encoding_label(encoding: str) -> str:
    return "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding
