"""What torch's API does, measured on tiny tensors. Generated: do not edit.

Written by tools/generate_torch_tables.py from torch 2.13.0+cpu;
tests/test_torch_tables.py fails when the installed torch measures differently.
"""

# qualified dtype name -> dtype
DTYPES = {
    'torch.bfloat16': 'bfloat16',
    'torch.bit': 'uint1',
    'torch.bits16': 'bits16',
    'torch.bits1x8': 'bits1x8',
    'torch.bits2x4': 'bits2x4',
    'torch.bits4x2': 'bits4x2',
    'torch.bits8': 'bits8',
    'torch.bool': 'bool',
    'torch.cdouble': 'complex128',
    'torch.cfloat': 'complex64',
    'torch.chalf': 'complex32',
    'torch.complex128': 'complex128',
    'torch.complex32': 'complex32',
    'torch.complex64': 'complex64',
    'torch.double': 'float64',
    'torch.float': 'float32',
    'torch.float16': 'float16',
    'torch.float32': 'float32',
    'torch.float4_e2m1fn_x2': 'float4_e2m1fn_x2',
    'torch.float64': 'float64',
    'torch.float8_e4m3fn': 'float8_e4m3fn',
    'torch.float8_e4m3fnuz': 'float8_e4m3fnuz',
    'torch.float8_e5m2': 'float8_e5m2',
    'torch.float8_e5m2fnuz': 'float8_e5m2fnuz',
    'torch.float8_e8m0fnu': 'float8_e8m0fnu',
    'torch.half': 'float16',
    'torch.int': 'int32',
    'torch.int1': 'int1',
    'torch.int16': 'int16',
    'torch.int2': 'int2',
    'torch.int3': 'int3',
    'torch.int32': 'int32',
    'torch.int4': 'int4',
    'torch.int5': 'int5',
    'torch.int6': 'int6',
    'torch.int64': 'int64',
    'torch.int7': 'int7',
    'torch.int8': 'int8',
    'torch.long': 'int64',
    'torch.qint32': 'qint32',
    'torch.qint8': 'qint8',
    'torch.quint2x4': 'quint2x4',
    'torch.quint4x2': 'quint4x2',
    'torch.quint8': 'quint8',
    'torch.short': 'int16',
    'torch.uint1': 'uint1',
    'torch.uint16': 'uint16',
    'torch.uint2': 'uint2',
    'torch.uint3': 'uint3',
    'torch.uint32': 'uint32',
    'torch.uint4': 'uint4',
    'torch.uint5': 'uint5',
    'torch.uint6': 'uint6',
    'torch.uint64': 'uint64',
    'torch.uint7': 'uint7',
    'torch.uint8': 'uint8',
}

# Tensor method named after a dtype -> the dtype it gives
DTYPE_METHODS = {
    'bfloat16': 'bfloat16',
    'bool': 'bool',
    'byte': 'uint8',
    'cdouble': 'complex128',
    'cfloat': 'complex64',
    'chalf': 'complex32',
    'char': 'int8',
    'double': 'float64',
    'float': 'float32',
    'half': 'float16',
    'int': 'int32',
    'long': 'int64',
    'short': 'int16',
}

# factory -> default dtype (None: by argument kind, see FACTORY_DTYPES_BY_KIND)
FACTORY_DTYPES = {
    'torch.arange': None,
    'torch.empty': 'float32',
    'torch.eye': 'float32',
    'torch.full': None,
    'torch.linspace': 'float32',
    'torch.logspace': 'float32',
    'torch.normal': 'float32',
    'torch.ones': 'float32',
    'torch.rand': 'float32',
    'torch.randint': 'int64',
    'torch.randn': 'float32',
    'torch.randperm': 'int64',
    'torch.zeros': 'float32',
}

# factory -> kind of the deciding argument -> dtype
FACTORY_DTYPES_BY_KIND = {
    'torch.arange': {
        'float': 'float32',
        'int': 'int64',
    },
    'torch.full': {
        'bool': 'bool',
        'float': 'float32',
        'int': 'int64',
    },
}

# factories that copy shape and dtype from a tensor argument
LIKE_FACTORIES = {
    'torch.empty_like', 'torch.full_like', 'torch.ones_like', 'torch.rand_like',
    'torch.randint_like', 'torch.randn_like', 'torch.zeros_like',
}

# factories whose first argument is data
DATA_FACTORIES = {
    'torch.as_tensor', 'torch.asarray', 'torch.tensor',
}

# kind of the data given to torch.tensor -> dtype
DATA_DTYPES = {
    'bool': 'bool',
    'complex': 'complex64',
    'float': 'float32',
    'int': 'int64',
}

# data factories whose result from a graph tensor has no grad
DATA_FACTORIES_CUTTING_GRAPH = {
    'torch.tensor',
}

# factories that take requires_grad=
ACCEPTS_REQUIRES_GRAD = {
    'torch.arange', 'torch.asarray', 'torch.empty', 'torch.empty_like', 'torch.eye',
    'torch.full', 'torch.full_like', 'torch.linspace', 'torch.logspace', 'torch.normal',
    'torch.ones', 'torch.ones_like', 'torch.rand', 'torch.rand_like', 'torch.randint',
    'torch.randint_like', 'torch.randn', 'torch.randn_like', 'torch.randperm',
    'torch.tensor', 'torch.zeros', 'torch.zeros_like',
}

# method on a float32 leaf -> 'new' non-leaf, or the 'same_if_unchanged' tensor when dtype and device stay
LEAF_CONVERSIONS = {
    'add': 'new',
    'bfloat16': 'new',
    'clone': 'new',
    'contiguous': 'same_if_unchanged',
    'cpu': 'same_if_unchanged',
    'cuda': 'same_if_unchanged',
    'double': 'new',
    'float': 'same_if_unchanged',
    'half': 'new',
    'mul': 'new',
    'to': 'same_if_unchanged',
    'type': 'same_if_unchanged',
}

