"""The BLAS thread policy of queries (likewise/_threads.py): one thread for single queries, the caller's
count for batches, the caller's setting back afterwards, also with many threads querying at once. It is
applied at the edges (the service per request, the command line per command), never by the library's
own queries, which leave a Python caller's BLAS setting alone."""

from __future__ import annotations

import threading

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

from likewise._threads import BATCH_MIN_QUERIES, blas_threads_for, query_threads  # noqa: E402
from likewise.space.search import top_k_search  # noqa: E402


def blas_threads() -> int:
    info = threadpoolctl.threadpool_info()
    counts = [lib["num_threads"] for lib in info if lib["user_api"] == "blas"]
    if not counts:
        pytest.skip("no BLAS library that threadpoolctl can see")
    return max(counts)


def test_policy_numbers() -> None:
    assert blas_threads_for(1, 8) == 1
    assert blas_threads_for(BATCH_MIN_QUERIES - 1, 8) == 1
    assert blas_threads_for(BATCH_MIN_QUERIES, 8) == 8
    assert blas_threads_for(10_000, 0) == 1


def test_single_then_batch_then_back() -> None:
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if blas_threads() < 2:
            pytest.skip("this BLAS runs one thread at most")
        with query_threads(1) as n:
            assert n == 1 and blas_threads() == 1
            with query_threads(BATCH_MIN_QUERIES) as m:  # a batch in flight wins
                assert m == 2 and blas_threads() == 2
            assert blas_threads() == 1
        assert blas_threads() == 2
        table = np.random.default_rng(0).standard_normal((500, 8)).astype(np.float32)
        table /= np.linalg.norm(table, axis=1, keepdims=True)
        none = np.zeros(0, dtype=np.int64)
        ids, _ = top_k_search(table, table[:3], 4, none, none)
        assert ids[:, 0].tolist() == [0, 1, 2] and blas_threads() == 2


def test_concurrent_queries_restore_the_callers_setting() -> None:
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if blas_threads() < 2:
            pytest.skip("this BLAS runs one thread at most")
        seen: list[int] = []
        errors: list[BaseException] = []

        def worker(n: int) -> None:
            try:
                for _ in range(200):
                    with query_threads(n) as got:
                        seen.append(got)
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(1 if i else 64,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert set(seen) == {1, 2}
        assert blas_threads() == 2


def test_the_policy_holds_on_every_thread_while_the_first_one_lives() -> None:
    """threadpoolctl 3.8 lets only the first thread that sets an OpenBLAS count change it while that thread
    lives, and the service's worker threads live long: before, once one worker had answered a query, every
    other thread's queries ran with the caller's count (the full suite found it after the service fuzz)."""
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if blas_threads() < 2:
            pytest.skip("this BLAS runs one thread at most")
        got: dict[str, int] = {}
        answered, release = threading.Event(), threading.Event()

        def first_worker() -> None:  # answers a query, then stays alive as a pool's worker does
            with query_threads(1):
                got["first"] = blas_threads()
            answered.set()
            release.wait(30)

        def other_worker() -> None:
            with query_threads(1):
                got["other"] = blas_threads()

        first = threading.Thread(target=first_worker)
        first.start()
        try:
            assert answered.wait(30)
            with query_threads(1):
                got["main"] = blas_threads()
            other = threading.Thread(target=other_worker)
            other.start()
            other.join()
        finally:
            release.set()
            first.join()
        assert got == {"first": 1, "main": 1, "other": 1}
        assert blas_threads() == 2
    with threadpoolctl.threadpool_limits(1, user_api="blas"):  # the caller's own limits still work after
        assert blas_threads() == 1


def test_a_library_query_leaves_the_callers_blas_setting_alone(monkeypatch) -> None:
    import likewise.space.search as search

    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        if blas_threads() < 2:
            pytest.skip("this BLAS runs one thread at most")
        seen: list[int] = []
        real = search.select_top_k

        def spy(*args, **kwargs):  # called inside the query, after its product
            seen.append(blas_threads())
            return real(*args, **kwargs)

        monkeypatch.setattr(search, "select_top_k", spy)
        table = np.random.default_rng(0).standard_normal((500, 8)).astype(np.float32)
        none = np.zeros(0, dtype=np.int64)
        top_k_search(table, table[:1], 4, none, none)  # one query: the policy would have made it 1
        assert seen and set(seen) == {2}


def test_the_service_runs_each_request_under_the_policy(monkeypatch, tmp_path) -> None:
    import asyncio
    from contextlib import contextmanager

    pytest.importorskip("fastapi")
    httpx = pytest.importorskip("httpx")
    import likewise.service.respond as respond
    from likewise import Embeddings, Vocab
    from likewise.service import create_app
    from likewise.service.models import ModelSpec, Registry

    keys = [f"p{i}" for i in range(40)]
    Embeddings(np.random.default_rng(0).standard_normal((40, 8)), Vocab(keys)).save(tmp_path / "m")
    sizes: list[int] = []

    @contextmanager
    def recorded(n: int):
        sizes.append(n)
        yield 1

    monkeypatch.setattr(respond, "query_threads", recorded)
    app = create_app(Registry([ModelSpec("m", tmp_path / "m")]))

    async def go():
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            assert (await c.get("/models/m/similar", params={"item": "p1"})).status_code == 200
            r = await c.post("/models/m/similar", json={"items": keys[:20], "k": 2})
            assert r.status_code == 200

    asyncio.run(go())
    assert sizes == [1, 20]
