"""autograd-lsp: a language server and command line that find PyTorch autograd
pitfalls by reading the code, never running it.

The analysis core is `autograd_lsp.analysis`; this package is its edge: the
command line (`cli`), project configuration (`config`), output formats
(`output`, `ci_formats`), notebooks (`notebooks`) and the language server
(`server`).

Where the core lives: the repository keeps it in its top-level `analysis/`
folder, and the wheel installs that folder as `autograd_lsp.analysis`
(pyproject.toml's `package-dir`), so no package named `analysis` is ever
installed to collide with a user's own. Editable installs map the name the same
way. Run straight from a checkout (the repository root on `sys.path`, nothing
installed), the name resolves through the repository root, added below.
"""
import os as _os
import sys as _sys
from pathlib import Path as _Path

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


def _checkout_root():
    """The repository root when this package is a checkout's `autograd_lsp/`
    beside the core's `analysis/` folder; None when installed."""
    here = _Path(__file__).resolve().parent
    if (here / "analysis").is_dir():
        return None
    root = here.parent
    return root if (root / "analysis" / "engine.py").is_file() else None


if _checkout_root() is not None:
    # Submodules are looked up along __path__: `autograd_lsp.analysis` is then the
    # checkout's `analysis/` folder, found lazily like any other submodule.
    __path__.append(str(_checkout_root()))
