"""A file of hundreds of model builders shares one budget among its runs on their
own: each run gets an equal share (never below a floor), and a function's own
code is still checked whatever its share."""
from __future__ import annotations

from autograd_lsp.analysis import Analyzer, analyze
from autograd_lsp.analysis import engine
from autograd_lsp.analysis.walker import ALONE_BUDGET, ALONE_FLOOR, FILE_BUDGET, alone_budget

ZOO = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return self.fc(x)


class Net(nn.Module):
    def __init__(self, dim=8, depth=4):
        super().__init__()
        self.blocks = nn.Sequential(*[Block(dim) for _ in range(depth)])

    def forward(self, x):
        return self.blocks(x)


def _create(variant, pretrained=False, freeze=False, **kwargs):
    model = Net(**kwargs)
    if pretrained:
        model.load_state_dict(torch.load(variant))
    if freeze:
        for p in model.parameters():
            p.requires_grad_(False)
    return model
"""

BUILDER = """
def net_{i}(pretrained=False, **kwargs):
    return _create("net_{i}", pretrained=pretrained, dim={dim}, depth={depth})
"""

OWN_BUG = """
def check_gradients():
    w = torch.randn(3, requires_grad=True)
    y = w * 2
    y.backward()
"""


def zoo(builders: int) -> str:
    return ZOO + "".join(BUILDER.format(i=i, dim=4 + i % 5, depth=2 + i % 3) for i in range(builders)) + OWN_BUG


def test_the_share_shrinks_with_the_number_of_runs_but_not_below_the_floor():
    assert alone_budget(1) == ALONE_BUDGET
    assert alone_budget(FILE_BUDGET // ALONE_BUDGET) == ALONE_BUDGET
    shares = [alone_budget(n) for n in range(1, 2_000, 7)]
    assert shares == sorted(shares, reverse=True)
    assert alone_budget(10_000) == ALONE_FLOOR


def test_every_run_of_a_model_zoo_gets_the_same_share(monkeypatch):
    budgets = []
    run_alone = engine.Analyzer._run_alone

    def recording(self, *args, budget=ALONE_BUDGET, **kwargs):
        budgets.append(budget)
        return run_alone(self, *args, budget=budget, **kwargs)

    monkeypatch.setattr(engine.Analyzer, "_run_alone", recording)
    analyze(zoo(300))
    # Every builder and `check_gradients` run on their own; `_create`, which the
    # builders' runs follow, is checked there. The share is counted over all three kinds.
    assert len(budgets) == 301
    assert set(budgets) == {alone_budget(302)}
    assert budgets[0] < ALONE_BUDGET


def test_a_functions_own_code_is_checked_whatever_its_share():
    for builders in (0, 300):
        found = [(f.code, f.line) for f in analyze(zoo(builders))]
        assert found == [("AG101", zoo(builders).count("\n"))], builders


def test_edits_that_change_the_share_give_what_a_fresh_analysis_gives():
    analyzer = Analyzer()
    for builders in (3, 300, 40, 300, 0):
        text = zoo(builders)
        assert analyzer.analyze(text) == Analyzer().analyze(text)
        assert not analyzer.internal_errors
