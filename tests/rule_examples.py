"""Every example of every rule, as pytest parameters (shared by the test modules)."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import all_rules


def _params(kind: str):
    params = []
    for rule in all_rules():
        for index, example in enumerate(getattr(rule, kind)):
            params.append(pytest.param(rule, example, id=f"{rule.name}-{kind}-{index}"))
    return params


BAD = _params("bad")
GOOD = _params("good")
ALL = BAD + GOOD
