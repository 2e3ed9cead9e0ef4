"""autograd-lsp: a language server and command line that find PyTorch autograd
pitfalls by reading the code, never running it.

The analysis lives in the `analysis` package; this package is its edge: the
command line (`cli`), project configuration (`config`), output formats
(`output`) and the language server (`server`).
"""
__version__ = "0.1.0"
