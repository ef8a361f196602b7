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

from typing import Any

import numpy as np
import pytest

from likewise import Embeddings, TrainConfig, Vocab
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
        exact = space.similar(list(range(0, 300, 7)), k=10)
        emb = Embeddings(space.vectors, space.vocab)  # same space (same fingerprint), nothing attached
        emb.attach_index(built)
        got = emb.similar(list(range(0, 300, 7)), k=10)
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
        assert trained.config["mode"] == "basket" and trained.context is not None

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
