"""autograd-lsp: a language server and command line that find PyTorch autograd
pitfalls by reading the code, never running it.

The analysis lives in the `analysis` package; this package is its edge: the
command line (`cli`), project configuration (`config`), output formats
(`output`) and the language server (`server`).
"""
import os as _os
import sys as _sys

__version__ = "0.1.0"


def _never_import_from_the_workspace() -> None:
    """`python -m autograd_lsp` puts the working directory first on the import
    path, and editors start servers in the workspace folder: a project with its
    own `analysis` (or `lsprotocol`...) package would be imported and run in our
    place. Unless this very package was found there, the working directory
    leaves the path before anything else is imported."""
    def folder(path: str) -> str:
        return _os.path.normcase(_os.path.abspath(path or "."))

    workspace = folder(_os.getcwd())
    if folder(_os.path.dirname(_os.path.dirname(__file__))) == workspace:
        return
    _sys.path[:] = [entry for entry in _sys.path if folder(entry) != workspace]

_never_import_from_the_workspace()
