"""Where a service request's time goes, in-process: the ASGI app called directly, no sockets, no client.

Usage::

    .venv/bin/python bench/service_inprocess.py --model /tmp/loadcache/bench-load-1000000x100 [--calls 2000]

``--model`` is a saved space (with its index, as ``bench/load_service.py --cache DIR`` leaves at
``DIR/bench-load-1000000x100``); without it a 100 000 x 100 clustered space without an index is made in a
temporary folder (``--items`` rows). Prints, per call (mean over ``--calls``, after 200 warm-up calls):

* ``GET /models/bench/similar?item=...&k=10`` through the whole app (guard, routing, the served-model
  dependency, the thread hop of ``service/respond.answer``, the BLAS policy, JSON);
* the same route with the BLAS policy replaced by a no-op;
* ``GET /health``;
* ``Embeddings.similar`` alone, then with the answer's records and JSON, then under ``query_threads(1)``;
* a bare FastAPI route returning a constant, and the same with its body in the thread pool (the
  framework's and the hop's own cost on this machine and these library versions).

Timings of one process on a shared machine: compare rows of one run, and runs alternated with
``PYTHONPATH`` on another checkout for a before/after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


async def _call(app: Any, path: str, query: str = "") -> None:
    sent: list[dict] = []
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg: dict) -> None:
        sent.append(msg)

    await app(scope, receive, send)
    if sent[0]["status"] != 200:
        raise SystemExit(f"{path}?{query} answered {sent[0]['status']}: {sent[1:]}")


async def _per_call(app: Any, path: str, queries: list[str]) -> float:
    for q in queries[:200]:
        await _call(app, path, q)
    t = time.perf_counter()
    for q in queries:
        await _call(app, path, q)
    return (time.perf_counter() - t) / len(queries) * 1e6


def _direct(fn: Any, items: list[str]) -> float:
    for it in items[:200]:
        fn(it)
    t = time.perf_counter()
    for it in items:
        fn(it)
    return (time.perf_counter() - t) / len(items) * 1e6


def _bare_app() -> Any:
    from fastapi import FastAPI
    from fastapi.responses import Response
    from starlette.concurrency import run_in_threadpool

    app = FastAPI()

    @app.get("/inline")
    async def inline(item: str, k: int = 10) -> Response:
        return Response(b"{}", media_type="application/json")

    @app.get("/hop")
    async def hop(item: str, k: int = 10) -> Response:
        return await run_in_threadpool(lambda: Response(b"{}", media_type="application/json"))

    return app


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=None, help="a saved space (default: a 100 000 x 100 one, made here)")
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--items", type=int, default=100_000, help="rows of the space made without --model")
    a = p.parse_args(argv)

    import likewise
    import likewise.service.respond as respond
    from likewise import Embeddings, Vocab
    from likewise._threads import query_threads
    from likewise.service import create_app
    from likewise.service.models import ModelSpec, Registry

    with tempfile.TemporaryDirectory() as tmp:
        model = Path(a.model) if a.model else Path(tmp) / "space"
        if not a.model:
            rng = np.random.default_rng(0)
            centres = rng.standard_normal((1000, 100)).astype(np.float32)
            x = centres[rng.integers(0, 1000, a.items)] + 0.3 * rng.standard_normal((a.items, 100))
            Embeddings(x.astype(np.float32), Vocab([f"i{i}" for i in range(a.items)])).save(model)
        registry = Registry([ModelSpec("bench", model)])
        app = create_app(registry)
        emb = registry.get("bench").emb
        rnd = random.Random(0)
        items = [emb.vocab.keys[rnd.randrange(len(emb))] for _ in range(a.calls)]
        queries = [f"item={it}&k=10" for it in items]
        shape = f"{len(emb):,} x {emb.dim}, index: {emb.index is not None}"
        print(f"likewise {likewise.__file__}; model {model} ({shape})")

        rows = [("GET similar, whole app", asyncio.run(_per_call(app, "/models/bench/similar", queries)))]
        real = respond.query_threads
        respond.query_threads = lambda n: contextlib.nullcontext(1)  # type: ignore[assignment]
        try:
            rows.append(
                (
                    "  the same, BLAS policy a no-op",
                    asyncio.run(_per_call(app, "/models/bench/similar", queries)),
                )
            )
        finally:
            respond.query_threads = real
        rows.append(("GET /health", asyncio.run(_per_call(app, "/health", [""] * a.calls))))
        rows.append(("Embeddings.similar", _direct(lambda it: emb.similar(it, k=10), items)))

        def answer(it: str) -> Any:
            return respond.json_response(respond.envelope([(it, emb.similar(it, k=10))]))

        rows.append(("  + records and JSON", _direct(answer, items)))

        def policed(it: str) -> None:
            with query_threads(1):
                answer(it)

        rows.append(("  + BLAS policy", _direct(policed, items)))
        bare = _bare_app()
        rows.append(("bare FastAPI route", asyncio.run(_per_call(bare, "/inline", queries))))
        rows.append(("  its body in the thread pool", asyncio.run(_per_call(bare, "/hop", queries))))
    for name, us in rows:
        print(f"{name:<36} {us:8.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
