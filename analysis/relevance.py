"""Which functions can hold a finding when run on their own.

Every function no call reached is run on its own with unknown parameters. In a
file of model code most of them (`__init__`s, `forward`s, metric helpers) touch
nothing a rule reads: no backward, no `.grad`, no optimizer, no grad mode, no
in-place change of what may be a parameter, no conversion that cuts a graph.
Running them costs most of the analysis of such a file and finds nothing.

A function *may matter* when its own text holds one of the marks below, or when
it calls a function or class of the module that may matter (followed through
the module's definitions, by name), or calls something that may be a module
(`self.encoder(x)`, `model(x)`) while some class's `forward` may matter, or calls
a name imported from elsewhere in the project. The marks are deliberately broad:
a function wrongly kept costs time, a function wrongly skipped loses findings.
The equality of findings with and without this filter is tested over the
project's own cases.
"""
from __future__ import annotations

import ast
import builtins
import re

from autograd_lsp.analysis.records import record
from autograd_lsp.analysis.tree import nodes

# Words and shapes in a function's text that a rule may act on.
_MARKS = re.compile(r"""
      backward | \.grad\b | \bgrad\s*\( | autograd | requires_grad | Parameter
    | \boptim\.\w+\s*\( | \b(?:SGD|Adam|AdamW|RMSprop|Adagrad|LBFGS)\s*\( | zero_grad | \.step\b | numpy | \bnp\. | gradcheck | gradgradcheck
    | \.eval\b | \.train\b | \btraining\s*=(?!=) | Variable | volatile | \.data\b | retain_
    | \b(?:tensor|Tensor|[A-Z][a-z]*Tensor|as_tensor|from_numpy)\s*\(
    | (?:no_grad|enable_grad|inference_mode|set_grad_enabled)\b(?!\s*\()
    | \.[A-Za-z]\w*[A-Za-z0-9]_\s*\(          # an in-place method: x.add_(...), nn.init.normal_(...)
""", re.X)

# A literal index (`t[0]`) next to something that makes a 0-dim tensor.
_REDUCES = re.compile(r"loss|criterion|\.(?:sum|mean|norm|prod|max|min|std|var|dot|median|"
                      r"logsumexp|amax|amin|all|any|trace|det)\s*\(")

# A call into the project's other modules: what it does is not read here.
_ANYTHING = object()
# A call of something that may be a module: it may run any class's `forward`.
_FORWARDS = "forwards"


