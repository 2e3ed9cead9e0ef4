"""What one module says about itself, read from all chunks: torch imports,
functions defined at top level and what they do to gradients, and a few
module-wide settings that change torch's defaults.

Computed per chunk (cached by the chunk's text) and merged; function bodies and
module code read it instead of the whole file.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from analysis.names import dotted, imports_of

# Calls that clear gradients of whatever they are called on.
_CLEARING_METHODS = {"zero_grad", "zero_"}


@dataclass(frozen=True)
class FunctionSummary:
    name: str
    calls_backward: bool = False
    clears_grads: bool = False
    steps: bool = False
    # Functions it calls by plain name (for following helpers one level further).
    calls: frozenset = frozenset()


@dataclass(frozen=True)
class ChunkSummary:
    aliases: tuple = ()                  # (local, qualified) pairs
    functions: tuple = ()                # FunctionSummary items
    changes_default_dtype: bool = False
    # Names bound by top-level `def`/`class`: they hide an imported name of the same spelling.
    defined: tuple = ()


@dataclass(frozen=True)
class ModuleSummary:
    aliases: tuple = ()
    functions: tuple = ()
    changes_default_dtype: bool = False

    @staticmethod
    def merge(parts: list[ChunkSummary]) -> "ModuleSummary":
        aliases: dict[str, str] = {}
        functions: dict[str, FunctionSummary] = {}
        changes = False
        defined: set[str] = set()
        for part in parts:
            aliases.update(part.aliases)
            for fn in part.functions:
                functions[fn.name] = fn
            changes = changes or part.changes_default_dtype
            defined.update(part.defined)
        for name in defined:
            aliases.pop(name, None)
        return ModuleSummary(tuple(sorted(aliases.items())), tuple(sorted(functions.items())), changes)

    def function(self, name: str) -> FunctionSummary | None:
        for key, fn in self.functions:
            if key == name:
                return fn
        return None

    def effects(self, name: str, depth: int = 3) -> FunctionSummary | None:
        """The summary of `name` with the effects of the helpers it calls folded in."""
        fn = self.function(name)
        if fn is None:
            return None
        seen = {name}
        frontier = list(fn.calls)
        calls_backward, clears, steps = fn.calls_backward, fn.clears_grads, fn.steps
        for _ in range(depth):
            nxt = []
            for callee in frontier:
                if callee in seen:
                    continue
                seen.add(callee)
                other = self.function(callee)
                if other is None:
                    continue
                calls_backward |= other.calls_backward
                clears |= other.clears_grads
                steps |= other.steps
                nxt.extend(other.calls)
            frontier = nxt
        return FunctionSummary(name, calls_backward, clears, steps, fn.calls)


def summarize_chunk(module: cst.Module) -> ChunkSummary:
    aliases: dict[str, str] = {}
    functions: list[FunctionSummary] = []
    defined: list[str] = []
    changes = False

    def visit_block(statements):
        nonlocal changes
        for stmt in statements:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        aliases.update(imports_of(small))
                    elif isinstance(small, cst.Expr) and _is_default_dtype_change(small.value):
                        changes = True
            elif isinstance(stmt, cst.FunctionDef):
                functions.append(summarize_function(stmt))
                defined.append(stmt.name.value)
            elif isinstance(stmt, cst.ClassDef):
                defined.append(stmt.name.value)
            elif isinstance(stmt, (cst.If, cst.Try)):
                # `try: import torch` and `if TYPE_CHECKING:` blocks
                visit_block(stmt.body.body)
                for part in _branches(stmt):
                    visit_block(part)

    visit_block(module.body)
    return ChunkSummary(tuple(aliases.items()), tuple(functions), changes, tuple(defined))


def _branches(stmt):
    if isinstance(stmt, cst.If):
        orelse = stmt.orelse
        while orelse is not None:
            yield orelse.body.body
            orelse = getattr(orelse, "orelse", None)
    else:
        for handler in stmt.handlers:
            yield handler.body.body
        if stmt.orelse is not None:
            yield stmt.orelse.body.body
        if stmt.finalbody is not None:
            yield stmt.finalbody.body.body


def _is_default_dtype_change(expr) -> bool:
    return isinstance(expr, cst.Call) and (dotted(expr.func) or "").endswith(
        ("set_default_dtype", "set_default_tensor_type"))


class _EffectsCollector(cst.CSTVisitor):
    def __init__(self):
        self.calls_backward = False
        self.clears = False
        self.steps = False
        self.calls: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            name = func.attr.value
            if name == "backward":
                self.calls_backward = True
            elif name in _CLEARING_METHODS and _mentions_grad_or_model(func.value, name):
                self.clears = True
            elif name == "step":
                self.steps = True
        elif isinstance(func, cst.Name):
            self.calls.add(func.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        # `p.grad = None`
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and target.target.attr.value == "grad":
                self.clears = True

    def visit_Del(self, node: cst.Del) -> None:
        if isinstance(node.target, cst.Attribute) and node.target.attr.value == "grad":
            self.clears = True


def _mentions_grad_or_model(receiver, method: str) -> bool:
    # `zero_grad()` on anything clears; `zero_()` only counts on a `.grad`.
    if method == "zero_grad":
        return True
    text = dotted(receiver) or ""
    return text.endswith(".grad") or text.endswith(".grad.data")


def summarize_function(node: cst.FunctionDef) -> FunctionSummary:
    collector = _EffectsCollector()
    node.body.visit(collector)
    return FunctionSummary(node.name.value, collector.calls_backward, collector.clears,
                           collector.steps, frozenset(collector.calls))