# entries taken from torch's documentation, not measured here
DOCUMENTED_NOT_MEASURED = {
    'GRAD_FN.cuda', 'LEAF_CONVERSIONS.cuda', 'SAVES_NOTHING.cuda',
}

# Tensor methods that modify data in place (refused on a leaf requiring grad)
INPLACE_METHODS = {
    'abs_', 'absolute_', 'acos_', 'acosh_', 'add_', 'addbmm_', 'addcdiv_', 'addcmul_',
    'addmm_', 'addmv_', 'addr_', 'arccos_', 'arccosh_', 'arcsin_', 'arcsinh_', 'arctan2_',
    'arctan_', 'arctanh_', 'as_strided_', 'asin_', 'asinh_', 'atan2_', 'atan_', 'atanh_',
    'baddbmm_', 'bernoulli_', 'bitwise_and_', 'bitwise_left_shift_', 'bitwise_not_',
    'bitwise_or_', 'bitwise_right_shift_', 'bitwise_xor_', 'cauchy_', 'ceil_', 'clamp_',
    'clamp_max_', 'clamp_min_', 'clip_', 'conj_physical_', 'copy_', 'copysign_', 'cos_',
    'cosh_', 'cumprod_', 'cumsum_', 'deg2rad_', 'digamma_', 'div_', 'divide_', 'eq_',
    'erf_', 'erfc_', 'erfinv_', 'exp2_', 'exp_', 'expm1_', 'exponential_', 'fill_',
    'fill_diagonal_', 'fix_', 'floor_', 'floor_divide_', 'fmod_', 'frac_', 'gcd_', 'ge_',
    'geometric_', 'greater_', 'greater_equal_', 'gt_', 'heaviside_', 'hypot_', 'i0_',
    'igamma_', 'igammac_', 'index_add_', 'index_copy_', 'index_fill_', 'index_put_',
    'index_reduce_', 'lcm_', 'ldexp_', 'le_', 'lerp_', 'less_', 'less_equal_', 'lgamma_',
    'log10_', 'log1p_', 'log2_', 'log_', 'log_normal_', 'logical_and_', 'logical_not_',
    'logical_or_', 'logical_xor_', 'logit_', 'lt_', 'masked_fill_', 'masked_scatter_',
    'mul_', 'multiply_', 'mvlgamma_', 'nan_to_num_', 'ne_', 'neg_', 'negative_',
    'nextafter_', 'normal_', 'not_equal_', 'polygamma_', 'pow_', 'put_', 'rad2deg_',
    'random_', 'reciprocal_', 'relu_', 'remainder_', 'renorm_', 'resize_as_sparse_',
    'round_', 'rsqrt_', 'scatter_', 'scatter_add_', 'scatter_reduce_', 'set_', 'sgn_',
    'sigmoid_', 'sign_', 'sin_', 'sinc_', 'sinh_', 'sqrt_', 'square_', 'squeeze_', 'sub_',
    'subtract_', 'swapaxes_', 'swapdims_', 't_', 'tan_', 'tanh_', 'transpose_', 'tril_',
    'triu_', 'true_divide_', 'trunc_', 'uniform_', 'unsqueeze_', 'xlogy_', 'zero_',
}

# in-place methods torch runs on a leaf requiring grad (their result is not differentiable)
INPLACE_ALLOWED_ON_LEAF = {
    'logical_and_', 'logical_not_', 'logical_or_', 'logical_xor_',
}

# Tensor methods ending in _ that change neither data nor version
NOT_INPLACE_UNDERSCORE = {
    'detach_', 'requires_grad_', 'share_memory_',
}

# Tensor methods ending in _ that no trial call reached
UNVERIFIED_UNDERSCORE = {
    'apply_', 'float_power_', 'map2_', 'map_', 'resize_', 'resize_as_', 'sparse_resize_',
    'sparse_resize_and_clear_',
}

# augmented assignments that modify a tensor in place
INPLACE_OPERATORS = {
    '%=', '&=', '**=', '*=', '+=', '-=', '//=', '/=', '<<=', '>>=', '^=', '|=',
}

# augmented assignments that make a new tensor
REBINDING_OPERATORS = {
    '@=',
}

# Tensor methods keeping shape and dtype, differentiable
ELEMENTWISE_METHODS = {
    'abs', 'absolute', 'acos', 'acosh', 'add', 'angle', 'arccos', 'arccosh', 'arcsin',
    'arcsinh', 'arctan', 'arctanh', 'asin', 'asinh', 'atan', 'atanh', 'bernoulli', 'ceil',
    'clamp', 'clamp_max', 'clamp_min', 'clip', 'clone', 'copysign', 'cos', 'cosh',
    'cumprod', 'cumsum', 'deg2rad', 'digamma', 'div', 'divide', 'erf', 'erfc', 'erfinv',
    'exp', 'exp2', 'expm1', 'fix', 'fliplr', 'flipud', 'floor', 'fmod', 'frac',
    'hardshrink', 'i0', 'lgamma', 'log', 'log10', 'log1p', 'log2', 'log_softmax',
    'logcumsumexp', 'logit', 'msort', 'mul', 'multiply', 'mvlgamma', 'nan_to_num', 'neg',
    'negative', 'polygamma', 'pow', 'rad2deg', 'reciprocal', 'relu', 'remainder', 'roll',
    'round', 'rsqrt', 'sgn', 'sigmoid', 'sign', 'sin', 'sinc', 'sinh', 'softmax', 'sqrt',
    'square', 'sub', 'subtract', 'tan', 'tanh', 'tril', 'triu', 'true_divide', 'trunc',
    'xlogy',
}

