"""An error raised inside a helper because of what its caller passed is also
reported at the call. Each case is run with torch to prove the call raises."""
from __future__ import annotations

import traceback

import pytest
import torch  # noqa: F401 - the cases run with it

from autograd_lsp.analysis import Analyzer

# The helper is right; the second call gives it a gradient without a graph.
SECOND_DERIVATIVE = '''import torch

def derivative(y, x):
    return torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y))[0]

x = torch.linspace(0, 1, 5).reshape(-1, 1).requires_grad_()
u = torch.sin(x)
u_x = derivative(u, x)
u_xx = derivative(u_x, x)
'''

# The helper builds its own non-scalar: whoever calls it, it raises. Not repeated
# at the call.
OWN_TENSOR = '''import torch

def step(w):
    loss = w * 2
    loss.backward()

step(torch.randn(3, requires_grad=True))
'''


def findings(source: str, locale: str = "en") -> list:
    from autograd_lsp.analysis import Settings
    analyzer = Analyzer()
    out = analyzer.analyze(source, Settings(locale=locale))
    assert not analyzer.internal_errors
    return out


def traceback_lines(source: str) -> list:
    with pytest.raises(RuntimeError) as info:
        exec(compile(source, "case.py", "exec"), {"__name__": "__main__"})
    return [frame.lineno for frame in traceback.extract_tb(info.tb) if frame.filename == "case.py"]


def test_the_call_that_passes_the_gradient_is_reported_too():
    assert traceback_lines(SECOND_DERIVATIVE) == [9, 4]
    out = [(f.name, f.line, f.message) for f in findings(SECOND_DERIVATIVE)]
    assert [(name, line) for name, line, _ in out] == [("higher-order-no-create-graph", 4),
                                                       ("higher-order-no-create-graph", 9)]
    assert out[1][2].startswith("in `derivative`, called here: ")
    assert out[1][2].endswith(out[0][2])


def test_the_call_site_message_follows_the_locale():
    messages = [f.message for f in findings(SECOND_DERIVATIVE, "zh") if f.line == 9]
    assert messages and messages[0].startswith("在此处调用的 `derivative` 中：")


def test_a_helper_wrong_on_its_own_is_reported_only_inside():
    assert traceback_lines(OWN_TENSOR) == [7, 5]
    assert [(f.name, f.line) for f in findings(OWN_TENSOR)] == [("nonscalar-backward", 5)]


# A training step that backwards and steps without clearing, called by the loop:
# said at the backward (the line to mend) and at the loop's call (where it adds up).
HELPER_STEP = '''import torch
import torch.nn as nn

def train_step(model, optimizer, x, y):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for x, y in [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]:
        train_step(model, optimizer, x, y)
'''


def test_a_helper_step_without_clearing_is_said_at_the_loops_call_too():
    found = [(f.code, f.line, f.message) for f in Analyzer().analyze(HELPER_STEP)]
    assert [(code, line) for code, line, _ in found] == [("AG201", 6), ("AG201", 13)]
    assert found[1][2].startswith("in `train_step`, called here: gradients are never cleared in this loop")


# A physics-informed residual differentiates the model's output: right in training,
# wrong when a `@torch.no_grad()` validation calls it. Said where it raises and at
# the call made with grad off.
RESIDUAL_IN_NO_GRAD = '''import torch
import torch.nn as nn

def residual(model, x):
    x = x.clone().requires_grad_(True)
    u = model(x)
    return torch.autograd.grad(u.sum(), x, create_graph=True)[0] - u

class Trainer:
    def __init__(self):
        self.model = nn.Linear(1, 1)

    @torch.no_grad()
    def validate(self, x):
        return residual(self.model, x).abs().mean()

Trainer().validate(torch.rand(8, 1))
'''


def test_a_helper_run_with_grad_off_is_said_at_the_call_made_without_grad():
    assert traceback_lines(RESIDUAL_IN_NO_GRAD) == [17, 15, 7]
    found = [(f.name, f.line, f.message) for f in findings(RESIDUAL_IN_NO_GRAD)]
    assert [(name, line) for name, line, _ in found] == [("no-grad-fn", 7), ("no-grad-fn", 15)]
    assert found[1][2].startswith("in `residual`, called here: ")
    assert "torch.no_grad()" in found[1][2]


# Noise resampled in place by a helper between the forward and the backward: said
# at the op that changes the saved tensor and at the call, beside the backward, that
# runs it. (Its first run, before the forward, changes nothing saved.)
RESAMPLED_NOISE = '''import torch
import torch.nn as nn

class Noisy(nn.Linear):
    def __init__(self):
        super().__init__(3, 2)
        self.register_buffer("eps", torch.zeros(2, 3))

    def reset_noise(self):
        self.eps.normal_()

    def forward(self, x):
        return nn.functional.linear(x, self.weight * self.eps, self.bias)

def learn(layer, x):
    out = layer(x).sum()
    layer.reset_noise()
    out.backward()

layer = Noisy()
layer.reset_noise()
learn(layer, torch.randn(4, 3))
'''


