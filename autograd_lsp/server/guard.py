"""Handlers that cannot take the server down.

An exception in a handler (in practice: in the analysis, on code nobody
foresaw) is logged to the client with `window/logMessage` and the request gets
an empty result, so the editor keeps working with the other features.
"""
from __future__ import annotations

import functools
import inspect
import logging
import traceback
from typing import Any, Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcException

logger = logging.getLogger("autograd_lsp.server")


class ServerCancelled(JsonRpcException):
    """LSP's answer to a request whose result the server could not compute (the
    analysis was stopped): better than an empty result, which would mean "no problems"."""
    CODE = -32802
    MESSAGE = "the analysis of this document was stopped; see the message shown"


def log_to_client(ls, message: str, level: types.MessageType = types.MessageType.Log) -> None:
    logger.log(logging.ERROR if level == types.MessageType.Error else logging.INFO, message)
    try:
        ls.window_log_message(types.LogMessageParams(type=level, message=message))
    except Exception:  # the transport may already be closed (exit, broken pipe)
        logger.debug("could not send log message", exc_info=True)


def report_exception(ls, where: str) -> None:
    """Log the exception being handled, short: its type, the start of its text and
    where it was raised. A full traceback can be enormous (the text of a node is
    the source it spans) and formatting it would hold the event loop."""
    import sys

    from autograd_lsp.analysis.errors import describe_error
    error = sys.exc_info()[1]
    if error is None:
        log_to_client(ls, f"autograd-lsp: {where} failed", types.MessageType.Error)
        return
    frames = traceback.extract_tb(error.__traceback__)[-6:]
    stack = "; ".join(f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno} {frame.name}"
                      for frame in frames)
    log_to_client(ls, f"autograd-lsp: {where} failed: {describe_error(error)} (at {stack})",
                  types.MessageType.Error)


def guarded(handler: Callable, default: Any = None) -> Callable:
    """`handler` that logs its exceptions and returns `default` instead."""
    name = handler.__name__
    if inspect.iscoroutinefunction(handler):
        @functools.wraps(handler)
        async def async_wrapper(ls, params):
            try:
                return await handler(ls, params)
            except JsonRpcException:
                raise          # an answer for the client, not a failure
            except Exception:
                report_exception(ls, name)
                return default
        return async_wrapper

    @functools.wraps(handler)
    def wrapper(ls, params):
        try:
            return handler(ls, params)
        except Exception:
            report_exception(ls, name)
            return default
    return wrapper
