"""The server's own texts (titles, hover labels) in every locale the core has,
and the mapping from a client's locale tag to one of them."""
from __future__ import annotations

from autograd_lsp.config import LOCALES, normalize_locale  # noqa: F401 - one home for locales


# POSIX precedence: LC_ALL overrides LC_MESSAGES, which overrides LANG.
LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def environment_locale(environ) -> str | None:
    """The catalogue locale of the process's environment ("zh_CN.UTF-8" -> "zh"),
    None when it names no language we have ("C", "POSIX", unset)."""
    for variable in LOCALE_VARIABLES:
        value = environ.get(variable)
        if value:
            return normalize_locale(value.split(".")[0].split("@")[0])
    return None


TEXTS = {
    "en": {
        "fix_all": "Fix all auto-fixable autograd problems",
        "suppress": "Suppress {code} on this line (# noqa: {code})",
        "facts_title": "`{name}`: what autograd-lsp knows at this point",
        "tensor": "tensor",
        "module": "nn.Module `{cls}`",
        "optimizer": "optimizer",
        "number": "Python {kind}",
        "unknown": "unknown",
        "yes": "yes",
        "no": "no",
        "requires_grad": "requires grad",
        "is_leaf": "leaf",
        "dtype": "dtype",
        "shape": "shape",
        "scalar": "scalar",
        "grad_fn": "grad_fn",
        "grad": "`.grad`",
        "grad_none": "still None (no backward has reached it)",
        "grad_set": "set by a backward",
        "grad_zero": "zeroed (not None)",
        "grad_summed": "the sum of backwards from several loop iterations (never cleared in between)",
        "object": "object of class `{cls}`",
        "data_loader": "DataLoader",
        "no_grad_reason": "why it does not require grad",
        "reason_no_grad": "made under `torch.no_grad()`",
        "reason_inference_mode": "made under `torch.inference_mode()`",
        "reason_detach": "detached",
        "reason_rewrap": "re-wrapped with `torch.tensor(...)`",
        "reason_never": "no input requires grad",
        "reason_grad_result": "a gradient computed without `create_graph=True`",
        "reason_data": "taken from `.data`, which autograd does not see",
        "graph_freed": "graph",
        "graph_freed_yes": "freed by an earlier `backward()`: a second backward through it raises",
        "history_opaque": "Part of its history is not known (a parameter, a model call...).",
        "backward_graph": "Backward graph, as torch would build it:",
        "noqa_prefix": "`# noqa: {prefix}` suppresses:",
    },
    "zh": {
        "fix_all": "修复所有可自动修复的 autograd 问题",
        "suppress": "在本行忽略 {code}（# noqa: {code}）",
        "facts_title": "`{name}`：autograd-lsp 在此处已知的信息",
        "tensor": "张量",
        "module": "nn.Module `{cls}`",
        "optimizer": "优化器",
        "number": "Python {kind}",
        "unknown": "未知",
        "yes": "是",
        "no": "否",
        "requires_grad": "需要梯度",
        "is_leaf": "叶子张量",
        "dtype": "数据类型",
        "shape": "形状",
        "scalar": "标量",
        "grad_fn": "grad_fn",
        "grad": "`.grad`",
        "grad_none": "仍为 None（尚无 backward 到达它）",
        "grad_set": "已由 backward 写入",
        "grad_zero": "已清零（不是 None）",
        "grad_summed": "多次循环迭代的 backward 之和（其间从未清零）",
        "object": "类 `{cls}` 的对象",
        "data_loader": "DataLoader",
        "no_grad_reason": "不需要梯度的原因",
        "reason_no_grad": "在 `torch.no_grad()` 中创建",
        "reason_inference_mode": "在 `torch.inference_mode()` 中创建",
        "reason_detach": "已 detach",
        "reason_rewrap": "用 `torch.tensor(...)` 重新包装",
        "reason_never": "没有任何输入需要梯度",
        "reason_grad_result": "未设 `create_graph=True` 时求得的梯度",
        "reason_data": "来自 `.data`，autograd 看不到它",
        "graph_freed": "计算图",
        "graph_freed_yes": "已被之前的 `backward()` 释放：再次对它 backward 会报错",
        "history_opaque": "它的部分来历未知（函数参数、模型调用等）。",
        "backward_graph": "反向计算图（与 torch 构建的一致）：",
        "noqa_prefix": "`# noqa: {prefix}` 会忽略：",
    },
}


def text(key: str, locale: str, **args) -> str:
    table = TEXTS.get(locale) or TEXTS["en"]
    template = table.get(key) or TEXTS["en"][key]
    return template.format(**args) if args else template
