"""Load benchmark of ``likewise serve``: requests/s and latency of ``similar`` on a 1 M-item model with index.

Usage::

    .venv/bin/python bench/load_service.py [--items 1000000] [--dim 100] [--seconds 20] [--connections 32]
                                           [--workers 2] [--cache DIR]

Builds (once; cached under ``--cache``) a clustered random space of ``--items`` x ``--dim`` with its HNSW
index (``likewise index``), starts the real server (``likewise serve``, uvicorn) on loopback in a child
process, and drives it from another process with a small keep-alive HTTP/1.1 client on asyncio
(``--connections`` concurrent connections, each sending one ``GET /models/bench/similar?item=...&k=10``
after the other, items drawn at random). Prints requests/s, p50/p90/p99/max latency and the error count
(any status other than 200, or a body without 10 neighbours, is an error). The client shares the CPU
with the server, as a co-located caller would; the target is >= 2000 req/s with p99 < 25 ms on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LIKEWISE = [sys.executable, "-c", "import sys; from likewise.cli import main; sys.exit(main())"]


def build_model(path: Path, items: int, dim: int, seed: int) -> None:
    """A clustered random space (1000 Gaussian blobs) saved at ``path``, with its index."""
    from likewise import Embeddings, Vocab

    if (path / "index" / "manifest.json").is_file():
        return
    if not (path / "manifest.json").is_file():
        rng = np.random.default_rng(seed)
        centres = rng.standard_normal((1000, dim), dtype=np.float32)
        x = centres[rng.integers(0, 1000, items)]
        x += rng.standard_normal((items, dim), dtype=np.float32)
        counts = np.arange(items, 0, -1, dtype=np.int64)
        Embeddings(x, Vocab([f"i{i}" for i in range(items)], counts=counts)).save(path, overwrite=True)
        del x
    t0 = time.perf_counter()
    subprocess.run(
        [*LIKEWISE, "index", str(path), "--overwrite", "--json"], check=True, stdout=subprocess.PIPE
    )
    print(f"built the index in {time.perf_counter() - t0:.0f} s", flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _client(port: int, items: int, k: int, seconds: float, connections: int, seed: int) -> dict:
    lat: list[float] = []
    errors: list[str] = []
    deadline = time.perf_counter() + seconds

    async def one_connection(c: int) -> None:
        rnd = random.Random(seed * 1000 + c)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.perf_counter() < deadline:
                item = f"i{rnd.randrange(items)}"
                path = f"/models/bench/similar?item={item}&k={k}"
                req = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
                t0 = time.perf_counter()
                writer.write(req)
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                body = await reader.readexactly(length)
                lat.append(time.perf_counter() - t0)
                status = head[9:12]
                if status != b"200" or body.count(b'"item"') != k:
                    errors.append(f"{status.decode()} {body[:200]!r}")
        finally:
            writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(one_connection(c) for c in range(connections)))
    wall = time.perf_counter() - t0
    ms = np.sort(np.asarray(lat)) * 1000
    return {
        "requests": len(lat),
        "seconds": wall,
        "req_per_s": len(lat) / wall,
        "p50_ms": float(np.percentile(ms, 50)),
        "p90_ms": float(np.percentile(ms, 90)),
        "p99_ms": float(np.percentile(ms, 99)),
        "max_ms": float(ms[-1]),
        "errors": len(errors),
        "first_errors": errors[:3],
    }


def client_main(args: tuple, out: mp.Queue) -> None:
    out.put(asyncio.run(_client(*args)))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--items", type=int, default=1_000_000)
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--warmup", type=float, default=3.0)
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--workers", type=int, default=1, help="server processes")
    p.add_argument("--cache", default=None, help="where the model is kept between runs")
    a = p.parse_args()

    cache = Path(a.cache or os.environ.get("LIKEWISE_CACHE") or Path.home() / ".cache" / "likewise")
    model = cache / f"bench-load-{a.items}x{a.dim}"
    build_model(model, a.items, a.dim, seed=0)
    manifest = json.loads((model / "index" / "manifest.json").read_text())

    port = free_port()
    env = {**os.environ, "LIKEWISE_TOKEN": ""}
    t0 = time.perf_counter()
    server = subprocess.Popen(
        [
            *LIKEWISE,
            "serve",
            f"bench={model}",
            "--port",
            str(port),
            "--workers",
            str(a.workers),
            "--watch",
            "0",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        while True:  # ready when every worker answers: /health from several connections
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                    # a Host the server answers to (its DNS-rebinding guard refuses others with 400)
                    s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    head = s.recv(400)
                    if b"200 OK" in head:
                        break
                    if head.startswith(b"HTTP/1.1 4"):  # refused, not starting: waiting would never end
                        print(f"the server refused /health: {head.decode(errors='replace')}")
                        return 1
            except OSError:
                pass
            if server.poll() is not None:
                print(server.stdout.read().decode()[-3000:])  # type: ignore[union-attr]
                return 1
            time.sleep(0.5)
        startup = time.perf_counter() - t0
        ctx = mp.get_context("spawn")
        q: mp.Queue = ctx.Queue()
        if a.warmup > 0:  # let every worker read its pages and warm its caches
            w = ctx.Process(target=client_main, args=((port, a.items, a.k, a.warmup, a.connections, 99), q))
            w.start()
            q.get()
            w.join()
        c = ctx.Process(target=client_main, args=((port, a.items, a.k, a.seconds, a.connections, 1), q))
        c.start()
        res = q.get()
        c.join()
    finally:
        server.terminate()
        server.wait(timeout=30)

    print(
        f"model: {a.items:,} items x {a.dim} dims, index {manifest['library']} "
        f"(recall@10 {manifest['recall_at_10']:.4f} at {manifest['ms_per_query']:.3f} ms/query, "
        f"ef_search {manifest['params']['ef_search']})"
    )
    print(f"server: likewise serve --workers {a.workers} (ready in {startup:.0f} s); cores: {os.cpu_count()}")
    print(f"client: {a.connections} keep-alive connections, GET similar k={a.k}, {a.seconds:.0f} s")
    print(
        f"requests {res['requests']:,}  req/s {res['req_per_s']:,.0f}  p50 {res['p50_ms']:.2f} ms  "
        f"p90 {res['p90_ms']:.2f} ms  p99 {res['p99_ms']:.2f} ms  max {res['max_ms']:.1f} ms  "
        f"errors {res['errors']}"
    )
    for e in res["first_errors"]:
        print("  error:", e)
    return 0 if res["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