# torch.NAME keeping shape and dtype
ELEMENTWISE_TORCH = {
    'abs', 'absolute', 'acos', 'acosh', 'add', 'alias_copy', 'angle', 'arccos', 'arccosh',
    'arcsin', 'arcsinh', 'arctan', 'arctanh', 'asin', 'asinh', 'atan', 'atanh',
    'bernoulli', 'ceil', 'celu', 'clamp', 'clamp_max', 'clamp_min', 'clip', 'clone',
    'copysign', 'cos', 'cosh', 'cumprod', 'cumsum', 'deg2rad', 'digamma', 'div', 'divide',
    'erf', 'erfc', 'erfinv', 'exp', 'exp2', 'expm1', 'fill', 'fix', 'fliplr', 'flipud',
    'floor', 'fmod', 'frac', 'hardshrink', 'i0', 'lgamma', 'log', 'log10', 'log1p', 'log2',
    'log_softmax', 'logcumsumexp', 'logit', 'msort', 'mul', 'multiply', 'mvlgamma',
    'nan_to_num', 'neg', 'negative', 'normal', 'poisson', 'pow', 'rad2deg', 'reciprocal',
    'relu', 'remainder', 'roll', 'round', 'rrelu', 'rsqrt', 'rsub', 'selu', 'sgn',
    'sigmoid', 'sign', 'sin', 'sinc', 'sinh', 'slice_copy', 'softmax', 'sqrt', 'square',
    'sub', 'subtract', 'tan', 'tanh', 'tril', 'triu', 'true_divide', 'trunc', 'xlogy',
}

# torch.nn.functional.NAME keeping shape and dtype
ELEMENTWISE_FUNCTIONAL = {
    'celu', 'dropout', 'dropout1d', 'dropout2d', 'dropout3d', 'elu', 'gelu',
    'gumbel_softmax', 'hardshrink', 'hardsigmoid', 'hardswish', 'hardtanh', 'leaky_relu',
    'log_softmax', 'logsigmoid', 'mish', 'normalize', 'relu', 'relu6', 'rrelu', 'selu',
    'sigmoid', 'silu', 'softmax', 'softmin', 'softplus', 'softshrink', 'softsign', 'tanh',
    'tanhshrink',
}

# torch.special.NAME keeping shape and dtype
ELEMENTWISE_SPECIAL = {
    'digamma', 'entr', 'erf', 'erfc', 'erfcx', 'erfinv', 'exp2', 'expit', 'expm1',
    'gammaln', 'i0', 'i0e', 'i1', 'i1e', 'log1p', 'log_ndtr', 'log_softmax', 'logit',
    'multigammaln', 'ndtr', 'ndtri', 'psi', 'round', 'sinc', 'softmax', 'xlog1py', 'xlogy',
    'zeta',
}

# names keeping shape wherever they exist and changing it nowhere
ELEMENTWISE = {
    'abs', 'absolute', 'acos', 'acosh', 'add', 'alias_copy', 'angle', 'arccos', 'arccosh',
    'arcsin', 'arcsinh', 'arctan', 'arctanh', 'asin', 'asinh', 'atan', 'atanh',
    'bernoulli', 'ceil', 'celu', 'clamp', 'clamp_max', 'clamp_min', 'clip', 'clone',
    'copysign', 'cos', 'cosh', 'cumprod', 'cumsum', 'deg2rad', 'digamma', 'div', 'divide',
    'dropout', 'dropout1d', 'dropout2d', 'dropout3d', 'elu', 'entr', 'erf', 'erfc',
    'erfcx', 'erfinv', 'exp', 'exp2', 'expit', 'expm1', 'fill', 'fix', 'fliplr', 'flipud',
    'floor', 'fmod', 'frac', 'gammaln', 'gelu', 'gumbel_softmax', 'hardshrink',
    'hardsigmoid', 'hardswish', 'hardtanh', 'i0', 'i0e', 'i1', 'i1e', 'leaky_relu',
    'lgamma', 'log', 'log10', 'log1p', 'log2', 'log_ndtr', 'log_softmax', 'logcumsumexp',
    'logit', 'logsigmoid', 'mish', 'msort', 'mul', 'multigammaln', 'multiply', 'mvlgamma',
    'nan_to_num', 'ndtr', 'ndtri', 'neg', 'negative', 'normal', 'normalize', 'poisson',
    'polygamma', 'pow', 'psi', 'rad2deg', 'reciprocal', 'relu', 'relu6', 'remainder',
    'roll', 'round', 'rrelu', 'rsqrt', 'rsub', 'selu', 'sgn', 'sigmoid', 'sign', 'silu',
    'sin', 'sinc', 'sinh', 'slice_copy', 'softmax', 'softmin', 'softplus', 'softshrink',
    'softsign', 'sqrt', 'square', 'sub', 'subtract', 'tan', 'tanh', 'tanhshrink', 'tril',
    'triu', 'true_divide', 'trunc', 'xlog1py', 'xlogy', 'zeta',
}

# names giving a 0-dim tensor when called without dim
REDUCTIONS = {
    'all', 'amax', 'amin', 'any', 'argmax', 'argmin', 'count_nonzero', 'hash_tensor',
    'max', 'mean', 'median', 'min', 'nanmean', 'nanmedian', 'nansum', 'norm', 'prod',
    'std', 'sum', 'trace', 'var',
}

# reductions whose result on float32 is not float32 (not differentiable)
REDUCTION_DTYPES = {
    'all': 'bool',
    'any': 'bool',
    'argmax': 'int64',
    'argmin': 'int64',
    'count_nonzero': 'int64',
    'hash_tensor': 'uint64',
}

# reductions that take dim= and drop that dim
REDUCTIONS_WITH_DIM = {
    'all', 'amax', 'amin', 'any', 'argmax', 'argmin', 'count_nonzero', 'hash_tensor',
    'max', 'mean', 'median', 'min', 'nanmean', 'nanmedian', 'nansum', 'norm', 'prod',
    'std', 'sum', 'var',
}

# reductions returning (values, indices) when given dim
REDUCTIONS_DIM_RETURNS_PAIR = {
    'max', 'median', 'min', 'nanmedian',
}

