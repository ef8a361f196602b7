"""Shared contract tests: every nearest-neighbour index and every training backend passes the same set
(as every implicit model passes its ``RecommenderBaseTestMixin``).

A test module subclasses a contract and says how to make the thing under test:

    class TestExactIndex(IndexContract):
        def make_index(self, emb):
            return ExactIndex.of(emb)

The data are planted, so the answers are known: clustered vectors for the indexes (exact search is the
oracle), baskets drawn within planted groups for the backends (neighbours must share the group).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from likewise import Embeddings, Row, TrainConfig, Vocab
from likewise.errors import InputError, SpaceMismatchError
from likewise.space.search import top_k_search


def clustered_space(n: int = 1500, dim: int = 16, clusters: int = 30, seed: int = 0) -> Embeddings:
    """Vectors around ``clusters`` random centres: neighbours are well defined but not trivial."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim)).astype(np.float32)
    x = centres[rng.integers(0, clusters, n)] + 0.7 * rng.standard_normal((n, dim)).astype(np.float32)
    return Embeddings(x, Vocab([f"i{i}" for i in range(n)], counts=np.arange(n, 0, -1)))


@pytest.fixture(scope="class")
def space() -> Embeddings:
    """The planted space of :class:`IndexContract`."""
    return clustered_space()


@pytest.fixture(scope="class")
def built(request: pytest.FixtureRequest, space: Embeddings) -> Any:
    """The index under test, made once per contract class by its ``make_index``."""
    return request.cls().make_index(space)


@pytest.fixture(scope="class")
def data():
    """The planted baskets and labels of :class:`BackendContract`."""
    return planted_baskets()


@pytest.fixture(scope="class")
def trained(request: pytest.FixtureRequest, data) -> Embeddings:
    """The space the backend under test trains, deterministic, once per contract class."""
    from likewise import train

    return train(data[0], request.cls().config(deterministic=True))


class IndexContract:
    """What any index (``search(unit queries, k) -> ids``) must do, against exact search."""

    #: share of the exact top-10 an index must find; 1.0 means identical results, order included
    recall_floor = 1.0

    def make_index(self, emb: Embeddings) -> Any:
        raise NotImplementedError

    def test_describes_its_space(self, space: Embeddings, built: Any) -> None:
        from likewise.index import NeighbourIndex

        assert isinstance(built, NeighbourIndex)
        assert (built.fingerprint, built.size, built.dim) == (space.fingerprint, len(space), space.dim)
        built.warm()
        assert built.loaded

    def test_search_returns_ids_best_first(self, space: Embeddings, built: Any) -> None:
        q = space.normed[:50]
        ids = built.search(q, 10)
        assert ids.shape == (50, 10) and ids.dtype == np.int64
        assert ((ids >= 0) & (ids < len(space))).all()
        truth, _ = top_k_search(space.normed, q, 10, np.zeros(0, np.int64), np.zeros(0, np.int64))
        recall = np.mean([len(np.intersect1d(a, b)) / 10 for a, b in zip(ids, truth, strict=True)])
        assert recall >= self.recall_floor
        if self.recall_floor == 1.0:
            np.testing.assert_array_equal(ids, truth)
        assert (ids[:, 0] == np.arange(50)).mean() >= self.recall_floor  # each query finds itself first

    def test_bad_k_and_bad_queries_name_the_value(self, space: Embeddings, built: Any) -> None:
        q = space.normed[:2]
        for k in (0, len(space) + 1):
            with pytest.raises(InputError, match=f"k == {k}"):
                built.search(q, k)
        with pytest.raises(InputError, match=rf"shape \[n, {space.dim}\]"):
            built.search(np.zeros((2, space.dim + 1), np.float32), 3)

    def test_attached_queries_keep_exact_scores_and_exclusions(self, space: Embeddings, built: Any) -> None:
        rows = [Row(i) for i in range(0, 300, 7)]  # rows, not keys
        exact = space.similar(rows, k=10)
        emb = Embeddings(space.vectors, space.vocab)  # same space (same fingerprint), nothing attached
        emb.attach_index(built)
        got = emb.similar(rows, k=10)
        assert emb.index is built
        assert not (got.ids == np.arange(0, 300, 7)[:, None]).any()  # the query itself is excluded
        recall = np.mean([len(np.intersect1d(a, b)) / 10 for a, b in zip(got.ids, exact.ids, strict=True)])
        assert recall >= self.recall_floor
        ref = np.einsum("nkd,nd->nk", emb.normed[got.ids], emb.normed[np.arange(0, 300, 7)])
        np.testing.assert_allclose(got.scores, ref, atol=1e-6)  # exact cosines, best first
        assert (np.diff(got.scores, axis=1) <= 1e-7).all()

    def test_another_space_is_refused(self, built: Any) -> None:
        other = clustered_space(seed=1)
        with pytest.raises(SpaceMismatchError):
            other.attach_index(built)


def planted_baskets(n_groups: int = 4, per_group: int = 8, n: int = 1500, seed: int = 0):
    """Baskets of 3-5 items drawn within one planted group; returns (baskets, labels)."""
    rng = np.random.default_rng(seed)
    labels = {f"g{g}_{i}": f"g{g}" for g in range(n_groups) for i in range(per_group)}
    baskets = []
    for _ in range(n):
        g = int(rng.integers(n_groups))
        size = int(rng.integers(3, 6))
        baskets.append({f"g{g}_{int(i)}" for i in rng.choice(per_group, size, replace=False)})
    return baskets, labels


