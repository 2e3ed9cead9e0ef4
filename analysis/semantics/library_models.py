"""Models a library builds: `torchvision.models.resnet18(weights=...)`,
`models.vgg16(pretrained=True)`, `torchvision.models.ResNet(...)`.

Their layers are not known, but they are modules with trainable parameters: in
train or eval mode, their output requires grad while grad mode is on and one of
their parameters does. The module stands for its parameters with one parameter
tensor of unknown shape, so that freezing them all (`model.requires_grad_(False)`,
`for p in model.parameters(): p.requires_grad = False`) is seen; the module is
opaque (`_opaque`): its parameter list is never complete, its children are not
known, and its output's history is partly unseen, so no rule claims what depends
on the layers themselves.
"""
from __future__ import annotations

from autograd_lsp.analysis.semantics import PREFIXES, Call
from autograd_lsp.analysis.semantics import nn as nn_ops
from autograd_lsp.analysis.semantics import tensors as t_ops

_TORCHVISION = "torchvision.models."

# Names under torchvision.models that are not models: weights enums and their
# helpers, and the classification models whose training output is a tuple.
_NOT_MODELS = frozenset({
    "get_weight", "get_model_weights", "list_models", "get_model_builder", "Weights", "WeightsEnum",
    "inception_v3", "Inception3", "googlenet", "GoogLeNet",
})


def _torchvision_family(qualname: str):
    rest = qualname[len(_TORCHVISION):]
    if "." in rest or not rest or rest.startswith("_") or rest in _NOT_MODELS or rest.endswith("_Weights"):
        return None
    return library_model


def library_model(call: Call):
    weights = t_ops.new_tensor(call, True, True, dtype="float32", ignore_no_grad=True, part=10,
                               is_param=True)
    return nn_ops.new_module(call, call.qualname or "library model", {"_opaque": True, "_weights": weights})


def child(call: Call, model, name: str):
    """`model.features`, `model.classifier`: a part of a library's model, as opaque
    as the model, standing for the same parameters: freezing a part is then
    freezing what the analysis knows of the whole, so that no rule claims a frozen
    model still trains (it may miss that the other parts do). The part is kept on
    the model: a layer put into it (`model.classifier[6] = nn.Linear(...)`) is
    among the model's parameters. What a part holds is not known (no parts of
    parts)."""
    weights = call.state.attr(model, "_weights")
    part = nn_ops.new_module(call, f"{model.cls}.{name}", {"_opaque": True, "_weights": weights, "_part": True})
    call.state.set_attr(model, name, part)
    return part


PREFIXES.append((_TORCHVISION, _torchvision_family))
