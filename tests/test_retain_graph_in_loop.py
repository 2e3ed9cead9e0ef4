"""retain-graph-in-loop on the shape of real code that needs its retain_graph:
targets computed once before the loop through layers whose weights require grad
(neural style transfer, d2l 9.11), so that every iteration's backward goes through
that graph again. The rule claims only what it can prove: quiet there, and on the
same program with the targets detached (where retain_graph=True only keeps graphs
alive) it reports."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import analyze
from autograd_lsp.analysis.rules.retain_graph_in_loop import RetainGraphInLoop

# The layers run one by one in a Python loop of a helper, as d2l writes it.
STYLE_TRANSFER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                    nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(),
                    nn.Conv2d(4, 4, 3, padding=1))
content_layers, style_layers = [4], [0, 2]


def extract_features(X, content_layers, style_layers):
    contents = []
    styles = []
    for i in range(len(net)):
        X = net[i](X)
        if i in style_layers:
            styles.append(X)
        if i in content_layers:
            contents.append(X)
    return contents, styles


def gram(X):
    num_channels, n = X.shape[1], X.numel() // X.shape[1]
    X = X.reshape((num_channels, n))
    return torch.matmul(X, X.t()) / (num_channels * n)


def compute_loss(X, contents_Y_hat, styles_Y_hat, contents_Y, styles_Y_gram):
    contents_l = [F.mse_loss(Y_hat, Y) for Y_hat, Y in zip(contents_Y_hat, contents_Y)]
    styles_l = [F.mse_loss(gram(Y_hat), Y) for Y_hat, Y in zip(styles_Y_hat, styles_Y_gram)]
    tv_l = (X[:, :, 1:, :] - X[:, :, :-1, :]).abs().mean() + (X[:, :, :, 1:] - X[:, :, :, :-1]).abs().mean()
    l = sum(styles_l + contents_l + [tv_l])
    return contents_l, styles_l, tv_l, l


content_X, style_X = torch.rand(1, 3, 12, 12), torch.rand(1, 3, 12, 12)
contents_Y, _ = extract_features(content_X, content_layers, style_layers)
_, styles_Y = extract_features(style_X, content_layers, style_layers)
styles_Y_gram = [gram(Y) for Y in styles_Y]

X = nn.Parameter(content_X.clone())
optimizer = torch.optim.Adam([X], lr=0.01)
for epoch in range(3):
    contents_Y_hat, styles_Y_hat = extract_features(X, content_layers, style_layers)
    contents_l, styles_l, tv_l, l = compute_loss(X, contents_Y_hat, styles_Y_hat, contents_Y, styles_Y_gram)
    optimizer.zero_grad()
    l.backward(retain_graph=True)
    optimizer.step()
"""
BACKWARD_LINE = STYLE_TRANSFER.splitlines().index("    l.backward(retain_graph=True)") + 1
DETACHED = STYLE_TRANSFER.replace(
    "styles_Y_gram = [gram(Y) for Y in styles_Y]",
    "styles_Y_gram = [gram(Y).detach() for Y in styles_Y]\ncontents_Y = [Y.detach() for Y in contents_Y]")


def findings(source: str, name: str = RetainGraphInLoop.name) -> list:
    return [f for f in analyze(source) if f.name == name]


def test_targets_with_a_graph_made_before_the_loop_keep_the_rule_quiet():
    assert findings(STYLE_TRANSFER) == []
    # Nor is it one backward per element (the total variation term slices the image,
    # the Gram matrices reshape targets made before the loop): the program is correct.
    assert analyze(STYLE_TRANSFER) == []


def test_detached_targets_leave_a_graph_made_anew_each_iteration():
    # The layers picked by the helper's loop index are followed, so the rule sees the
    # whole graph and can say retain_graph=True is not needed.
    assert DETACHED != STYLE_TRANSFER
    assert [f.line for f in findings(DETACHED)] == [BACKWARD_LINE + 1]


def _run(source: str):
    """The exception running `source` with torch raised, or None."""
    from tests.test_rules_proven_by_torch import run_example  # skips without torch
    error, _, _ = run_example(source)
    return error


def test_torch_needs_the_retain_graph_of_the_style_transfer():
    assert _run(STYLE_TRANSFER) is None
    error = _run(STYLE_TRANSFER.replace("retain_graph=True", ""))
    assert error is not None and "backward through the graph a second time" in str(error)
    assert _run(DETACHED.replace("retain_graph=True", "")) is None


@pytest.mark.parametrize("index", range(len(RetainGraphInLoop.good)))
def test_every_good_example_needs_its_retain_graph(index):
    # The rule must stay quiet on each: without retain_graph=True torch raises.
    code = RetainGraphInLoop.good[index].code
    assert "retain_graph=True" in code
    error = _run(code.replace("retain_graph=True", ""))
    assert error is not None and "backward through the graph a second time" in str(error)