class Relevance:
    """`may_matter(function_node)` for the definitions of one module's chunks.

    Which definitions may matter depends only on each one's kind, name and summary
    and on what module-level code binds: `previous`, the Relevance of the document's
    last version, gives its answer again when all of those are the same (an edit
    that leaves every call and mark as it was, the usual keystroke), without
    following the calls once more."""

    def __init__(self, parts, imported_from_project=frozenset(), previous: "Relevance | None" = None):
        # name -> definition nodes (functions by name, methods by name, classes by name)
        self._functions: dict = {}
        self._methods: dict = {}
        self._classes: dict = {}
        self._parts: dict = {}           # id(definition node) -> the chunk it is in
        self._forwards: list = []
        self._order: list = []           # every definition, in the order of the module
        self._position: dict = {}       # id(definition node) -> its index in `_order`
        self._shape: list = []           # per definition: (kind, name, index of its class or -1)
        self._project_names = frozenset(imported_from_project)
        # Module-level code that may set what a function later reads (`model.eval()`
        # at module level, then `def predict(x): return model(x)`): the names it binds.
        self._module_values: set = set()
        module_marked = False
        summaries: list = []
        for part in parts:
            rows, marked, bound, chunk_summaries = _chunk_index(part)
            offset = len(self._order)
            for node, cls, is_function in rows:
                name = node.name
                if is_function:
                    (self._methods if cls >= 0 else self._functions).setdefault(name, []).append(node)
                    self._parts[id(node)] = part
                    if cls >= 0 and name in ("forward", "__call__"):
                        self._forwards.append(node)
                else:
                    self._classes.setdefault(name, []).append(node)
                self._position[id(node)] = len(self._order)
                self._order.append(node)
                self._shape.append((type(node), name, -1 if cls < 0 else offset + cls))
            module_marked = module_marked or marked
            self._module_values.update(bound)
            summaries.extend(chunk_summaries)
        if not module_marked:
            self._module_values = set()
        self._key = (self._project_names, frozenset(self._module_values), self._shape, summaries)
        self._relevant: set | None = None
        if previous is not None and previous._relevant is not None and previous._key == self._key:
            self._relevant = previous._relevant

    def may_matter(self, node, owner=None) -> bool:
        """Whether running `node` (a function, or a method of the class node `owner`)
        on its own may find anything. A method runs on an instance its class's
        `__init__` made: what `__init__` did (a model put in eval mode) counts."""
        if self._matters(node):
            return True
        if owner is not None:
            return any(isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "__init__"
                       and self._matters(stmt) for stmt in owner.body)
        return False

    def _matters(self, node) -> bool:
        if self._relevant is None:
            self._relevant = self._propagate()
        return self._position.get(id(node)) in self._relevant

    def _propagate(self) -> set:
        """The positions (in `_order`) of every definition that may matter: the marked
        ones, then, until nothing changes, those calling one that may matter (callers
        found by reversing calls)."""
        position = self._position
        callers: dict = {}
        relevant = set()
        # A call of what may be a module reaches every `forward`: one shared node
        # stands for them all, which a relevant `forward` makes relevant.
        for forward in self._forwards:
            callers.setdefault(position[id(forward)], set()).add(_FORWARDS)
        for key, node in enumerate(self._order):
            callees = list(self._callees(node))
            if any(c is _ANYTHING for c in callees) or self._marked(node):
                relevant.add(key)
            for callee in callees:
                if callee is _FORWARDS:
                    callers.setdefault(_FORWARDS, set()).add(key)
                elif callee is not _ANYTHING:
                    callers.setdefault(position[id(callee)], set()).add(key)
        todo = list(relevant)
        while todo:
            for caller in callers.get(todo.pop(), ()):
                if caller not in relevant:
                    relevant.add(caller)
                    todo.append(caller)
        return relevant

    def _summary(self, node) -> "_Summary":
        """What the function's own code says, computed once per function node: nodes
        of unchanged chunks are shared by every version of the document, so an edit
        re-reads only the function it changed."""
        part = self._parts.get(id(node))
        if part is None:
            return _summarise(node, "")
        return _function_summary(part, node)

    def _marked(self, node) -> bool:
        if isinstance(node, ast.ClassDef):
            return False
        summary = self._summary(node)
        if summary.marked:
            return True
        return bool(self._module_values) and not summary.names.isdisjoint(self._module_values)

    def _callees(self, node):
        if isinstance(node, ast.ClassDef):
            # Making an instance runs its __init__; calling it runs its forward.
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield stmt
            return
        may_be_module = False
        for kind, name, root in self._summary(node).calls:
            if kind == "name":
                if name in self._project_names:
                    yield _ANYTHING          # the project's own code: anything may happen
                    return
                found = self._functions.get(name, []) + self._classes.get(name, [])
                yield from found
                if not found and name not in _BUILTINS:
                    may_be_module = True
            elif kind == "attribute":
                if root in self._project_names:
                    yield _ANYTHING
                    return
                found = self._methods.get(name, []) + self._functions.get(name, [])
                yield from found
                if not found:
                    may_be_module = True
            else:
                may_be_module = True
        if may_be_module:
            yield _FORWARDS


def _chunk_index(part) -> tuple:
    """What one chunk adds to a Relevance, computed once per chunk (an unchanged
    chunk is shared by every version of the document): its definitions in order,
    each (node, index among them of its class or -1, whether it is a function); whether
    a module-level statement is marked, and the names those statements bind; the
    summaries of its functions (None for a class), in the same order."""
    cache = part.relevance_summaries
    found = cache.get("index")
    if found is None:
        rows: list = []

        def index(node, cls: int) -> None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                rows.append((node, cls, True))
            elif isinstance(node, ast.ClassDef):
                own = len(rows)
                rows.append((node, cls, False))
                for stmt in node.body:
                    index(stmt, own)

        marked, bound = False, set()
        for node in part.tree.body:
            index(node, -1)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                     ast.Import, ast.ImportFrom)):
                statement_marked, statement_bound = _module_statement(part, node)
                marked = marked or statement_marked
                bound.update(statement_bound)
        summaries = tuple(_function_summary(part, node) if is_function else None
                          for node, _, is_function in rows)
        found = cache["index"] = (tuple(rows), marked, frozenset(bound), summaries)
    return found


