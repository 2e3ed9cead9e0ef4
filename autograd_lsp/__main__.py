"""`python -m autograd_lsp ...` is the same as the `autograd-lsp` command."""
from autograd_lsp.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
