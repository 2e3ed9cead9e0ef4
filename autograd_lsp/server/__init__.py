"""The autograd-lsp language server (pygls 2): a thin shell over `analysis`.

    from autograd_lsp.server import run
    run()                        # stdio
    run(tcp=("127.0.0.1", 2087))
"""
from __future__ import annotations

import sys


def run(tcp: tuple[str, int] | None = None) -> None:
    """Serve one client until it sends `exit`; the process's exit code is 0 when
    `shutdown` came before `exit`, 1 otherwise (LSP)."""
    from autograd_lsp.startup import quiet_gc, settle

    with quiet_gc():
        from autograd_lsp.server.app import create_server

        ls = create_server()
    settle()
    if tcp is not None:
        host, port = tcp
        ls.start_tcp(host, port)
    else:
        ls.start_io()
    ls.analysis_pool.shutdown(wait=False, cancel_futures=True)
    sys.exit(0 if ls.shutdown_requested else 1)


__all__ = ["run"]
