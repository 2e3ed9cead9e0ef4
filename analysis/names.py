"""Which local names stand for torch: `import torch as T`, `from torch import nn`,
`import torch.nn.functional as F`, `from torch.autograd import grad`, ...

Maps a local name to the qualified name it is bound to, and resolves dotted
expressions (`T.nn.functional.mse_loss`) to qualified names.
"""
from __future__ import annotations

import libcst as cst

# Names whose imports we follow; everything else is not torch.
_ROOTS = ("torch",)


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` as a string, or None when it is not a plain dotted name."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def imports_of(stmt: cst.CSTNode) -> dict[str, str]:
    """Local name -> qualified name for the torch imports in one import statement."""
    found: dict[str, str] = {}
    if isinstance(stmt, cst.Import):
        for alias in stmt.names:
            full = dotted(alias.name)
            if not full or not _is_torch(full):
                continue
            if alias.asname is not None:
                found[alias.asname.name.value] = full
            else:
                # `import torch.nn` binds `torch`
                head = full.split(".")[0]
                found[head] = head
    elif isinstance(stmt, cst.ImportFrom) and stmt.module is not None and not stmt.relative:
        base = dotted(stmt.module)
        if not base or not _is_torch(base) or isinstance(stmt.names, cst.ImportStar):
            return found
        for alias in stmt.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
            local = alias.asname.name.value if alias.asname is not None else name
            found[local] = f"{base}.{name}"
    return found


def _is_torch(name: str) -> bool:
    return name.split(".")[0] in _ROOTS


# Aliases torch itself re-exports under another path: normalise to one spelling.
_CANONICAL = {
    "torch.nn.modules.loss": "torch.nn",
    "torch.nn.modules.linear": "torch.nn",
    "torch.optim.sgd": "torch.optim",
    "torch.optim.adam": "torch.optim",
    "torch.autograd.grad_mode": "torch",
    "torch.autograd.gradcheck.gradcheck": "torch.autograd.gradcheck",
    "torch.autograd.gradcheck.gradgradcheck": "torch.autograd.gradgradcheck",
    "torch.autograd.no_grad": "torch.no_grad",
    "torch.autograd.enable_grad": "torch.enable_grad",
    "torch.autograd.set_grad_enabled": "torch.set_grad_enabled",
    "torch.autograd.inference_mode": "torch.inference_mode",
    "torch.functional": "torch",
}


def canonical(qualname: str) -> str:
    if qualname in _CANONICAL:
        return _CANONICAL[qualname]
    head, _, last = qualname.rpartition(".")
    if head in _CANONICAL:
        return f"{_CANONICAL[head]}.{last}"
    return qualname


class Names:
    """The torch names visible in a scope (module imports plus local ones)."""

    def __init__(self, aliases: dict[str, str] | None = None):
        self.aliases = dict(aliases or {})

    def child(self) -> "Names":
        return Names(self.aliases)

    def add_import(self, stmt: cst.CSTNode) -> None:
        self.aliases.update(imports_of(stmt))

    def shadow(self, name: str) -> None:
        """A local assignment hides an imported name."""
        self.aliases.pop(name, None)

    def qualname(self, node: cst.BaseExpression) -> str | None:
        text = dotted(node)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        base = self.aliases.get(head)
        if base is None:
            return None
        return canonical(f"{base}.{rest}" if rest else base)