# methods giving one tensor of another shape
SHAPE_OPS = {
    'bmm', 'diagonal', 'diff', 'expand', 'expand_as', 'flatten', 'gather', 'index_select',
    'masked_select', 'matmul', 'mm', 'movedim', 'mv', 'narrow', 'outer', 'permute',
    'repeat', 'reshape', 'reshape_as', 'squeeze', 'swapaxes', 't', 'tile', 'transpose',
    'unflatten', 'unfold', 'unsqueeze', 'view', 'view_as',
}

# shape methods giving a tuple of tensors
SHAPE_OPS_RETURNING_TUPLE = {
    'chunk', 'split', 'unbind',
}

# op -> grad_fn class name of its result
GRAD_FN = {
    'BCELoss': 'BinaryCrossEntropyBackward0',
    'BCEWithLogitsLoss': 'BinaryCrossEntropyWithLogitsBackward0',
    'CosineEmbeddingLoss': 'MeanBackward0',
    'CrossEntropyLoss': 'NllLossBackward0',
    'GaussianNLLLoss': 'MeanBackward0',
    'HingeEmbeddingLoss': 'MeanBackward0',
    'HuberLoss': 'HuberLossBackward0',
    'KLDivLoss': 'MeanBackward0',
    'L1Loss': 'MeanBackward0',
    'MSELoss': 'MseLossBackward0',
    'MarginRankingLoss': 'MeanBackward0',
    'MultiLabelMarginLoss': 'MultilabelMarginLossBackward0',
    'MultiLabelSoftMarginLoss': 'MeanBackward0',
    'MultiMarginLoss': 'MultiMarginLossBackward0',
    'NLLLoss': 'NllLossBackward0',
    'PoissonNLLLoss': 'MeanBackward0',
    'SmoothL1Loss': 'SmoothL1LossBackward0',
    'SoftMarginLoss': 'SoftMarginLossBackward0',
    'TripletMarginLoss': 'MeanBackward0',
    'TripletMarginWithDistanceLoss': 'MeanBackward0',
    'abs': 'AbsBackward0',
    'absolute': 'AbsBackward0',
    'acos': 'AcosBackward0',
    'acosh': 'AcoshBackward0',
    'add': 'AddBackward0',
    'add_scalar': 'AddBackward0',
    'add_tensor': 'AddBackward0',
    'alias_copy': 'AliasBackward0_copy',
    'amax': 'AmaxBackward0',
    'amax_dim': 'AmaxBackward0',
    'amin': 'AminBackward0',
    'amin_dim': 'AminBackward0',
    'angle': 'AngleBackward0',
    'arccos': 'AcosBackward0',
    'arccosh': 'AcoshBackward0',
    'arcsin': 'AsinBackward0',
    'arcsinh': 'AsinhBackward0',
    'arctan': 'AtanBackward0',
    'arctanh': 'AtanhBackward0',
    'asin': 'AsinBackward0',
    'asinh': 'AsinhBackward0',
    'atan': 'AtanBackward0',
    'atanh': 'AtanhBackward0',
    'bernoulli': 'BernoulliBackward0',
    'binary_cross_entropy': 'BinaryCrossEntropyBackward0',
    'binary_cross_entropy_with_logits': 'BinaryCrossEntropyWithLogitsBackward0',
    'cat': 'CatBackward0',
    'ceil': 'CeilBackward0',
    'celu': 'CeluBackward0',
    'clamp': 'ClampBackward1',
    'clamp_max': 'ClampMaxBackward0',
    'clamp_min': 'ClampMinBackward0',
    'clip': 'ClampBackward1',
    'clone': 'CloneBackward0',
    'contiguous': 'CloneBackward0',
    'copysign': 'CopysignBackward1',
    'cos': 'CosBackward0',
    'cosh': 'CoshBackward0',
    'cosine_embedding_loss': 'MeanBackward0',
    'cross_entropy': 'NllLossBackward0',
    'cuda': 'ToCopyBackward0',
    'cumprod': 'CumprodBackward0',
    'cumsum': 'CumsumBackward0',
    'deg2rad': 'Deg2RadBackward0',
    'digamma': 'DigammaBackward0',
    'div': 'DivBackward0',
    'div_scalar': 'DivBackward0',
    'div_tensor': 'DivBackward0',
    'divide': 'DivBackward0',
    'double': 'ToCopyBackward0',
    'dropout': 'MulBackward0',
    'dropout2d': 'MulBackward0',
    'dropout3d': 'SqueezeBackward1',
    'elu': 'EluBackward0',
    'entr': 'SpecialEntrBackward0',
    'erf': 'ErfBackward0',
    'erfc': 'ErfcBackward0',
    'erfcx': 'SpecialErfcxBackward0',
    'erfinv': 'ErfinvBackward0',
    'exp': 'ExpBackward0',
    'exp2': 'Exp2Backward0',
    'expand': 'ExpandBackward0',
    'expit': 'SigmoidBackward0',
    'expm1': 'Expm1Backward0',
    'fill': 'FillBackward0',
    'fix': 'TruncBackward0',
    'flatten': 'ViewBackward0',
    'fliplr': 'FlipBackward0',
    'flipud': 'FlipBackward0',
    'float': 'ToCopyBackward0',
    'floor': 'FloorBackward0',
    'fmod': 'FmodBackward0',
    'frac': 'FracBackward0',
    'gammaln': 'LgammaBackward0',
    'gaussian_nll_loss': 'MeanBackward0',
    'gelu': 'GeluBackward0',
    'getitem': 'SelectBackward0',
    'getitem_index': 'IndexBackward0',
    'getitem_mask': 'IndexBackward0',
    'getitem_slice': 'SliceBackward0',
    'gumbel_softmax': 'SoftmaxBackward0',
    'half': 'ToCopyBackward0',
    'hardshrink': 'HardshrinkBackward0',
    'hardsigmoid': 'HardsigmoidBackward0',
    'hardswish': 'HardswishBackward0',
    'hardtanh': 'HardtanhBackward0',
    'hinge_embedding_loss': 'MeanBackward0',
    'huber_loss': 'HuberLossBackward0',
    'i0': 'I0Backward0',
    'i0e': 'SpecialI0EBackward0',
    'i1': 'SpecialI1Backward0',
    'i1e': 'SpecialI1EBackward0',
    'kl_div': 'MeanBackward0',
    'l1_loss': 'MeanBackward0',
    'leaky_relu': 'LeakyReluBackward0',
    'lgamma': 'LgammaBackward0',
    'log': 'LogBackward0',
    'log10': 'Log10Backward0',
    'log1p': 'Log1PBackward0',
    'log2': 'Log2Backward0',
    'log_ndtr': 'SpecialLogNdtrBackward0',
    'log_softmax': 'LogSoftmaxBackward0',
    'logcumsumexp': 'LogcumsumexpBackward0',
    'logit': 'LogitBackward0',
    'logsigmoid': 'LogSigmoidBackward0',
    'logsumexp_dim': 'LogsumexpBackward0',
    'margin_ranking_loss': 'MeanBackward0',
    'matmul_tensor': 'MmBackward0',
    'max': 'MaxBackward1',
    'max_dim': 'MaxBackward0',
    'mean': 'MeanBackward0',
    'mean_dim': 'MeanBackward1',
    'median': 'MedianBackward0',
    'median_dim': 'MedianBackward1',
    'min': 'MinBackward1',
    'min_dim': 'MinBackward0',
    'mish': 'MishBackward0',
    'mse_loss': 'MseLossBackward0',
    'msort': 'SortBackward0',
    'mul': 'MulBackward0',
    'mul_scalar': 'MulBackward0',
    'mul_tensor': 'MulBackward0',
    'multi_margin_loss': 'MultiMarginLossBackward0',
    'multigammaln': 'MvlgammaBackward0',
    'multilabel_margin_loss': 'MultilabelMarginLossBackward0',
    'multilabel_soft_margin_loss': 'MeanBackward0',
    'multiply': 'MulBackward0',
    'mvlgamma': 'MvlgammaBackward0',
    'nan_to_num': 'NanToNumBackward0',
    'nanmean': 'DivBackward0',
    'nanmean_dim': 'DivBackward0',
    'nanmedian': 'NanmedianBackward0',
    'nanmedian_dim': 'NanmedianBackward1',
    'nansum': 'NansumBackward0',
    'nansum_dim': 'NansumBackward0',
    'ndtr': 'MulBackward1',
    'ndtri': 'SpecialNdtriBackward0',
    'neg': 'NegBackward0',
    'negative': 'NegBackward0',
    'nll_loss': 'NllLossBackward0',
    'norm': 'LinalgVectorNormBackward0',
    'norm_dim': 'LinalgVectorNormBackward0',
    'normal': 'NormalBackward1',
    'normalize': 'DivBackward0',
    'permute': 'PermuteBackward0',
    'poisson': 'PoissonBackward0',
    'poisson_nll_loss': 'MeanBackward0',
    'polygamma': 'PolygammaBackward0',
    'pow': 'PowBackward0',
    'pow_scalar': 'PowBackward0',
    'pow_tensor': 'PowBackward1',
    'prod': 'ProdBackward0',
    'prod_dim': 'ProdBackward1',
    'psi': 'DigammaBackward0',
    'rad2deg': 'Rad2DegBackward0',
    'rdiv_scalar': 'MulBackward0',
    'reciprocal': 'ReciprocalBackward0',
    'relu': 'ReluBackward0',
    'relu6': 'HardtanhBackward0',
    'remainder': 'RemainderBackward0',
    'reshape': 'ViewBackward0',
    'roll': 'RollBackward0',
    'rpow_scalar': 'PowBackward2',
    'rrelu': 'RreluWithNoiseBackward0',
    'rsqrt': 'RsqrtBackward0',
    'rsub': 'RsubBackward1',
    'selu': 'EluBackward0',
    'sgn': 'SgnBackward0',
    'sigmoid': 'SigmoidBackward0',
    'sign': 'SignBackward0',
    'silu': 'SiluBackward0',
    'sin': 'SinBackward0',
    'sinc': 'SincBackward0',
    'sinh': 'SinhBackward0',
    'slice_copy': 'SliceBackward0_copy',
    'smooth_l1_loss': 'SmoothL1LossBackward0',
    'soft_margin_loss': 'SoftMarginLossBackward0',
    'softmax': 'SoftmaxBackward0',
    'softmin': 'SoftmaxBackward0',
    'softplus': 'SoftplusBackward0',
    'softshrink': 'SoftshrinkBackward0',
    'softsign': 'DivBackward0',
    'sqrt': 'SqrtBackward0',
    'square': 'PowBackward0',
    'squeeze': 'SqueezeBackward1',
    'stack': 'StackBackward0',
    'std': 'StdBackward0',
    'std_dim': 'StdBackward0',
    'sub': 'SubBackward0',
    'sub_scalar': 'SubBackward0',
    'sub_tensor': 'SubBackward0',
    'subtract': 'SubBackward0',
    'sum': 'SumBackward0',
    'sum_dim': 'SumBackward1',
    't': 'TBackward0',
    'tan': 'TanBackward0',
    'tanh': 'TanhBackward0',
    'tanhshrink': 'SubBackward0',
    'to': 'ToCopyBackward0',
    'trace': 'TraceBackward0',
    'transpose': 'TransposeBackward0',
    'tril': 'TrilBackward0',
    'triplet_margin_loss': 'MeanBackward0',
    'triplet_margin_with_distance_loss': 'MeanBackward0',
    'triu': 'TriuBackward0',
    'true_divide': 'DivBackward0',
    'trunc': 'TruncBackward0',
    'unsqueeze': 'UnsqueezeBackward0',
    'var': 'VarBackward0',
    'var_dim': 'VarBackward0',
    'view': 'ViewBackward0',
    'xlog1py': 'SpecialXlog1PyBackward2',
    'xlogy': 'XlogyBackward2',
    'zeta': 'SpecialZetaBackward2',
}

