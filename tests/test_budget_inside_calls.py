"""A run's budget binds inside the calls it follows, not only where they begin: a
call entered just before the budget runs out stops at its next statement and acts
as a call of unknown code, with what it did undone. The run's own statements are
still walked, and the function the call reached is checked by a run of its own."""
from __future__ import annotations

from autograd_lsp.analysis import analyze, engine
from autograd_lsp.analysis import walker as walker_module

SOURCE = """\
import torch

def slow(w):
    x = 0
""" + "    x = x + 1\n" * 2_000 + """\
    v = torch.ones(3, requires_grad=True) * 3
    v.backward()
    return x


def main():
    w = torch.ones(3, requires_grad=True)
    slow(w)
    z = w * 2
    z.backward()
"""


def _lines(findings, code="AG101"):
    return sorted(f.line for f in findings if f.code == code)


def test_a_call_over_the_budget_stops_and_the_rest_is_still_checked(monkeypatch):
    walkers = []

    class Recorded(walker_module.Walker):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            walkers.append(self)

    monkeypatch.setattr(engine, "Walker", Recorded)
    monkeypatch.setattr(engine, "alone_budget", lambda runs: 100)
    findings = analyze(SOURCE)
    backward_in_slow = SOURCE.splitlines().index("    v.backward()") + 1
    backward_in_main = SOURCE.splitlines().index("    z.backward()") + 1
    # `main`'s own backward after the stopped call, and `slow`'s, found by its own run
    # (a call stopped half-way does not count as having checked `slow`).
    assert _lines(findings) == [backward_in_slow, backward_in_main]
    alone = [w for w in walkers if w.budget == 100]
    # `main`'s run stopped inside `slow` instead of walking its 2,000 statements.
    assert min(w.steps for w in alone) < 200
    assert all(w._followed_depth == 0 for w in walkers)

