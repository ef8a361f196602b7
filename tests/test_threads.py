"""The BLAS thread policy of queries (likewise/_threads.py): one thread for single queries, the caller's
count for batches, the caller's setting back afterwards, also with many threads querying at once."""

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
        ids, _ = top_k_search(table, table[:3], 4, none, none)  # runs under the policy
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