def test_a_helper_that_changes_a_saved_tensor_is_said_at_its_call_too():
    assert traceback_lines(RESAMPLED_NOISE) == [22, 18]
    found = [(f.name, f.line, f.message) for f in findings(RESAMPLED_NOISE)]
    assert [(name, line) for name, line, _ in found] == [("inplace-saved-tensor", 10),
                                                         ("inplace-saved-tensor", 17)]
    assert found[1][2].startswith("in `reset_noise`, called here: ")


# A helper that clears, then steps, called after the loop's backward: the step
# finds no gradient. Said inside it and at its call beside the backward.
CLEAR_THEN_STEP = '''import torch
import torch.nn as nn

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
before = model.weight.detach().clone()

def update(optimizer):
    optimizer.zero_grad()
    optimizer.step()

for epoch in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
    update(optimizer)
'''


def test_a_helper_that_clears_before_it_steps_is_said_at_its_call_too():
    namespace: dict = {}
    exec(compile(CLEAR_THEN_STEP, "case.py", "exec"), namespace)
    assert torch.equal(namespace["before"], namespace["model"].weight.detach())   # it never moved
    found = [(f.name, f.line, f.message) for f in findings(CLEAR_THEN_STEP)]
    assert [(name, line) for name, line, _ in found] == [("zero-grad-order", 9), ("zero-grad-order", 15)]
    assert found[1][2].startswith("in `update`, called here: ")


# A model whose step method calls a helper that backwards, and clears nothing:
# said at the backward and at the helper's call beside the step.
BACKWARD_HELPER = '''import torch
import torch.nn as nn

class Model:
    def __init__(self):
        self.net = nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.01)
        self.norms = []

    def backward_net(self, x):
        self.net(x).pow(2).mean().backward()

    def optimize(self, x):
        self.backward_net(x)
        self.norms.append(self.net.weight.grad.norm().item())
        self.opt.step()

model = Model()
x = torch.randn(4, 3)
for it in range(4):
    model.optimize(x)
'''


def test_a_backward_helper_called_beside_the_step_is_said_at_that_call():
    namespace: dict = {}
    exec(compile(BACKWARD_HELPER, "case.py", "exec"), namespace)
    norms = namespace["model"].norms
    assert norms[-1] > 3 * norms[0]
    found = [(f.name, f.line, f.message) for f in findings(BACKWARD_HELPER)]
    assert [(name, line) for name, line, _ in found] == [("missing-zero-grad", 11), ("missing-zero-grad", 14)]
    assert found[1][2].startswith("in `backward_net`, called here: ")


def test_a_layer_of_a_models_method_said_at_a_helper_call_names_the_model():
    """`model.encode(src)` in a decoding helper called after `model.eval()`: the
    report at the helper's call names `model`, not the layer inside `encode`."""
    source = (
        "import torch\n"
        "import torch.nn as nn\n"
        "class Translator(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.embedding = nn.Embedding(10, 4)\n"
        "        self.transformer = nn.Transformer(4, 1, 1, 1, 8)\n"
        "    def encode(self, src):\n"
        "        return self.transformer.encoder(self.embedding(src))\n"
        "def decode(model, src):\n"
        "    outs = []\n"
        "    for _ in range(3):\n"
        "        outs.append(model.encode(src))\n"
        "    return outs\n"
        "model = Translator()\n"
        "model.eval()\n"
        "for line in [torch.tensor([[1], [2]]), torch.tensor([[3]])]:\n"
        "    outs = decode(model, line)\n"
    )
    findings = [f for f in Analyzer().analyze(source) if f.name == "eval-without-no-grad"]
    assert [f.line for f in findings] == [18]
    assert "`model`" in findings[0].message and "self.embedding" not in findings[0].message
    namespace: dict = {}
    exec(compile(source, "<case>", "exec"), namespace)
    assert namespace["outs"][0].grad_fn is not None


def test_a_helper_returning_backward_is_said_at_its_return_and_at_the_call_keeping_it():
    from autograd_lsp.analysis import analyze
    source = ("import torch\n"
              "class Model:\n"
              "    def __init__(self):\n"
              "        self.w = torch.ones(2, requires_grad=True)\n"
              "    def backward_G(self, x):\n"
              "        self.loss = (self.w * x).sum()\n"
              "        return self.loss.backward()\n"
              "    def optimize(self, x):\n"
              "        loss_G = self.backward_G(x)\n"
              "        return {'G': loss_G}\n"
              "metrics = Model().optimize(torch.ones(2))\n")
    found = sorted((f.name, f.line) for f in analyze(source))
    assert found == [("backward-returns-none", 7), ("backward-returns-none", 9)]