# functions giving one differentiable tensor -> its grad_fn
DIFFERENTIABLE_FUNCTIONS = {
    'torch.addmm': 'AddmmBackward0',
    'torch.atan2': 'Atan2Backward0',
    'torch.bmm': 'BmmBackward0',
    'torch.cdist': 'CdistBackward0',
    'torch.cross': 'LinalgCrossBackward0',
    'torch.cumprod': 'CumprodBackward0',
    'torch.cumsum': 'CumsumBackward0',
    'torch.diag': 'DiagEmbedBackward0',
    'torch.diff': 'SubBackward0',
    'torch.dot': 'DotBackward0',
    'torch.einsum': 'ViewBackward0',
    'torch.flip': 'FlipBackward0',
    'torch.gather': 'GatherBackward0',
    'torch.hypot': 'HypotBackward0',
    'torch.index_select': 'IndexSelectBackward0',
    'torch.inner': 'ViewBackward0',
    'torch.kron': 'UnsafeViewBackward0',
    'torch.lerp': 'LerpBackward0',
    'torch.linalg.norm': 'LinalgVectorNormBackward0',
    'torch.linalg.vector_norm': 'LinalgVectorNormBackward0',
    'torch.logsumexp': 'LogsumexpBackward0',
    'torch.masked_fill': 'MaskedFillBackward0',
    'torch.matmul': 'MmBackward0',
    'torch.maximum': 'MaximumBackward0',
    'torch.minimum': 'MinimumBackward0',
    'torch.mm': 'MmBackward0',
    'torch.mv': 'MvBackward0',
    'torch.narrow': 'SliceBackward0',
    'torch.nn.functional.cosine_similarity': 'SumBackward1',
    'torch.nn.functional.dropout': 'MulBackward0',
    'torch.nn.functional.embedding': 'EmbeddingBackward0',
    'torch.nn.functional.layer_norm': 'NativeLayerNormBackward0',
    'torch.nn.functional.linear': 'MmBackward0',
    'torch.nn.functional.normalize': 'DivBackward0',
    'torch.nn.functional.pad': 'ConstantPadNdBackward0',
    'torch.nn.functional.pairwise_distance': 'NormBackward1',
    'torch.outer': 'MulBackward0',
    'torch.roll': 'RollBackward0',
    'torch.tensordot': 'ViewBackward0',
    'torch.trace': 'TraceBackward0',
    'torch.vdot': 'VdotBackward0',
    'torch.where': 'WhereBackward0',
}

