"""What the analysis knows about torch's API, as plain data.

Kept by hand for now and checked against the installed torch by
`tests/test_torch_api.py`; nothing here imports torch.
"""
from __future__ import annotations

# Factories: qualified name -> the dtype they make by default ("float32" follows
# torch's default dtype; "int64" for integer ranges; None: depends on the data).
FACTORIES = {
    "torch.randn": "float32", "torch.rand": "float32", "torch.zeros": "float32",
    "torch.ones": "float32", "torch.empty": "float32", "torch.full": None,
    "torch.eye": "float32", "torch.linspace": "float32", "torch.logspace": "float32",
    "torch.arange": None, "torch.randint": "int64", "torch.randperm": "int64",
    "torch.normal": "float32",
}
# Factories taking a tensor whose shape and dtype they copy.
LIKE_FACTORIES = {
    "torch.randn_like", "torch.rand_like", "torch.zeros_like", "torch.ones_like",
    "torch.empty_like", "torch.full_like",
}
# Factories whose first argument is data (lists, numbers or tensors).
DATA_FACTORIES = {"torch.tensor", "torch.as_tensor"}

DTYPES = {
    "torch.float32": "float32", "torch.float": "float32", "torch.float64": "float64",
    "torch.double": "float64", "torch.float16": "float16", "torch.half": "float16",
    "torch.bfloat16": "bfloat16", "torch.int64": "int64", "torch.long": "int64",
    "torch.int32": "int32", "torch.int": "int32", "torch.int16": "int16",
    "torch.short": "int16", "torch.int8": "int8", "torch.uint8": "uint8",
    "torch.bool": "bool", "torch.complex64": "complex64", "torch.cfloat": "complex64",
    "torch.complex128": "complex128", "torch.cdouble": "complex128",
}
# Methods that convert dtype: method -> resulting dtype.
DTYPE_METHODS = {
    "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
    "long": "int64", "int": "int32", "short": "int16", "bool": "bool", "byte": "uint8",
}

# Element-wise ops that keep their input's shape: the same name as a method,
# as torch.NAME, and (activations) as torch.nn.functional.NAME.
UNARY_OPS = {
    "exp", "log", "log1p", "log2", "log10", "expm1", "sin", "cos", "tan", "tanh",
    "sigmoid", "relu", "abs", "sqrt", "rsqrt", "square", "neg", "reciprocal",
    "asin", "acos", "atan", "sinh", "cosh", "erf", "floor", "ceil", "round",
    "sign", "clamp", "clip", "softmax", "log_softmax", "gelu", "silu", "elu",
    "leaky_relu", "softplus", "dropout", "pow", "mul", "div", "add", "sub",
    "clone", "contiguous", "exp2", "logit", "frac", "trunc", "nan_to_num",
}
# Ops whose backward needs no saved tensor: backward through them twice works.
# Every other known op saves something, so a second backward fails.
NON_SAVING_OPS = {
    "add", "sub", "neg", "sum", "mean", "clone", "contiguous", "view", "reshape",
    "flatten", "squeeze", "unsqueeze", "transpose", "permute", "t", "expand",
    "getitem", "cat", "stack", "detach", "to", "float", "double", "half", "cpu", "cuda",
}
# Reductions that give a 0-dim tensor when called without `dim`.
REDUCTIONS = {
    "sum", "mean", "prod", "norm", "std", "var", "max", "min", "amax", "amin",
    "logsumexp", "median", "all", "any", "nansum", "nanmean", "trace", "dot",
}
SHAPE_OPS = {
    "view", "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "permute",
    "t", "expand", "expand_as", "view_as", "reshape_as", "repeat", "narrow",
    "chunk", "split", "unbind", "gather", "index_select", "masked_select",
    "matmul", "mm", "bmm", "mv", "outer", "einsum", "cat", "stack",
}
# In-place tensor methods (a trailing underscore, but not requires_grad_ &c.).
NOT_INPLACE_UNDERSCORE = {"requires_grad_", "share_memory_", "retain_grad"}

# Classes in torch.nn whose call saves tensors for backward (they hold weights).
NN_LAYERS_WITH_PARAMS = {
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "Embedding", "LSTM", "GRU", "RNN",
    "LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm",
    "MultiheadAttention", "PReLU", "LSTMCell", "GRUCell", "RNNCell",
}
NN_LAYERS_WITHOUT_PARAMS = {
    "ReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "Softmax", "LogSoftmax", "Dropout",
    "Identity", "Flatten", "MaxPool1d", "MaxPool2d", "AvgPool2d", "LeakyReLU", "ELU",
}
NN_CONTAINERS = {"Sequential", "ModuleList", "ModuleDict"}

# nn loss classes and functional losses; with the default reduction="mean"
# (or "batchmean"/"sum") they return a 0-dim tensor.
NN_LOSSES = {
    "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
    "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
    "HingeEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginLoss",
    "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss", "MultiMarginLoss",
}
FUNCTIONAL_LOSSES = {
    "mse_loss", "l1_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div",
    "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "soft_margin_loss", "multilabel_soft_margin_loss", "triplet_margin_loss",
    "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss", "multi_margin_loss",
}

OPTIMIZERS = {
    "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
    "RAdam", "LBFGS", "ASGD", "Rprop", "SparseAdam", "Adafactor",
}

GRAD_CHECKERS = {
    "torch.autograd.gradcheck", "torch.autograd.gradgradcheck",
    "torch.autograd.gradcheck.gradcheck", "torch.autograd.gradcheck.gradgradcheck",
}

NO_GRAD_CONTEXTS = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                    "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"}
ENABLE_GRAD_CONTEXTS = {"torch.enable_grad", "torch.autograd.enable_grad"}
SET_GRAD_ENABLED = {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"}


def grad_fn_name(op: str) -> str | None:
    """The grad_fn class name torch gives the result of `op` (the common ones)."""
    return _GRAD_FN.get(op)


_GRAD_FN = {
    "add": "AddBackward0", "sub": "SubBackward0", "mul": "MulBackward0",
    "div": "DivBackward0", "pow": "PowBackward0", "matmul": "MvBackward0",
    "neg": "NegBackward0", "sum": "SumBackward0", "mean": "MeanBackward0",
    "exp": "ExpBackward0", "log": "LogBackward0", "sin": "SinBackward0",
    "cos": "CosBackward0", "tanh": "TanhBackward0", "sigmoid": "SigmoidBackward0",
    "relu": "ReluBackward0", "abs": "AbsBackward0", "sqrt": "SqrtBackward0",
    "clone": "CloneBackward0", "getitem": "SelectBackward0", "to": "ToCopyBackward0",
    "double": "ToCopyBackward0", "float": "ToCopyBackward0", "half": "ToCopyBackward0",
    "cuda": "ToCopyBackward0", "mse_loss": "MseLossBackward0",
}