class BackendContract:
    """What any training backend must do: the same config in, a space of the right shape out, planted
    groups found, and bit-identical vectors in deterministic mode."""

    #: keyword arguments of TrainConfig that select the backend under test
    backend: dict[str, Any] = {}
    purity_floor = 0.9

    def config(self, **kw: Any) -> TrainConfig:
        base = {"mode": "basket", "dim": 16, "epochs": 8, "min_count": 1, "seed": 3, "threads": 1}
        return TrainConfig(**(base | self.backend | kw))

    def test_space_shape_and_provenance(self, trained: Embeddings, data) -> None:
        assert trained.vectors.shape == (len(data[1]), 16) and trained.vectors.dtype == np.float32
        assert np.isfinite(trained.vectors).all()
        assert sorted(trained.keys) == sorted(data[1])
        assert trained.report.mode.value == "basket" and trained.context is not None

    def test_planted_groups_are_neighbours(self, trained: Embeddings, data) -> None:
        from likewise.evaluate import label_purity

        assert label_purity(trained, data[1], k=5) >= self.purity_floor

    def test_deterministic_runs_are_bit_identical(self, trained: Embeddings, data) -> None:
        from likewise import train

        again = train(data[0], self.config(deterministic=True))
        assert again.fingerprint == trained.fingerprint
        np.testing.assert_array_equal(again.vectors, trained.vectors)

    def test_recommend_completes_a_basket_within_its_group(self, trained: Embeddings, data) -> None:
        got = trained.recommend(["g0_0", "g0_1"], k=3)
        assert all(data[1][k] == "g0" for k in got.keys)

    def test_passes_follow_the_protocol(self) -> None:
        """The backend the factory gives, driven through the Passes protocol by the same calls as the
        epoch loop makes: the counters, the schedule, the tables, the shards and a restore."""
        from likewise import kernels
        from likewise.kernels.params import learning_rate
        from likewise.training.config import neg_group_for
        from likewise.training.passes import COUNTERS, Backend, Passes
        from likewise.training.train import Run, backend_passes

        config = self.config(deterministic=True)
        config = dataclasses.replace(config, neg_group=neg_group_for(config))
        baskets = [[0, 1, 2], [3, 4, 5], [0, 1], [3, 4], [2, 0, 1, 5]] * 30
        ids = np.array([i for b in baskets for i in b], dtype=np.int32)
        offsets = np.concatenate([[0], np.cumsum([len(b) for b in baskets])]).astype(np.int64)
        counts = np.bincount(ids).astype(np.int64)
        n_rows, n_tokens = len(counts), int(offsets[-1])
        backend = backend_passes(
            Run.of(config), config, kernels.make_keep_prob(counts, 0.0), kernels.make_neg_cum(counts, 0.75),
            n_tokens, counts,
        )  # fmt: skip
        assert isinstance(backend, Backend) and backend.threads >= 1 and isinstance(backend.layout, dict)
        W0 = (np.random.default_rng(0).random((n_rows, 16), dtype=np.float32) - 0.5) / 16
        C0 = np.zeros_like(W0)
        passes = backend.make(ids, offsets, W0.copy(), C0.copy(), 2 * n_tokens)
        assert isinstance(passes, Passes) and passes.n_steps >= 1

        lrs = [passes.lr_at(0, s) for s in range(passes.n_steps + 1)]
        assert lrs[0] == config.lr and all(a >= b for a, b in zip(lrs, lrs[1:], strict=False))
        assert lrs[-1] == learning_rate(config.lr, config.min_lr, n_tokens, 2 * n_tokens)

        class Bar:
            seen = 0

            def update(self, n: int, **postfix: Any) -> None:
                self.seen += n

        bar, steps = Bar(), []
        counted = passes.epoch(0, 0, {}, bar, lambda step, totals: steps.append((step, totals())))
        assert set(COUNTERS) <= set(counted) and counted["seen"] == n_tokens == bar.seen
        assert counted["pairs"] > 0 and np.isfinite(counted["loss"]) and counted["loss"] > 0
        assert [s for s, _ in steps] == list(range(1, passes.n_steps + 1))
        assert steps[-1][1]["seen"] == n_tokens

        W, C = passes.tables()
        assert W.shape == C.shape == (n_rows, 16) and W.dtype == C.dtype == np.float32
        assert not np.array_equal(W, W0) and np.abs(C).sum() > 0
        assert passes.evaluate(lambda W, C: W.shape) == (n_rows, 16)
        shards, dtypes = passes.shards()
        assert set(shards) == set(dtypes) == {"W", "C"} and dtypes["W"] == config.table_dtype
        np.testing.assert_array_equal(shards["W"], W)
        passes.restore(lambda name, rows: {"W": W0, "C": C0}[name][rows])
        W1, C1 = passes.tables()
        np.testing.assert_array_equal(W1, W0)
        np.testing.assert_array_equal(C1, C0)


@pytest.fixture(scope="session")
def saved_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One pristine saved folder of each kind likewise reads back (tests/_saved.py), made once.

    Keys: space, retail, index, corpus, split, and nexttoken when torch is installed. Tests that damage
    one copy it first.
    """
    import importlib.util

    import _saved

    root = tmp_path_factory.mktemp("saved")
    out = {
        "space": _saved.plain_space(root / "space"),
        "retail": _saved.retail_space(root / "retail"),
        "index": _saved.indexed_space(root / "index"),
        "corpus": _saved.corpus(root / "corpus"),
        "split": _saved.split(root / "split"),
    }
    if importlib.util.find_spec("torch") is not None:
        out["nexttoken"] = _saved.nexttoken(root / "nexttoken")
    return out