# Tensor methods named like those functions
DIFFERENTIABLE_METHODS = {
    'addmm', 'atan2', 'bmm', 'cross', 'cumprod', 'cumsum', 'diag', 'diff', 'dot', 'flip',
    'gather', 'hypot', 'index_select', 'inner', 'kron', 'lerp', 'logsumexp', 'masked_fill',
    'matmul', 'maximum', 'minimum', 'mm', 'mv', 'narrow', 'outer', 'roll', 'trace', 'vdot',
    'where',
}

# op -> operand ranks ('s': a Python number) -> grad_fn
GRAD_FN_BY_OPERANDS = {
    'add': {
        '1,1': 'AddBackward0',
        '1,s': 'AddBackward0',
        's,1': 'AddBackward0',
    },
    'div': {
        '1,1': 'DivBackward0',
        '1,s': 'DivBackward0',
        's,1': 'MulBackward0',
    },
    'matmul': {
        '1,1': 'DotBackward0',
        '1,2': 'SqueezeBackward4',
        '1,3': 'UnsafeViewBackward0',
        '2,1': 'MvBackward0',
        '2,2': 'MmBackward0',
        '2,3': 'CloneBackward0',
        '3,1': 'UnsafeViewBackward0',
        '3,2': 'UnsafeViewBackward0',
        '3,3': 'UnsafeViewBackward0',
    },
    'mul': {
        '1,1': 'MulBackward0',
        '1,s': 'MulBackward0',
        's,1': 'MulBackward0',
    },
    'pow': {
        '1,1': 'PowBackward1',
        '1,s': 'PowBackward0',
        's,1': 'PowBackward2',
    },
    'sub': {
        '1,1': 'SubBackward0',
        '1,s': 'SubBackward0',
        's,1': 'RsubBackward1',
    },
}

# ops that fail backward when their input is modified in place
SAVES_INPUT = {
    'abs', 'absolute', 'acos', 'acosh', 'angle', 'arccos', 'arccosh', 'arcsin', 'arcsinh',
    'arctan', 'arctanh', 'asin', 'asinh', 'atan', 'atanh', 'celu', 'clamp', 'clamp_max',
    'clamp_min', 'clip', 'copysign', 'cos', 'cosh', 'cumprod', 'digamma', 'div_tensor',
    'elu', 'entr', 'erf', 'erfc', 'erfcx', 'erfinv', 'gammaln', 'gelu', 'hardshrink',
    'hardsigmoid', 'hardswish', 'hardtanh', 'i0', 'i0e', 'i1', 'i1e', 'leaky_relu',
    'lgamma', 'log', 'log10', 'log1p', 'log2', 'log_ndtr', 'logcumsumexp', 'logit',
    'logsigmoid', 'logsumexp_dim', 'matmul_tensor', 'max', 'mish', 'mul_tensor',
    'multigammaln', 'mvlgamma', 'nan_to_num', 'norm', 'normalize', 'polygamma', 'pow',
    'pow_scalar', 'pow_tensor', 'prod', 'psi', 'relu6', 'rpow_scalar', 'rrelu', 'selu',
    'sgn', 'silu', 'sin', 'sinc', 'sinh', 'softplus', 'softshrink', 'softsign', 'square',
    'std', 'var', 'xlog1py', 'xlogy',
}

