"""A real ``likewise serve`` on a free loopback port, for the tests that need a real server."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx

_CLI = [sys.executable, "-c", "import sys; from likewise.cli import main; sys.exit(main())"]


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def live_server(args: list[str], env: dict | None = None) -> Iterator[tuple[str, subprocess.Popen]]:
    """Run ``likewise serve ARGS --port P`` until it answers ``/health``; yield its base URL and process.

    The token variable is cleared unless ``env`` sets it; the server is stopped on exit.
    """
    port = free_port()
    proc = subprocess.Popen(
        [*_CLI, "serve", *args, "--port", str(port)],
        env={**os.environ, "LIKEWISE_TOKEN": "", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(base + "/health", timeout=1)
            break
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"server did not start: {proc.stdout.read().decode()[-2000:]}")
        time.sleep(0.1)
    try:
        yield base, proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)
