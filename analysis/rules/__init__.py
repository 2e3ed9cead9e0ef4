"""The rule registry: every module in this package that defines a `Rule`
subclass contributes it. Adding a rule means adding one module here."""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from autograd_lsp.analysis.rule import Rule


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    found: list[Rule] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule \
                    and value.__module__ == module.__name__:
                found.append(value())
    found.sort(key=lambda r: r.code)
    codes = [r.code for r in found]
    names = [r.name for r in found]
    if len(set(codes)) != len(codes) or len(set(names)) != len(names):
        raise RuntimeError(f"duplicate rule code or name among {list(zip(codes, names))}")
    return tuple(found)


def rule_by_key(key: str) -> Rule | None:
    """A rule by its name or its code (case-insensitive for codes)."""
    for rule in all_rules():
        if key == rule.name or key.upper() == rule.code:
            return rule
    return None