# ops that fail backward when their output is modified in place
SAVES_OUTPUT = {
    'copysign', 'cumprod', 'erfcx', 'exp', 'exp2', 'expit', 'expm1', 'gumbel_softmax',
    'i0e', 'i1', 'i1e', 'log_ndtr', 'log_softmax', 'logcumsumexp', 'logsumexp_dim', 'max',
    'ndtri', 'norm', 'pow_tensor', 'prod', 'reciprocal', 'relu', 'rpow_scalar', 'rsqrt',
    'sgn', 'sigmoid', 'softmax', 'softmin', 'sqrt', 'std', 'tan', 'tanh',
}

# ops that a second backward passes through without retain_graph
SAVES_NOTHING = {
    'add', 'add_scalar', 'add_tensor', 'alias_copy', 'bernoulli', 'cat', 'ceil', 'clone',
    'contiguous', 'cuda', 'cumsum', 'deg2rad', 'double', 'expand', 'fill', 'fix',
    'flatten', 'fliplr', 'flipud', 'float', 'floor', 'fmod', 'frac', 'getitem',
    'getitem_slice', 'half', 'mean', 'mean_dim', 'neg', 'negative', 'normal', 'permute',
    'poisson', 'rad2deg', 'remainder', 'reshape', 'roll', 'round', 'rsub', 'sign',
    'slice_copy', 'squeeze', 'stack', 'sub', 'sub_scalar', 'sub_tensor', 'subtract', 'sum',
    'sum_dim', 't', 'to', 'transpose', 'tril', 'triu', 'trunc', 'unsqueeze', 'view',
}

# every op key the saving tables measured
MEASURED_OPS = {
    'abs', 'absolute', 'acos', 'acosh', 'add', 'add_scalar', 'add_tensor', 'alias_copy',
    'angle', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctanh', 'asin',
    'asinh', 'atan', 'atanh', 'bernoulli', 'cat', 'ceil', 'celu', 'clamp', 'clamp_max',
    'clamp_min', 'clip', 'clone', 'contiguous', 'copysign', 'cos', 'cosh', 'cumprod',
    'cumsum', 'deg2rad', 'digamma', 'div_scalar', 'div_tensor', 'double', 'elu', 'entr',
    'erf', 'erfc', 'erfcx', 'erfinv', 'exp', 'exp2', 'expand', 'expit', 'expm1', 'fill',
    'fix', 'flatten', 'fliplr', 'flipud', 'float', 'floor', 'fmod', 'frac', 'gammaln',
    'gelu', 'getitem', 'getitem_index', 'getitem_mask', 'getitem_slice', 'gumbel_softmax',
    'half', 'hardshrink', 'hardsigmoid', 'hardswish', 'hardtanh', 'i0', 'i0e', 'i1', 'i1e',
    'leaky_relu', 'lgamma', 'log', 'log10', 'log1p', 'log2', 'log_ndtr', 'log_softmax',
    'logcumsumexp', 'logit', 'logsigmoid', 'logsumexp_dim', 'matmul_tensor', 'max',
    'max_dim', 'mean', 'mean_dim', 'mish', 'mul_scalar', 'mul_tensor', 'multigammaln',
    'mvlgamma', 'nan_to_num', 'ndtri', 'neg', 'negative', 'norm', 'normal', 'normalize',
    'permute', 'poisson', 'polygamma', 'pow', 'pow_scalar', 'pow_tensor', 'prod', 'psi',
    'rad2deg', 'rdiv_scalar', 'reciprocal', 'relu', 'relu6', 'remainder', 'reshape',
    'roll', 'round', 'rpow_scalar', 'rrelu', 'rsqrt', 'rsub', 'selu', 'sgn', 'sigmoid',
    'sign', 'silu', 'sin', 'sinc', 'sinh', 'slice_copy', 'softmax', 'softmin', 'softplus',
    'softshrink', 'softsign', 'sqrt', 'square', 'squeeze', 'stack', 'std', 'sub',
    'sub_scalar', 'sub_tensor', 'subtract', 'sum', 'sum_dim', 't', 'tan', 'tanh', 'to',
    'transpose', 'tril', 'triu', 'trunc', 'unsqueeze', 'var', 'view', 'xlog1py', 'xlogy',
}

# torch.nn loss class -> default reduction
NN_LOSS_REDUCTION = {
    'BCELoss': 'mean',
    'BCEWithLogitsLoss': 'mean',
    'CTCLoss': 'mean',
    'CosineEmbeddingLoss': 'mean',
    'CrossEntropyLoss': 'mean',
    'GaussianNLLLoss': 'mean',
    'HingeEmbeddingLoss': 'mean',
    'HuberLoss': 'mean',
    'KLDivLoss': 'mean',
    'L1Loss': 'mean',
    'MSELoss': 'mean',
    'MarginRankingLoss': 'mean',
    'MultiLabelMarginLoss': 'mean',
    'MultiLabelSoftMarginLoss': 'mean',
    'MultiMarginLoss': 'mean',
    'NLLLoss': 'mean',
    'NLLLoss2d': 'mean',
    'PoissonNLLLoss': 'mean',
    'SmoothL1Loss': 'mean',
    'SoftMarginLoss': 'mean',
    'TripletMarginLoss': 'mean',
    'TripletMarginWithDistanceLoss': 'mean',
}

# torch.nn.functional loss -> default reduction
FUNCTIONAL_LOSS_REDUCTION = {
    'binary_cross_entropy': 'mean',
    'binary_cross_entropy_with_logits': 'mean',
    'cosine_embedding_loss': 'mean',
    'cross_entropy': 'mean',
    'ctc_loss': 'mean',
    'gaussian_nll_loss': 'mean',
    'hinge_embedding_loss': 'mean',
    'huber_loss': 'mean',
    'kl_div': 'mean',
    'l1_loss': 'mean',
    'linear_cross_entropy': 'mean',
    'margin_ranking_loss': 'mean',
    'mse_loss': 'mean',
    'multi_margin_loss': 'mean',
    'multilabel_margin_loss': 'mean',
    'multilabel_soft_margin_loss': 'mean',
    'nll_loss': 'mean',
    'poisson_nll_loss': 'mean',
    'smooth_l1_loss': 'mean',
    'soft_margin_loss': 'mean',
    'triplet_margin_loss': 'mean',
    'triplet_margin_with_distance_loss': 'mean',
}

