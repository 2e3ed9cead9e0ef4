"""The other modules of the project a file imports: `from models import Net`,
`from .utils import train_step`, `import project.data as data`.

A module is read from its text (never imported or run by Python): its
module-level code runs in the walker as an imported module (`__name__` is not
"__main__"), and what it binds is what the importer sees, with the objects it
made. Results are cached by path, content and import depth; `forget(path)` drops a module
whose text changed and says which cached modules read it. `from package import
name` runs only the submodule that binds `name` when the package's `__init__`
just re-exports it (`reexported`, analysis/reexports.py).

The core does no I/O: the caller gives `read(path) -> str | None`, which reads
the file (or an editor's unsaved copy).
"""
from __future__ import annotations

import ast
import os
import posixpath
import warnings
from dataclasses import dataclass

from autograd_lsp.analysis import reexports
from autograd_lsp.analysis.chunks import split_chunks
from autograd_lsp.analysis.facts import ModuleNamespace
from autograd_lsp.analysis.state import State
from autograd_lsp.analysis.trace import Context

# How deep imports of imports are followed.
MAX_IMPORT_DEPTH = 4
# Files larger than this are not read for their names.
MAX_MODULE_BYTES = 2_000_000
# How many re-exporting `__init__`s one name is followed through, and how deep
# star imports are read for the names they bind.
MAX_REEXPORT_HOPS = 8
MAX_STAR_DEPTH = 4


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
        self.internal_errors: list[str] = []   # failures of our own while running a module
        self._scans: dict = {}           # path -> (text, reexports.TopLevel or None)
        self._paths: dict = {}           # (name, level, importing folder) -> module_path
        self._trees: dict = {}           # path -> (text, [(chunk index, chunk text, tree)]) of modules run
        self._chunk_trees: dict = {}     # (path, chunk text) -> its tree, for every chunk in `_trees`
        self._run_parts: dict = {}       # path -> the parsed chunks of its last run
        self._relevances: dict = {}      # path -> Relevance of its definitions (None while computed)

    # -- finding modules ------------------------------------------------------------------

    def module_path(self, name: str, level: int, from_path: str | None) -> str | None:
        """The file `import name` (with `level` leading dots) means from `from_path`."""
        # Asked for every import of every module run: remembered (one `stat` per
        # candidate file costs more than the rest of the lookup) until a file of the
        # project is created or changes (`forget`).
        key = (name, level, os.path.dirname(from_path) if from_path is not None else None)
        found = self._paths.get(key, False)
        if found is False:
            found = self._paths[key] = self._find_module(name, level, from_path)
        return found

    def _find_module(self, name: str, level: int, from_path: str | None) -> str | None:
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
        # What a module binds depends on how many levels of its own imports are
        # still followed (cut at MAX_IMPORT_DEPTH from the analysed file), so it is
        # remembered per level: a module first met deep in one file's imports, its
        # imports cut, would otherwise stand truncated for every later importer,
        # and findings would depend on the order files are checked in.
        key = (path, len(self._active))
        cached = self._modules.get(key)
        if cached is not None and cached.text == text:
            return cached.namespace
        self._active.append(path)
        try:
            namespace, imports = self._run(path, text, name)
        except Exception as exc:  # noqa: BLE001 - a bug of ours in one module must not cost its importers
            # Remembered like a module that ran: an import acts as one of unknown
            # code, once, instead of failing every importer's analysis again.
            self.internal_errors.append(f"{path}: {type(exc).__name__}: {exc}")
            namespace, imports = None, set()
        finally:
            self._active.pop()
        self._modules[key] = _Module(text, namespace, imports)
        return namespace

    def modules_run(self) -> set:
        """The paths of the modules whose code has been run (and is remembered)."""
        return {path for path, _ in self._modules}

    def reexported(self, name: str, level: int, from_path: str | None, member: str):
        """What `from name import member` binds, without running a package
        `__init__` that only re-exports it (see analysis/reexports.py):
        (namespace, attribute or None for the namespace itself, paths read), or
        None when the whole module must run (or is not the project's)."""
        read = []
        for _ in range(MAX_REEXPORT_HOPS):
            path = self.module_path(name, level, from_path)
            if path is None:
                return None
            if os.path.basename(path) != "__init__.py":
                namespace = self.module_namespace(name, level, from_path)
                return None if namespace is None else (namespace, member, read)
            scan = self._scan(path)
            if scan is None:
                return None
            read.append(path)
            # Passing through an `__init__` runs nothing, so it does not count as a
            # level of imports: the module that binds the name is the next level.
            how = reexports.binder(scan, member, lambda star: self._star_names(star, path, 0))
            if how is reexports.NOT_BOUND or isinstance(how, reexports.Submodule):
                sub = member if how is reexports.NOT_BOUND else how.name
                if self.module_path(sub, 1, path) is None:
                    return None
                namespace = self.module_namespace(sub, 1, path)
                return None if namespace is None else (namespace, None, read)
            if not isinstance(how, reexports.FromImport):
                return None
            name, level, from_path, member = how.module, how.level, path, how.name
        return None

    def _star_names(self, star, from_path: str, depth: int):
        """The names `from star.module import *` binds; None when unknown. A module
        outside the project binds none in the walker."""
        path = self.module_path(star.module, star.level, from_path)
        if path is None:
            return frozenset() if star.level == 0 else None
        if depth >= MAX_STAR_DEPTH:
            return None
        scan = self._scan(path)
        if scan is None:
            return None
        return reexports.names_bound(scan, lambda inner: self._star_names(inner, path, depth + 1))

    def _scan(self, path: str):
        text = self._read(path)
        if text is None or len(text) > MAX_MODULE_BYTES:
            return None
        cached = self._scans.get(path)
        if cached is not None and cached[0] == text:
            return cached[1]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scan = reexports.top_level(ast.parse(text))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            scan = None
        self._scans[path] = (text, scan)
        return scan

    def forget(self, path: str) -> set:
        """The text of `path` changed: what was read from it (and from modules that
        import it) is read again next time. Returns those modules' paths, `path`
        among them: an analysis that read any of them is out of date."""
        path = os.path.normpath(os.path.abspath(path))
        self._paths.clear()     # the file may be new: imports may now find it
        stale = {path}
        changed = True
        while changed:
            changed = False
            for (other, _), module in self._modules.items():
                if other not in stale and module.imports & stale:
                    stale.add(other)
                    changed = True
        for key in [key for key in self._modules if key[0] in stale]:
            del self._modules[key]
        self._forget_trees(path)
        self._relevances.clear()
        return stale

    # -- what calling the project's code may do -------------------------------------------------

    def may_matter(self, value) -> bool:
        """Whether calling `value`, a name the analysed file imported from the project,
        may run anything a rule reads (analysis/relevance.py): False only for a
        function or class of a module this workspace ran whose definitions do not
        (a layer, a metric, a config helper). Unknown values may."""
        from autograd_lsp.analysis.facts import ClassValue, FunctionValue
        if isinstance(value, ModuleNamespace):
            return any(self.may_matter(v) for _, v in value.names if _callable_code(v))
        if not isinstance(value, (FunctionValue, ClassValue)):
            return True
        key = getattr(value.source, "key", None)
        path = key[0] if isinstance(key, tuple) and key and isinstance(key[0], str) else None
        relevance = self._relevance_of(path) if path is not None else None
        if relevance is None:
            return True
        return relevance.may_matter(value.node)

    def _relevance_of(self, path: str):
        """The Relevance of a module's definitions, the names it imports from the
        project weighed the same way (a module met again while its own is computed,
        in an import cycle, is taken to matter: None)."""
        from autograd_lsp.analysis.relevance import Relevance
        if path in self._relevances:
            return self._relevances[path]
        parts = self._run_parts.get(path)
        namespace = next((m.namespace for (p, _), m in self._modules.items() if p == path and m.namespace), None)
        if parts is None or namespace is None:
            return None
        self._relevances[path] = None
        bound = dict(namespace.names)
        imported = {name for name in project_imports(self, [p.tree for p in parts], path)
                    if name not in bound or self.may_matter(bound[name])}
        relevance = self._relevances[path] = Relevance(parts, imported)
        return relevance

    # -- reading one module ---------------------------------------------------------------------

    def _parsed(self, path: str, text: str) -> list:
        """The parsed chunks of a module, kept while its text stays the same: a module
        runs once per import depth and is imported by many files of one process, and
        its parse costs about as much as its run. (The walker never changes a tree.)"""
        cached = self._trees.get(path)
        if cached is None or cached[0] != text:
            self._forget_trees(path)
            cached = self._trees[path] = (text, _parse_chunks(text))
            for _, chunk_text, tree in cached[1]:
                self._chunk_trees[(path, chunk_text)] = tree
        return cached[1]

    def tree_of(self, path: str, chunk_text: str):
        """The tree of a chunk of the module at `path`, when this workspace parsed it
        (a module imported, then checked itself: the CLI would parse it twice)."""
        return self._chunk_trees.get((os.path.abspath(path), chunk_text))

    def summaries_of(self, path: str, chunk_text: str):
        """The relevance summaries kept with a chunk of the module at `path` when this
        workspace ran it (`tree_of` gives its tree: what is read from that tree holds
        for the file's own check too), or None."""
        for part in self._run_parts.get(os.path.abspath(path), ()):
            if part.text == chunk_text:
                return part.relevance_summaries
        return None

    def _forget_trees(self, path: str) -> None:
        self._run_parts.pop(path, None)
        old = self._trees.pop(path, None)
        if old is not None:
            for _, chunk_text, _ in old[1]:
                self._chunk_trees.pop((path, chunk_text), None)

    def _run(self, path: str, text: str, name: str):
        from autograd_lsp.analysis.engine import ParsedChunk
        from autograd_lsp.analysis.walker import Frame, ModuleContext, Walker
        imports: set = set()

        def resolve(child, level, from_path):
            found = self.module_namespace(child, level, from_path)
            if found is not None:
                imports.add(found.path)
            return found

        def reexported(child, level, from_path, member):
            found = self.reexported(child, level, from_path, member)
            if found is not None:
                imports.add(found[0].path)
                imports.update(found[2])
            return found

        context = ModuleContext(name or posixpath.basename(path), path, resolve, reexported)
        walker = Walker(record_seen=False)
        state = State()
        names = state.names
        ctx = Context(no_grad=False)
        parts = []
        # (What is read from a tree holds for every run of it: kept across import depths.)
        summaries = {part.text: part.relevance_summaries for part in self._run_parts.get(path, ())}
        for index, chunk_text, tree in self._parsed(path, text):
            part = ParsedChunk(chunk_text, tree, (path, hash(chunk_text), index))
            part.relevance_summaries = summaries.get(chunk_text, part.relevance_summaries)
            parts.append(part)
            part.module_names = state.names
            frame = Frame(None, part, None, prefix=part.key, module=context)
            try:
                walker.run_module(tree, state, frame, ctx)
            except RecursionError:
                break
            state.reachable = True
            names = state.names
        self._run_parts[path] = parts
        exported = tuple((k, v) for k, v in names.items() if not k.startswith("__"))
        # Every importer takes these objects (walker._reach_module_objects): one flat
        # layer is read without copying.
        state.heap.fold()
        state.tensors.fold()
        # Functions of this module read its names, whatever module calls them (not
        # those it imported from another module: they read their own module's).
        for part in _parts_of(exported):
            if part.key[0] == path:
                part.module_names = names
        return ModuleNamespace(path, exported, state), imports


def project_imports(workspace, trees, path) -> set:
    """Names bound by imports of the project's own modules in these module trees."""
    names = set()
    for tree in trees:
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                if node.level or (workspace is not None and node.module and
                                  workspace.module_path(node.module, 0, path) is not None):
                    names.update(a.asname or a.name for a in node.names)
            elif isinstance(node, ast.Import) and workspace is not None:
                for alias in node.names:
                    if workspace.module_path(alias.name, 0, path) is not None:
                        names.add(alias.asname or alias.name.split(".")[0])
    return names


def _callable_code(value) -> bool:
    """A value of a module's namespace whose call may run code: anything but plain
    data and the names of libraries."""
    from autograd_lsp.analysis.facts import ExternalName, NoneValue, NumberValue, StrValue, TorchName
    return not isinstance(value, (NumberValue, StrValue, NoneValue, TorchName, ExternalName))


def _parse_chunks(text: str) -> list:
    """(index among the chunks, chunk text, tree) of each chunk of `text` that parses."""
    parsed = []
    for index, chunk in enumerate(split_chunks(text)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed.append((index, chunk.text, ast.parse(chunk.text)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return parsed


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
