"""Where a package's `__init__.py` gets a name from, read from its text alone.

`from timm.layers import DropPath` needs the one submodule that defines
`DropPath`, not the sixty that `timm/layers/__init__.py` imports: running them
all costs seconds, for every file that imports the package. Most `__init__`s only
re-export. Then the last top-level statement that binds the name says where its
value comes from, and the workspace follows that instead of running the whole
`__init__`:

- `from .sub import name` (or `... import other as name`): the submodule's `other`;
- `from .sub import *`, when `sub` binds the name: the submodule's `name`;
- `from . import name`: the submodule `name` itself;
- no statement binds it: the submodule `pkg.name`, as Python would import it.

Anything else that binds the name (an assignment, a `def`, a `try` around its
import, a star import whose names are not known) means running the `__init__`,
as before. The walker binds for `*` every name the module's run bound (not only
`__all__`), so the names a star import gives are read the same way here.
"""
from __future__ import annotations

import ast

from autograd_lsp.analysis.records import record


@record
class FromImport:
    """`from <module> import <name>` (relative by `level`)."""
    module: str
    level: int
    name: str


@record
class StarImport:
    """`from <module> import *`."""
    module: str
    level: int


@record
class Submodule:
    """`from . import <name>` in the package's own `__init__`."""
    name: str


# The name's value is only known by running the module.
RUN = "run"
# No statement binds the name.
NOT_BOUND = "not bound"


@record(eq=False)
class TopLevel:
    """One module's top-level bindings, in order: (name or "*", how)."""
    bindings: tuple


def top_level(tree: ast.Module) -> TopLevel:
    bindings = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    bindings.append(("*", StarImport(node.module or "", node.level)))
                elif not node.module and node.level == 1:
                    bindings.append((alias.asname or alias.name, Submodule(alias.name)))
                elif node.module:
                    bindings.append((alias.asname or alias.name,
                                     FromImport(node.module, node.level, alias.name)))
                else:
                    bindings.append((alias.asname or alias.name, RUN))
        else:
            for name in _top_level_names(node):
                bindings.append((name, RUN))
    return TopLevel(tuple(bindings))


def binder(scan: TopLevel, name: str, exports) -> object:
    """How the module binds `name` at its end: a FromImport, a Submodule, RUN or
    NOT_BOUND. `exports(star)` gives the names a star import binds (None: unknown)."""
    for bound, how in reversed(scan.bindings):
        if bound == "*" and how is RUN:
            return RUN          # a star import under `try` or `if`: its names are unknown
        if bound == "*":
            names = exports(how)
            if names is None:
                return RUN
            if name in names:
                return FromImport(how.module, how.level, name)
        elif bound == name:
            return how
    return NOT_BOUND


def names_bound(scan: TopLevel, exports) -> frozenset | None:
    """Every name the module binds (what `from module import *` gives in the
    walker: all but dunder names), or None when a star import's names are unknown."""
    names = set()
    for bound, how in scan.bindings:
        if bound == "*" and how is RUN:
            return None
        if bound == "*":
            more = exports(how)
            if more is None:
                return None
            names |= more
        elif not bound.startswith("__"):
            names.add(bound)
    return frozenset(names)


def _top_level_names(node) -> list:
    """Names a top-level statement binds, looking into compound statements but not
    into the bodies of functions and classes."""
    names = []

    def targets(target):
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.append(sub.id)

    def visit(stmt):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(stmt.name)
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                names.append(alias.asname or alias.name.split(".")[0])
            return
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                targets(target)
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            targets(stmt.target)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            targets(stmt.target)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    targets(item.optional_vars)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                targets(target)
        elif isinstance(stmt, ast.Global):
            names.extend(stmt.names)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            for handler in stmt.handlers:
                if handler.name:
                    names.append(handler.name)
        # Walrus targets anywhere in the statement's expressions.
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                visit(child)
            elif not isinstance(child, ast.excepthandler):
                for sub in ast.walk(child):
                    if isinstance(sub, ast.NamedExpr):
                        targets(sub.target)
        for handler in getattr(stmt, "handlers", ()):
            for child in handler.body:
                visit(child)
        for case in getattr(stmt, "cases", ()):
            for sub in ast.walk(case.pattern):
                name = getattr(sub, "name", None)
                if isinstance(name, str):
                    names.append(name)
            for child in case.body:
                visit(child)

    visit(node)
    return names