def _function_summary(part, node) -> "_Summary":
    """What the function's own code says, once per function node (kept with its chunk)."""
    cache = part.relevance_summaries
    found = cache.get(id(node))
    if found is None:
        found = cache[id(node)] = _summarise(node, part.segment(node) or "")
    return found


def _module_statement(part, node) -> tuple:
    """(marked, names bound) of a module-level statement, kept with its chunk."""
    cache = part.relevance_summaries
    key = ("module", id(node))
    found = cache.get(key)
    if found is None:
        found = (bool(_MARKS.search(part.segment(node) or "")), frozenset(_bound_names(node)))
        cache[key] = found
    return found


@record
class _Summary:
    """One function's marks and calls, from its own code only."""
    marked: bool                 # a mark in its text, or a change of what it did not make
    names: frozenset             # every name it uses (module-level values it may read)
    calls: tuple                 # ("name", f, None) | ("attribute", attr, root name) | ("other", None, None)


def _summarise(node, text: str) -> _Summary:
    # One walk over the function gathers what every question below reads.
    names, calls, subscripts, bindings, changes = set(), [], [], [], []
    for n in nodes(node):
        kind = type(n)
        if kind is ast.Name:
            names.add(n.id)
        elif kind is ast.Call:
            func = n.func
            if isinstance(func, ast.Name):
                calls.append(("name", func.id, None))
            elif isinstance(func, ast.Attribute):
                root = func.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                calls.append(("attribute", func.attr, root.id if isinstance(root, ast.Name) else None))
            else:
                calls.append(("other", None, None))
        elif kind is ast.Subscript:
            subscripts.append(n)
        elif kind is ast.Assign:
            bindings.append(n)
            changes.append(n)
        elif kind is ast.AugAssign:
            changes.append(n)
        elif kind in (ast.For, ast.AsyncFor, ast.comprehension, ast.With, ast.AsyncWith):
            bindings.append(n)
    marked = bool(_MARKS.search(text)) \
        or (bool(_REDUCES.search(text)) and any(_is_int(n.slice) for n in subscripts)) \
        or _changes_what_it_did_not_make(node, bindings, changes)
    return _Summary(marked, frozenset(names), tuple(calls))


def _is_int(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _changes_what_it_did_not_make(function, bindings: list, changes: list) -> bool:
    """`target += x` or `target[i] = x` where the target may be a parameter: an
    attribute (`self.w`), a global, or a local name that aliases one (`w = self.w`,
    `for w in ...`). Locals computed by the function itself are its own tensors.
    `bindings`: its assignments, loops, comprehensions and `with`s; `changes`: its
    assignments and augmented assignments (both in the order of the walk)."""
    made = set()
    aliases = set()
    for n in bindings:
        if isinstance(n, ast.Assign):
            for target in n.targets:
                for name in _names(target):
                    (aliases if isinstance(n.value, (ast.Attribute, ast.Name, ast.Subscript)) else made).add(name)
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            aliases.update(_names(n.target))
        else:
            for item in n.items:
                if item.optional_vars is not None:
                    aliases.update(_names(item.optional_vars))
    for n in changes:
        if isinstance(n, ast.AugAssign):
            targets = [n.target]
        else:
            targets = [t for t in n.targets if isinstance(t, ast.Subscript)]
        for target in targets:
            root = _root(target)
            if root is None or isinstance(root, ast.Attribute):
                return True
            if isinstance(target, ast.Subscript) or isinstance(n, ast.AugAssign):
                name = root.id
                # (A parameter is unknown in a run on its own: nothing to claim.)
                if name in aliases or (name not in made and name not in _parameters(function)):
                    return True
    return False


def _parameters(function) -> set:
    args = function.args
    return {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs
            + [a for a in (args.vararg, args.kwarg) if a is not None]}


def _bound_names(node) -> set:
    names = set()
    for n in nodes(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
    return names


def _root(node):
    """The name or attribute at the root of `a.b[c].d`: None when it is a call."""
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return node
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _names(target):
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for item in target.elts for name in _names(item)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


_BUILTINS = frozenset(dir(builtins))
