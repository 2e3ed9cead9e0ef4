"""JSON-RPC over a byte stream: framing, resynchronisation and the LSP lifecycle.

pygls' own reader (pygls 2.1) trusts the stream: a `Content-Length` of 2**63
raises OverflowError and kills the server; a length too large or too small, a
lower-case header name or LF-only header lines leave it reading the wrong
bytes for good; malformed JSON and JSON that is not a message get no reply; a
request whose params fail validation gets no response at all. This module
reads instead, and hands pygls only well-formed messages:

- headers are found by name, in any case, with CRLF or LF line ends, anywhere
  in a line (so garbage before a header is skipped: that is resynchronisation);
- a body whose length was declared too large is cut where the next header
  begins, or after the stream stays quiet for `QUIET_SECONDS`; one declared too
  short is completed up to the next header;
- errors are answered as JSON-RPC says: -32700 parse error, -32600 invalid
  request, -32602 invalid params; LSP's lifecycle is enforced: -32002 before
  `initialize`, -32600 after `shutdown`;
- `exit` ends the serving loop; `run` then ends the process at once, even while
  an abandoned analysis still runs in a worker thread;
- incremental changes are applied here, with the core's lines (`SourceText`),
  and pygls gets the whole new text: pygls 2.1 applies a range to lines split by
  `str.splitlines`, which also breaks at form feeds, U+001C-U+001E, U+0085,
  U+2028 and U+2029, so an edit below such a character lands in the wrong place.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading

from lsprotocol import types

logger = logging.getLogger("autograd_lsp.server")

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, SERVER_NOT_INITIALIZED = -32700, -32600, -32602, -32002
# A message larger than this is not from an editor: it is skipped, not buffered.
MAX_MESSAGE_BYTES = 128 * 1024 * 1024
# How long a body may stall before the bytes read so far are taken as the whole body.
QUIET_SECONDS = 1.0
_HEADER = b"content-length:"
# What `str.splitlines` takes for a line break and LSP does not (besides \r, \n).
_ODD_LINE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_READ_SIZE = 65536


class StdinSource:
    """Bytes from a file descriptor, read by a thread (pipes cannot be awaited portably)."""

    def __init__(self, fd: int):
        self._fd = fd
        self._queue: asyncio.Queue | None = None

    async def read(self) -> bytes:
        if self._queue is None:
            self._queue = asyncio.Queue()
            loop = asyncio.get_running_loop()
            threading.Thread(target=self._pump, args=(loop,), daemon=True,
                             name="stdin-reader").start()
        return await self._queue.get()

    def _pump(self, loop) -> None:
        while True:
            try:
                chunk = os.read(self._fd, _READ_SIZE)
            except OSError:
                chunk = b""
            loop.call_soon_threadsafe(self._queue.put_nowait, chunk)
            if not chunk:
                return


class StreamSource:
    def __init__(self, reader: asyncio.StreamReader):
        self._reader = reader

    async def read(self) -> bytes:
        try:
            return await self._reader.read(_READ_SIZE)
        except (ConnectionError, OSError):
            return b""


class Framer:
    """Message bodies from a source of bytes, whatever state the stream is in."""

    def __init__(self, source, on_bad_length=lambda: None):
        self.source = source
        self.buffer = bytearray()
        self.eof = False
        # Called at once for a header whose length cannot be used (the caller answers it).
        self.on_bad_length = on_bad_length

    async def _fill(self, timeout: float | None = None) -> bool:
        """Read more bytes into the buffer; False at the end of the stream or on timeout."""
        if self.eof:
            return False
        try:
            chunk = await (asyncio.wait_for(self.source.read(), timeout) if timeout
                           else self.source.read())
        except asyncio.TimeoutError:
            return False
        if not chunk:
            self.eof = True
            return False
        self.buffer += chunk
        return True

    async def _line(self) -> bytes | None:
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end + 1])
                del self.buffer[:end + 1]
                return line
            if len(self.buffer) > MAX_MESSAGE_BYTES:
                self.buffer.clear()      # a "line" this long is garbage
            if not await self._fill():
                return None

    async def next_body(self) -> bytes | None:
        """The next message body; None at the end of the stream."""
        while True:
            length = await self._headers()
            if length is None:
                return None
            if length > MAX_MESSAGE_BYTES:
                self.on_bad_length()
                continue
            return await self._body(length)

    async def _headers(self) -> int | None:
        length = None
        while True:
            line = await self._line()
            if line is None:
                return None
            found = line.lower().find(_HEADER)
            if found >= 0:
                value = line[found + len(_HEADER):].strip()
                length = int(value) if value.isdigit() and len(value) <= 12 else None
                if length is None:
                    self.on_bad_length()
                continue
            if not line.strip() and length is not None:
                return length
            # Any other header (Content-Type) or stray bytes: skip.

    async def _body(self, length: int) -> bytes:
        scanned = 0
        while len(self.buffer) < length:
            # A body that runs into the next message's header had its length declared
            # too large: it ends there if what comes before is a whole message.
            nxt = self._find_header(scanned)
            scanned = max(len(self.buffer) - len(_HEADER), 0)
            if nxt > 0 and _parses(self.buffer[:nxt]):
                break
            if not await self._fill(QUIET_SECONDS):
                break
        take = min(length, len(self.buffer))
        if not _parses(self.buffer[:take]):
            nxt = self._find_header(0, take)
            if nxt > 0 and _parses(self.buffer[:nxt]):
                take = nxt
        body = bytes(self.buffer[:take])
        del self.buffer[:take]
        if not _parses(body):
            # Declared too short: the rest is what comes before the next header.
            nxt = self._find_header(0)
            rest = bytes(self.buffer[:nxt if nxt >= 0 else len(self.buffer)])
            if rest and _parses(body + rest):
                del self.buffer[:len(rest)]
                body += rest
        return body

    def _find_header(self, start: int, end: int | None = None) -> int:
        end = len(self.buffer) if end is None else end
        found = bytes(self.buffer[start:end]).lower().find(_HEADER)
        return -1 if found < 0 else start + found


def _parses(data) -> bool:
    try:
        json.loads(bytes(data))
    except (ValueError, RecursionError):
        return False
    return True


# -- messages ---------------------------------------------------------------------------

class Lifecycle:
    """Where the session is: before `initialize`, running, after `shutdown`, exited."""

    def __init__(self):
        self.initialized = False
        self.shut_down = False
        self.exit_code: int | None = None


def handle_body(ls, body: bytes, lifecycle: Lifecycle, stop: asyncio.Event) -> None:
    protocol = ls.protocol
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        send_error(protocol, None, PARSE_ERROR, "Parse error: the message is not JSON")
        return
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        send_error(protocol, _id_of(data), INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
        return
    method = data.get("method")
    has_id = "id" in data
    msg_id = data.get("id")
    if has_id and not (msg_id is None or isinstance(msg_id, (int, str))) or isinstance(msg_id, bool):
        send_error(protocol, None, INVALID_REQUEST, "Invalid Request: bad id")
        return
    if method is None:
        if has_id and ("result" in data or "error" in data):
            _dispatch(ls, body, None, msg_id)   # a response to one of our requests
        else:
            send_error(protocol, _id_of(data), INVALID_REQUEST, "Invalid Request: no method")
        return
    if not isinstance(method, str):
        send_error(protocol, _id_of(data), INVALID_REQUEST, "Invalid Request: method must be a string")
        return
    request = has_id
    if method == types.TEXT_DOCUMENT_DID_CHANGE and lifecycle.initialized and not lifecycle.shut_down:
        body = _as_whole_text(ls, data, body)
    if method == types.EXIT:
        lifecycle.exit_code = 0 if lifecycle.shut_down else 1
        stop.set()
        return
    if lifecycle.shut_down:
        if request:
            send_error(protocol, msg_id, INVALID_REQUEST, "the server is shutting down")
        return
    if not lifecycle.initialized:
        if method != types.INITIALIZE:
            if request:
                send_error(protocol, msg_id, SERVER_NOT_INITIALIZED, "the server is not initialized")
            return
    elif method == types.INITIALIZE:
        if request:
            send_error(protocol, msg_id, INVALID_REQUEST, "initialize was already received")
        return
    if _dispatch(ls, body, method if request else None, msg_id):
        if method == types.INITIALIZE:
            lifecycle.initialized = True
        elif method == types.SHUTDOWN:
            lifecycle.shut_down = True


def _dispatch(ls, body: bytes, request_method: str | None, msg_id) -> bool:
    """Hand the message to pygls; True when it was accepted."""
    protocol = ls.protocol
    try:
        message = json.loads(body, object_hook=protocol.structure_message)
    except Exception as exc:  # noqa: BLE001 - lsprotocol's validation raises many kinds
        if request_method is not None:
            send_error(protocol, msg_id, INVALID_PARAMS,
                       f"Invalid params for {request_method}: {_short(exc)}")
        else:
            logger.warning("dropped a message with invalid params: %s", _short(exc))
        return False
    protocol.handle_message(message)
    return True


def _as_whole_text(ls, data: dict, body: bytes) -> bytes:
    """The didChange message with its changes applied: one change, the whole text."""
    from autograd_lsp.server.positions import LineIndex
    try:
        params = data["params"]
        uri = params["textDocument"]["uri"]
        changes = params["contentChanges"]
        document = ls.workspace.text_documents.get(uri)
        if document is None or not isinstance(changes, list):
            return body
        text = document.source
        if not _ODD_LINE_BREAKS.search(text) and not any(
                isinstance(change, dict) and _ODD_LINE_BREAKS.search(str(change.get("text", "")))
                for change in changes):
            return body          # pygls' lines are LSP's lines: let it apply the changes
        for change in changes:
            if "range" not in change:
                text = change["text"]
                continue
            index = LineIndex(text, ls.workspace.position_encoding)
            source = index.source
            (start_line, start_column), (end_line, end_column) = (
                index.from_client(_position(change["range"][end])) for end in ("start", "end"))
            start = source.offset(start_line, start_column)
            end = max(start, source.offset(end_line, end_column))
            text = text[:start] + change["text"] + text[end:]
    except (KeyError, TypeError, ValueError):
        return body          # malformed: pygls validates it and answers
    params["contentChanges"] = [{"text": text}]
    return json.dumps(data).encode()


def _position(raw: dict) -> types.Position:
    line, character = raw["line"], raw["character"]
    if not (isinstance(line, int) and isinstance(character, int)) or line < 0 or character < 0:
        raise ValueError("not a position")
    return types.Position(line, character)


def send_error(protocol, msg_id, code: int, message: str) -> None:
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def _id_of(data):
    if isinstance(data, dict):
        value = data.get("id")
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            return value
    return None


def _short(exc: BaseException) -> str:
    from autograd_lsp.analysis.errors import describe_error
    cause = exc.__cause__ or exc
    return describe_error(cause, 200)


class _AnsweredElsewhere(logging.Filter):
    """pygls logs, with a full traceback, a message it cannot structure (answered
    here with -32602) and a cancellation of a request already answered (normal:
    the answer and the cancellation crossed). Neither is an error of the server."""

    QUIET = ("Unable to deserialize message", "Cancel notification for unknown message id")

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(self.QUIET))


logging.getLogger("pygls.protocol.json_rpc").addFilter(_AnsweredElsewhere())


async def serve(ls, source) -> int:
    """Read and dispatch messages until `exit` or the end of the stream; the exit code."""
    framer = Framer(source, lambda: send_error(ls.protocol, None, PARSE_ERROR,
                                               "Parse error: bad Content-Length"))
    lifecycle = Lifecycle()
    ls.lifecycle = lifecycle
    stop = asyncio.Event()
    while not stop.is_set():
        body = await framer.next_body()
        if body is None:
            break
        try:
            handle_body(ls, body, lifecycle, stop)
        except Exception as exc:  # noqa: BLE001 - the loop must survive any one message
            logger.error("failed to handle a message: %s", _short(exc))
    if lifecycle.exit_code is None:
        return 0 if lifecycle.shut_down else 1
    return lifecycle.exit_code
