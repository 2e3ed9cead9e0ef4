"""The autograd-lsp language server (pygls 2): a thin shell over `analysis`.

    from autograd_lsp.server import run
    run()                        # stdio
    run(tcp=("127.0.0.1", 2087))

Messages are read by `transport` (framing, resynchronisation, lifecycle) and
handled by pygls. Over TCP the server takes one client at a time, each with a
fresh server state: a second client is refused while one is connected, and a
client that reconnects after the first one vanished starts clean.
"""
from __future__ import annotations

import asyncio
import os
import sys


def run(tcp: tuple[str, int] | None = None) -> None:
    """Serve until a client sends `exit`; the process's exit code is 0 when
    `shutdown` came before `exit`, 1 otherwise (LSP)."""
    from autograd_lsp.startup import quiet_gc, quiet_parser_warnings, settle

    with quiet_gc():
        from autograd_lsp.server.app import create_server
        from autograd_lsp.server import transport

    settle()
    quiet_parser_warnings()
    try:
        if tcp is not None:
            code = asyncio.run(_serve_tcp(create_server, transport, *tcp))
        else:
            code = asyncio.run(_serve_stdio(create_server(), transport))
    except KeyboardInterrupt:
        code = 1
    # Leave at once: an abandoned analysis may still run in a worker thread, and
    # interpreter shutdown would wait for it.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


async def _serve_stdio(ls, transport) -> int:
    from pygls.io_ import StdoutWriter

    ls.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        return await transport.serve(ls, transport.StdinSource(sys.stdin.fileno()))
    finally:
        ls.close()


async def _serve_tcp(create_server, transport, host: str, port: int) -> int:
    finished = asyncio.Event()
    state = {"busy": False, "code": 1}

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if state["busy"]:
            # One client per server: another one would see the first one's documents.
            writer.close()
            return
        state["busy"] = True
        ls = create_server()
        ls.protocol.set_writer(writer)
        try:
            code = await transport.serve(ls, transport.StreamSource(reader))
        finally:
            state["busy"] = False
            ls.close()
            writer.close()
        if ls.lifecycle.exit_code is not None:
            state["code"] = code
            finished.set()

    server = await asyncio.start_server(connection, host, port)
    async with server:
        await finished.wait()
    return state["code"]


__all__ = ["run"]
