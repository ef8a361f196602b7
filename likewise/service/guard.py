"""The service's front door, as pure ASGI middleware: what is refused before any route runs.

In order: a ``Host`` header outside the allowed names (400: a page elsewhere that reaches a loopback
server through DNS rebinding sends its own host name), a state-changing request from a foreign
``Origin`` (403: no preflight protects a body-less cross-site ``POST``), a missing token (401) and a body
over the limit (413). Every refusal is the API's JSON error body. No CORS headers are ever sent, so
browsers keep other origins' pages from reading answers. In front of it all, :class:`HeadAsGet` answers
``HEAD`` on every GET route as that GET without its body (the routes are declared for GET only).
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["HEAD_AS_GET", "LOOPBACK_NAMES", "OPEN_PATHS", "Guard", "HeadAsGet", "host_name"]

#: Host names a loopback server answers to by default.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})

#: Paths open without the token: the page and what it needs to load and ask for one.
OPEN_PATHS = frozenset({"/", "/health", "/openapi.json", "/favicon.ico"})

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

#: The scope key :class:`HeadAsGet` sets on a ``HEAD`` it passes on as ``GET`` (a 405 then names HEAD).
HEAD_AS_GET = "likewise.head_as_get"


class HeadAsGet:
    """ASGI middleware: a ``HEAD`` request is run as ``GET`` and answered with its status and headers,
    ``Content-Length`` included, and no body (RFC 9110 9.3.2); FastAPI's GET routes answered HEAD 405."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Any) -> None:
            if message["type"] == "http.response.body":
                message = {**message, "body": b""}
            await send(message)

        await self.app({**scope, "method": "GET", HEAD_AS_GET: True}, receive, headers_only)


def host_name(host: str) -> str:
    """The name part of a ``Host`` header or an origin's netloc: no port, no IPv6 brackets, lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


async def _send_json(
    send: Any, status: int, payload: dict, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8", errors="backslashreplace")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """Host, method, origin, token and body-size checks in front of the application.

    Written against ASGI directly rather than with ``@app.middleware("http")``: Starlette's
    BaseHTTPMiddleware wraps every request in an extra task and stream, which costs more than a neighbour
    query with an index.

    Parameters
    ----------
    app
        The ASGI application behind the guard.
    token : str or None
        When set, API paths need ``Authorization: Bearer <token>``.
    max_body : int
        Largest request body in bytes.
    allowed_hosts : iterable of str, or None
        Host names (without port) the server answers to; None accepts any (only sensible behind a
        proxy that checks it, or off loopback with a token).
    """

    def __init__(
        self,
        app: Any,
        *,
        token: str | None,
        max_body: int,
        allowed_hosts: Iterable[str] | None = None,
    ) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode() if token else None
        self.max_body = max_body
        self.allowed = None if allowed_hosts is None else frozenset(host_name(h) for h in allowed_hosts)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        path = scope["path"]
        method = scope["method"]
        host = headers.get(b"host", b"").decode("latin-1")
        if self.allowed is not None and host and host_name(host) not in self.allowed:
            return await _send_json(
                send,
                400,
                {
                    "error": f"Host header {host[:100]!r} is not one this server answers to "
                    f"({', '.join(sorted(self.allowed))}); start it with --allow-host NAME to add one"
                },
            )
        origin = headers.get(b"origin")
        if origin is not None and method not in _SAFE_METHODS and not self._same_origin(origin, host):
            return await _send_json(
                send,
                403,
                {
                    "error": f"a {method} from origin {origin.decode('latin-1')[:100]!r} is refused: "
                    "state-changing and query requests are accepted from this server's own page only"
                },
            )
        if self.expected is not None and path not in OPEN_PATHS and not path.startswith("/static/"):
            if not hmac.compare_digest(headers.get(b"authorization", b""), self.expected):
                return await _send_json(
                    send,
                    401,
                    {"error": "missing or wrong token: send 'Authorization: Bearer <token>'"},
                    [(b"www-authenticate", b"Bearer")],
                )
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit() or int(length) > self.max_body:
                return await _send_json(
                    send,
                    413,
                    {
                        "error": f"request body of {length.decode(errors='replace')[:40]} bytes is over the "
                        f"limit of {self.max_body} bytes"
                    },
                )
            return await self.app(scope, receive, send)
        if method not in ("POST", "PUT", "PATCH"):
            return await self.app(scope, receive, send)
        # No Content-Length (a chunked body): read it here, up to the limit, then replay it to the app.
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client went away
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > self.max_body:
                return await _send_json(
                    send, 413, {"error": f"request body is over the limit of {self.max_body} bytes"}
                )
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        return await self.app(scope, replay, send)

    @staticmethod
    def _same_origin(origin: bytes, host: str) -> bool:
        """Whether ``Origin`` names the host the request was sent to (the page served from here)."""
        text = origin.decode("latin-1")
        if text == "null":  # sandboxed frames and file:// pages: never this server's page
            return False
        netloc = urlsplit(text).netloc.lower()
        return bool(host) and netloc == host.strip().lower()
