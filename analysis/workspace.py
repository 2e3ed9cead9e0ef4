"""The other modules of the project a file imports: `from models import Net`,
`from .utils import train_step`, `import project.data as data`.

A module is read from its text (never imported or run by Python): its
module-level code runs in the walker as an imported module (`__name__` is not
"__main__"), and what it binds is what the importer sees, with the objects it
made. Results are cached by path and content; `forget(path)` drops a module
whose text changed and says which cached modules read it.

The core does no I/O: the caller gives `read(path) -> str | None`, which reads
the file (or an editor's unsaved copy).
"""
from __future__ import annotations

import ast
import os
import posixpath
import warnings
from dataclasses import dataclass

from autograd_lsp.analysis.chunks import split_chunks
from autograd_lsp.analysis.facts import ModuleNamespace
from autograd_lsp.analysis.state import State
from autograd_lsp.analysis.trace import Context

# How deep imports of imports are followed.
MAX_IMPORT_DEPTH = 4
# Files larger than this are not read for their names.
MAX_MODULE_BYTES = 2_000_000


@dataclass
class _Module:
    text: str
    namespace: ModuleNamespace | None
    imports: set


class Workspace:
    def __init__(self, root: str, read, exists=None):
        self.root = os.path.abspath(root)
        self._read = read
        self._exists = exists or (lambda path: read(path) is not None)
        self._modules: dict = {}
        self._active: list = []

    # -- finding modules ------------------------------------------------------------------

    def module_path(self, name: str, level: int, from_path: str | None) -> str | None:
        """The file `import name` (with `level` leading dots) means from `from_path`."""
        parts = [p for p in name.split(".") if p] if name else []
        if level:
            if from_path is None:
                return None
            base = os.path.dirname(os.path.abspath(from_path))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            bases = []
            if from_path is not None:
                bases.append(os.path.dirname(os.path.abspath(from_path)))
            bases.append(self.root)
            src = os.path.join(self.root, "src")
            bases.append(src)
        for base in bases:
            if not _inside(base, self.root):
                continue
            stem = os.path.join(base, *parts) if parts else base
            for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
                if _inside(candidate, self.root) and self._exists(candidate):
                    return os.path.normpath(candidate)
        return None

    def module_namespace(self, name: str, level: int, from_path: str | None):
        """What importing `name` binds, or None when it is not a module of the project."""
        path = self.module_path(name, level, from_path)
        if path is None or path in self._active or len(self._active) >= MAX_IMPORT_DEPTH:
            return None
        text = self._read(path)
        if text is None or len(text) > MAX_MODULE_BYTES:
            return None
        cached = self._modules.get(path)
        if cached is not None and cached.text == text:
            return cached.namespace
        self._active.append(path)
        try:
            namespace, imports = self._run(path, text, name)
        finally:
            self._active.pop()
        self._modules[path] = _Module(text, namespace, imports)
        return namespace

    def forget(self, path: str) -> set:
        """The text of `path` changed: what was read from it (and from modules that
        import it) is read again next time. Returns those modules' paths, `path`
        among them: an analysis that read any of them is out of date."""
        path = os.path.normpath(os.path.abspath(path))
        stale = {path}
        changed = True
        while changed:
            changed = False
            for other, module in self._modules.items():
                if other not in stale and module.imports & stale:
                    stale.add(other)
                    changed = True
        for other in stale:
            self._modules.pop(other, None)
        return stale

    # -- reading one module ---------------------------------------------------------------------

    def _run(self, path: str, text: str, name: str):
        from autograd_lsp.analysis.engine import ParsedChunk
        from autograd_lsp.analysis.walker import Frame, ModuleContext, Walker
        imports: set = set()

        def resolve(child, level, from_path):
            found = self.module_namespace(child, level, from_path)
            if found is not None:
                imports.add(found.path)
            return found

        context = ModuleContext(name or posixpath.basename(path), path, resolve)
        walker = Walker()
        state = State()
        names = state.names
        ctx = Context(no_grad=False)
        for index, chunk in enumerate(split_chunks(text)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tree = ast.parse(chunk.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            part = ParsedChunk(chunk.text, tree, (path, hash(chunk.text), index))
            part.module_names = state.names
            frame = Frame(None, part, None, prefix=part.key, module=context)
            try:
                walker.run_module(tree, state, frame, ctx)
            except RecursionError:
                break
            state.reachable = True
            names = state.names
        exported = tuple((k, v) for k, v in names.items() if not k.startswith("__"))
        # Functions of this module read its names, whatever module calls them (not
        # those it imported from another module: they read their own module's).
        for part in _parts_of(exported):
            if part.key[0] == path:
                part.module_names = names
        return ModuleNamespace(path, exported, state), imports


def _parts_of(exported) -> set:
    from autograd_lsp.analysis.facts import ClassValue, FunctionValue
    parts = set()
    for _, value in exported:
        if isinstance(value, FunctionValue):
            parts.add(value.source)
        elif isinstance(value, ClassValue):
            parts.add(value.source)
    return parts


def _inside(path: str, root: str) -> bool:
    path, root = os.path.abspath(path), os.path.abspath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
