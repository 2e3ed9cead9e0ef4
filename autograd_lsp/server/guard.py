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

logger = logging.getLogger("autograd_lsp.server")


def log_to_client(ls, message: str, level: types.MessageType = types.MessageType.Log) -> None:
    logger.log(logging.ERROR if level == types.MessageType.Error else logging.INFO, message)
    try:
        ls.window_log_message(types.LogMessageParams(type=level, message=message))
    except Exception:  # the transport may already be closed (exit, broken pipe)
        logger.debug("could not send log message", exc_info=True)


def report_exception(ls, where: str) -> None:
    log_to_client(ls, f"autograd-lsp: {where} failed:\n{traceback.format_exc()}",
                  types.MessageType.Error)


def guarded(handler: Callable, default: Any = None) -> Callable:
    """`handler` that logs its exceptions and returns `default` instead."""
    name = handler.__name__
    if inspect.iscoroutinefunction(handler):
        @functools.wraps(handler)
        async def async_wrapper(ls, params):
            try:
                return await handler(ls, params)
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
