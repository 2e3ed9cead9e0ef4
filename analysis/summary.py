"""What one module says about itself, read from all chunks: torch imports,
functions defined at top level and what they do to gradients, and a few
module-wide settings that change torch's defaults.

Computed per chunk (cached by the chunk's text) and merged; function bodies and
module code read it instead of the whole file.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass



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
    # Top-level classes: (name, dotted base names, whether its body makes layers with
    # parameters or nn.Parameter).
    classes: tuple = ()
    # The text mentions `.backward(` somewhere (comments too: erring towards quiet).
    mentions_backward: bool = False


@dataclass(frozen=True)
class ModuleSummary:
    aliases: tuple = ()
    functions: tuple = ()
    changes_default_dtype: bool = False
    # nn.Module subclasses defined here: (name, makes parameters visibly).
    module_classes: tuple = ()
    # Some chunk mentions `.backward(`.
    mentions_backward: bool = False

    @staticmethod
    def merge(parts: list[ChunkSummary]) -> "ModuleSummary":
        aliases: dict[str, str] = {}
        functions: dict[str, FunctionSummary] = {}
        changes = False
        defined: set[str] = set()
        classes: dict[str, tuple] = {}
        for part in parts:
            aliases.update(part.aliases)
            for fn in part.functions:
                functions[fn.name] = fn
            changes = changes or part.changes_default_dtype
            defined.update(part.defined)
            for name, bases, makes_params in part.classes:
                classes[name] = (bases, makes_params)
        for name in defined:
            aliases.pop(name, None)
        modules = _module_classes(classes, aliases)
        return ModuleSummary(tuple(sorted(aliases.items())), tuple(sorted(functions.items())), changes,
                             tuple(sorted(modules.items())),
                             any(part.mentions_backward for part in parts))

    def module_class(self, name: str) -> bool | None:
        """For an nn.Module subclass defined here: whether it visibly makes
        parameters; None when `name` is no such class."""
        for key, makes_params in self.module_classes:
            if key == name:
                return makes_params
        return None

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


def _module_classes(classes: dict, aliases: dict) -> dict[str, bool]:
    """Classes deriving (through other local classes too) from torch.nn.Module."""
    def resolve(dotted: str) -> str:
        head, _, rest = dotted.partition(".")
        base = aliases.get(head)
        return (f"{base}.{rest}" if rest else base) if base else dotted

    found: dict[str, bool] = {}
    changed = True
    while changed:
        changed = False
        for name, (bases, makes_params) in classes.items():
            if name in found:
                continue
            parents = [b for b in bases if b in found]
            if any(resolve(b) == "torch.nn.Module" for b in bases) or parents:
                found[name] = makes_params or any(found[p] for p in parents)
                changed = True
    return found


_PARAM_MAKERS = None


def _makes_params(node: ast.ClassDef) -> bool:
    """Whether the class body calls a torch.nn layer that has parameters, or
    nn.Parameter (by the last name of the callee: `nn.Linear`, `Linear`)."""
    global _PARAM_MAKERS
    if _PARAM_MAKERS is None:
        from analysis import torch_api
        _PARAM_MAKERS = set(torch_api.NN_LAYERS_WITH_PARAMS) | {"Parameter"}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            name = _ast_dotted(sub.func).rpartition(".")[2]
            if name in _PARAM_MAKERS:
                return True
    return False


def summarize_chunk(tree: ast.Module | None, text: str = "") -> ChunkSummary:
    """The chunk's summary, read from its `ast` (which parses the same text about
    ten times faster than a libcst visitor walks it). None, when `ast` refused a
    syntax newer than this Python's, gives an empty summary."""
    if tree is None:
        return ChunkSummary(mentions_backward=".backward(" in text)
    return _summarize_ast(tree, ".backward(" in text)


def _summarize_ast(tree: ast.Module, mentions_backward: bool = False) -> ChunkSummary:
    aliases: dict[str, str] = {}
    functions: list[FunctionSummary] = []
    defined: list[str] = []
    classes: list[tuple] = []
    changes = False

    def visit_block(statements):
        nonlocal changes
        for stmt in statements:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                aliases.update(_ast_imports(stmt))
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and _ast_dotted(stmt.value.func).endswith(("set_default_dtype",
                                                              "set_default_tensor_type")):
                changes = True
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append(_summarize_function(stmt))
                defined.append(stmt.name)
            elif isinstance(stmt, ast.ClassDef):
                defined.append(stmt.name)
                bases = tuple(_ast_dotted(b) for b in stmt.bases if _ast_dotted(b))
                classes.append((stmt.name, bases, _makes_params(stmt)))
            elif isinstance(stmt, ast.If):
                # `if TYPE_CHECKING:` blocks
                visit_block(stmt.body)
                visit_block(stmt.orelse)
            elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                # `try: import torch`
                visit_block(stmt.body)
                for handler in stmt.handlers:
                    visit_block(handler.body)
                visit_block(stmt.orelse)
                visit_block(stmt.finalbody)

    visit_block(tree.body)
    return ChunkSummary(tuple(aliases.items()), tuple(functions), changes, tuple(defined),
                        tuple(classes), mentions_backward)


def _ast_imports(stmt) -> dict[str, str]:
    """Local name -> qualified name for the torch imports of one statement."""
    found: dict[str, str] = {}
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.name.split(".")[0] != "torch":
                continue
            if alias.asname:
                found[alias.asname] = alias.name
            else:
                found[alias.name.split(".")[0]] = alias.name.split(".")[0]
    elif stmt.module and not stmt.level and stmt.module.split(".")[0] == "torch":
        for alias in stmt.names:
            if alias.name != "*":
                found[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
    return found


def _ast_dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _summarize_function(node) -> FunctionSummary:
    calls_backward = clears = steps = False
    calls: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            if isinstance(func, ast.Attribute):
                if func.attr == "backward":
                    calls_backward = True
                elif func.attr == "zero_grad":
                    clears = True
                elif func.attr == "zero_" and _ast_dotted(func.value).endswith((".grad", ".grad.data")):
                    clears = True
                elif func.attr == "step":
                    steps = True
            elif isinstance(func, ast.Name):
                calls.add(func.id)
        elif isinstance(sub, ast.Assign):
            # `p.grad = None`
            if any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in sub.targets):
                clears = True
        elif isinstance(sub, ast.Delete):
            if any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in sub.targets):
                clears = True
    return FunctionSummary(node.name, calls_backward, clears, steps, frozenset(calls))
