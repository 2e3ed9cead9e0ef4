"""One spelling for each torch name: torch re-exports many names under a second
path (`torch.nn.modules.loss.MSELoss` is `torch.nn.MSELoss`), and the rules
compare qualified names. The walker resolves imports and dotted names itself
(walker.py, `s_import` and attribute reads) and passes them through `canonical`.
"""
from __future__ import annotations


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