# torch.nn classes with parameters when built with small arguments
NN_LAYERS_WITH_PARAMS = {
    'BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'Bilinear', 'Conv1d', 'Conv2d', 'Conv3d',
    'ConvTranspose1d', 'ConvTranspose2d', 'ConvTranspose3d', 'Embedding', 'EmbeddingBag',
    'GRU', 'GRUCell', 'GroupNorm', 'LSTM', 'LSTMCell', 'LayerNorm', 'LazyBatchNorm1d',
    'LazyBatchNorm2d', 'LazyBatchNorm3d', 'LazyConv1d', 'LazyConv2d', 'LazyConv3d',
    'LazyConvTranspose1d', 'LazyConvTranspose2d', 'LazyConvTranspose3d',
    'LazyInstanceNorm1d', 'LazyInstanceNorm2d', 'LazyInstanceNorm3d', 'LazyLinear',
    'Linear', 'MultiheadAttention', 'PReLU', 'RMSNorm', 'RNN', 'RNNCell', 'SyncBatchNorm',
    'Transformer', 'TransformerDecoderLayer', 'TransformerEncoderLayer',
}

# torch.nn classes without parameters
NN_LAYERS_WITHOUT_PARAMS = {
    'AdaptiveAvgPool1d', 'AdaptiveAvgPool2d', 'AdaptiveAvgPool3d', 'AdaptiveMaxPool1d',
    'AdaptiveMaxPool2d', 'AdaptiveMaxPool3d', 'AlphaDropout', 'AvgPool1d', 'AvgPool2d',
    'AvgPool3d', 'CELU', 'ChannelShuffle', 'CircularPad1d', 'CircularPad2d',
    'CircularPad3d', 'ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'CosineSimilarity',
    'CrossMapLRN2d', 'Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'ELU',
    'FeatureAlphaDropout', 'Flatten', 'Fold', 'FractionalMaxPool2d', 'FractionalMaxPool3d',
    'GELU', 'GLU', 'Hardshrink', 'Hardsigmoid', 'Hardswish', 'Hardtanh', 'Identity',
    'InstanceNorm1d', 'InstanceNorm2d', 'InstanceNorm3d', 'LPPool1d', 'LPPool2d',
    'LPPool3d', 'LeakyReLU', 'LocalResponseNorm', 'LogSigmoid', 'LogSoftmax', 'MaxPool1d',
    'MaxPool2d', 'MaxPool3d', 'MaxUnpool1d', 'MaxUnpool2d', 'MaxUnpool3d', 'Mish',
    'PairwiseDistance', 'PixelShuffle', 'PixelUnshuffle', 'RReLU', 'ReLU', 'ReLU6',
    'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d', 'ReplicationPad1d',
    'ReplicationPad2d', 'ReplicationPad3d', 'SELU', 'SiLU', 'Sigmoid', 'Softmax',
    'Softmax2d', 'Softmin', 'Softplus', 'Softshrink', 'Softsign', 'Tanh', 'Tanhshrink',
    'Threshold', 'Unfold', 'Upsample', 'UpsamplingBilinear2d', 'UpsamplingNearest2d',
    'ZeroPad1d', 'ZeroPad2d', 'ZeroPad3d',
}

# torch.nn containers
NN_CONTAINERS = {
    'Container', 'ModuleDict', 'ModuleList', 'ParameterDict', 'ParameterList',
    'Sequential',
}

# torch.nn activations whose forward saves its output
NN_ACTIVATIONS_SAVING_OUTPUT = {
    'LogSoftmax', 'ReLU', 'Sigmoid', 'Softmax', 'Softmin', 'Tanh',
}

# torch.nn activations whose forward saves its input
NN_ACTIVATIONS_SAVING_INPUT = {
    'CELU', 'ELU', 'GELU', 'Hardshrink', 'Hardsigmoid', 'Hardswish', 'Hardtanh',
    'LeakyReLU', 'LogSigmoid', 'Mish', 'RReLU', 'ReLU6', 'SELU', 'SiLU', 'Softplus',
    'Softshrink', 'Softsign',
}

# torch.nn classes with an inplace argument
NN_INPLACE_CAPABLE = {
    'AlphaDropout', 'CELU', 'Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d', 'ELU',
    'FeatureAlphaDropout', 'Hardsigmoid', 'Hardswish', 'Hardtanh', 'LeakyReLU', 'Mish',
    'RReLU', 'ReLU', 'ReLU6', 'SELU', 'SiLU', 'Threshold',
}

# torch.optim optimizer classes
OPTIMIZERS = {
    'ASGD', 'Adadelta', 'Adafactor', 'Adagrad', 'Adam', 'AdamW', 'Adamax', 'LBFGS', 'Muon',
    'NAdam', 'RAdam', 'RMSprop', 'Rprop', 'SGD', 'SparseAdam',
}

# qualified names of gradcheck and gradgradcheck
GRAD_CHECKERS = {
    'torch.autograd.gradcheck', 'torch.autograd.gradcheck.gradcheck',
    'torch.autograd.gradcheck.gradgradcheck', 'torch.autograd.gradgradcheck',
}

# qualified names of no_grad and inference_mode
NO_GRAD_CONTEXTS = {
    'torch.autograd.grad_mode.inference_mode', 'torch.autograd.grad_mode.no_grad',
    'torch.autograd.inference_mode', 'torch.autograd.no_grad', 'torch.inference_mode',
    'torch.no_grad',
}

# qualified names of enable_grad
ENABLE_GRAD_CONTEXTS = {
    'torch.autograd.enable_grad', 'torch.autograd.grad_mode.enable_grad',
    'torch.enable_grad',
}

# qualified names of set_grad_enabled
SET_GRAD_ENABLED = {
    'torch.autograd.grad_mode.set_grad_enabled', 'torch.autograd.set_grad_enabled',
    'torch.set_grad_enabled',
}
