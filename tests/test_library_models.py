"""Models a library builds (`torchvision.models.resnet18()`): modules whose layers
the analysis does not know, with trainable parameters.

Each case is checked twice: by the analysis, and by running it with real torch.
torchvision is not a test dependency (its wheels pin one torch each), so the runs
put a stand-in `torchvision` in `sys.modules` whose builders return small real
torch models with the same attribute names (`fc`, `features`, `classifier`):
the claims at stake (an eval-mode forward records a graph; frozen parameters
do not) are torch's behaviour for every nn.Module.
"""
from __future__ import annotations

import sys
import types

import pytest

from autograd_lsp.analysis import analyze

HEAD = """\
import torch
import torch.nn as nn
import torchvision
from torchvision import models
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.randn(8, 3, 8, 8), torch.randint(0, 2, (8,))), batch_size=4)
"""

# An evaluation of `model` over the loader, without no_grad.
EVALUATE = """\
model.eval()
for x, y in loader:
    out = model(x)
"""

# One epoch of training `model` with `opt` and `crit`.
TRAIN_EPOCH = """\
model.train()
for x, y in loader:
    opt.zero_grad()
    loss = crit(model(x), y)
    loss.backward()
    opt.step()
"""

# A VGG whose feature layers are frozen.
FROZEN_FEATURES = """\
model = models.vgg16()
for p in model.features.parameters():
    p.requires_grad = False
"""

EVAL_LOOP = HEAD + "model = torchvision.models.resnet18(weights=None)\n" + EVALUATE

NUMPY_OF_OUTPUT = HEAD + """\
model = models.resnet18()
out = model(torch.randn(2, 3, 8, 8))
scores = out.numpy()
"""

FROZEN_BY_LOOP = HEAD + """\
model = models.resnet18()
for p in model.parameters():
    p.requires_grad = False
""" + EVALUATE

FROZEN_BY_METHOD = HEAD + "model = models.resnet18()\nmodel.requires_grad_(False)\n" + EVALUATE

FROZEN_BY_PARTS = HEAD + FROZEN_FEATURES + """\
for p in model.classifier.parameters():
    p.requires_grad = False
""" + EVALUATE

FINE_TUNED = HEAD + """\
from torchvision.models import resnet18
model = resnet18()
model.fc = nn.Linear(model.fc.in_features, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
crit = nn.CrossEntropyLoss()
""" + TRAIN_EPOCH + """\
model.eval()
with torch.no_grad():
    for x, y in loader:
        out = model(x)
"""

LAST_LAYER_REPLACED = HEAD + FROZEN_FEATURES + """\
n_inputs = model.classifier[6].in_features
model.classifier[6] = nn.Linear(n_inputs, 2)
opt = torch.optim.SGD(model.classifier.parameters(), lr=0.001)
crit = nn.CrossEntropyLoss()
""" + TRAIN_EPOCH + EVALUATE

SALIENCY = HEAD + """\
model = models.resnet18()
model.eval()
image = torch.randn(1, 3, 8, 8, requires_grad=True)
score = model(image)[0].max()
score.backward()
saliency = image.grad.abs()
"""


def codes(source: str) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in analyze(source)]


def line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


@pytest.fixture
def stand_in_torchvision(monkeypatch):
    torch = pytest.importorskip("torch", reason="torch is a test dependency: pip install -e '.[test]'")
    nn = torch.nn

    class ResNet(nn.Module):
        def __init__(self, **kwargs):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.fc = nn.Linear(4, 10)

        def forward(self, x):
            return self.fc(self.conv(x).mean(dim=(2, 3)))

    class VGG(nn.Module):
        def __init__(self, **kwargs):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
            self.classifier = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(), nn.Linear(8, 8),
                                            nn.ReLU(), nn.Dropout(), nn.Linear(8, 10))

        def forward(self, x):
            return self.classifier(self.features(x).mean(dim=(2, 3)))

    vision = types.ModuleType("torchvision")
    vision.models = types.ModuleType("torchvision.models")
    vision.models.resnet18, vision.models.vgg16 = ResNet, VGG
    monkeypatch.setitem(sys.modules, "torchvision", vision)
    monkeypatch.setitem(sys.modules, "torchvision.models", vision.models)
    return torch


def run(source: str) -> dict:
    namespace = {"__name__": "__main__"}
    exec(compile(source, "<case>", "exec"), namespace)
    return namespace


def test_an_eval_forward_of_a_library_model_records_a_graph(stand_in_torchvision):
    assert codes(EVAL_LOOP) == [("AG303", line_of(EVAL_LOOP, "out = model(x)"))]
    assert run(EVAL_LOOP)["out"].grad_fn is not None


def test_a_layer_put_into_a_frozen_library_model_trains(stand_in_torchvision):
    # Its features are frozen, its last layer replaced: the evaluation still records a graph.
    assert codes(LAST_LAYER_REPLACED) == [("AG303", line_of(LAST_LAYER_REPLACED, "out = model(x)"))]
    assert run(LAST_LAYER_REPLACED)["out"].grad_fn is not None


def test_numpy_of_a_library_models_output_raises(stand_in_torchvision):
    assert codes(NUMPY_OF_OUTPUT) == [("AG107", line_of(NUMPY_OF_OUTPUT, "out.numpy()"))]
    with pytest.raises(RuntimeError, match="requires grad"):
        run(NUMPY_OF_OUTPUT)


@pytest.mark.parametrize("source", [FROZEN_BY_LOOP, FROZEN_BY_METHOD, FROZEN_BY_PARTS],
                         ids=["loop", "requires_grad_", "parts"])
def test_a_frozen_library_model_is_quiet(stand_in_torchvision, source):
    assert codes(source) == []
    assert run(source)["out"].grad_fn is None


@pytest.mark.parametrize("source", [FINE_TUNED, SALIENCY], ids=["fine-tuned", "saliency"])
def test_correct_uses_of_a_library_model_are_quiet(stand_in_torchvision, source):
    assert codes(source) == []
    run(source)


def test_what_is_not_a_model_stays_unknown():
    source = HEAD + "weights = torchvision.models.get_model_weights('resnet18')\nweights.numpy()\n"
    assert codes(source) == []
