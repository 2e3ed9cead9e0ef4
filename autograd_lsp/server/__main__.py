"""`python -m autograd_lsp.server [--tcp HOST:PORT]`."""
from __future__ import annotations

import argparse

from autograd_lsp.server import run


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m autograd_lsp.server",
                                     description="Run the autograd-lsp language server.")
    parser.add_argument("--tcp", metavar="HOST:PORT",
                        help="listen on a TCP socket instead of stdin/stdout")
    # Editor clients (vscode-languageclient among them) append --stdio; it is the default.
    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    tcp = None
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        tcp = (host or "127.0.0.1", int(port))
    run(tcp=tcp)


if __name__ == "__main__":
    main()
