"""Embeddings: every query against a brute-force NumPy oracle on seeded random data, planted answers,
and each error message."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from likewise import Row
from likewise.data.vocab import Vocab
from likewise.errors import InputError, ItemIndexError, SpaceMismatchError, UnknownItemError
from likewise.space.embeddings import Embeddings, Neighbours, SpaceVector, compute_fingerprint, top_k_search
from likewise.training.config import TrainConfig

V, D = 300, 16


# ---- helpers --------------------------------------------------------------------------------------------


def make_space(seed: int = 0, n: int = V, dim: int = D, keys: list[str] | None = None) -> Embeddings:
    rng = np.random.default_rng(seed)
    keys = keys if keys is not None else [f"item{i:03d}" for i in range(n)]
    vectors = rng.normal(size=(len(keys), dim)) * rng.uniform(0.5, 2.0, size=(len(keys), 1))
    return Embeddings(vectors, Vocab(keys, np.arange(len(keys), 0, -1)), config={"seed": seed})


def unit64(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n == 0, 1.0, n)


def oracle(scores: np.ndarray, k: int, exclude=(), candidates=None) -> tuple[np.ndarray, np.ndarray]:
    """Brute force: full sort of float64 scores, excluded/non-candidate items removed, ties by id."""
    scores = np.asarray(scores, dtype=np.float64).copy()
    allowed = np.zeros(len(scores), dtype=bool)
    allowed[np.arange(len(scores)) if candidates is None else list(candidates)] = True
    allowed[list(exclude)] = False
    ids = np.flatnonzero(allowed)
    order = np.lexsort((ids, -scores[ids]))[:k]
    return ids[order], scores[ids[order]]


def assert_matches(got: Neighbours, want_ids, want_scores) -> None:
    np.testing.assert_array_equal(got.ids, want_ids)
    np.testing.assert_allclose(got.scores, want_scores, atol=2e-5)
    assert got.ids.dtype == np.int64 and got.scores.dtype == np.float32


@pytest.fixture(scope="module")
def emb() -> Embeddings:
    return make_space()


@pytest.fixture(scope="module")
def camping() -> Embeddings:
    keys = ["tent", "stove", "tarp", "lantern", "map", "pegs", "kettle"]
    rng = np.random.default_rng(7)
    return Embeddings(rng.normal(size=(len(keys), 4)), Vocab(keys))


# ---- construction and properties ------------------------------------------------------------------------


def test_float64_is_converted_and_properties(emb: Embeddings) -> None:
    assert emb.vectors.dtype == np.float32 and emb.vectors.shape == (V, D)
    assert emb.dim == D and len(emb) == V
    assert emb.keys[0] == "item000" and emb.counts[0] == V
    assert "item007" in emb and "nope" not in emb and Row(7) in emb and Row(V) not in emb and 7 not in emb
    assert emb.nbytes == V * D * 4
    assert emb.config == TrainConfig(seed=0) and emb.meta == {}
    assert repr(emb) == f"Embeddings(300 items × 16 dims, fingerprint={emb.fingerprint!r})"
    with pytest.raises(ValueError):
        emb.vectors[0, 0] = 1.0  # read-only: the fingerprint and normed cache stay valid


@pytest.mark.parametrize(
    ("vectors", "match"),
    [
        (np.zeros(3), r"must be 2-D \[items, dims\], got shape \(3,\)"),
        (np.zeros((2, 4)), "vectors has 2 rows but the vocabulary has 3 keys"),
        (np.zeros((3, 0)), "dim == 0, must be >= 1"),
        (np.array([["a"] * 2] * 3), "must be real numbers"),
    ],
)
def test_bad_vectors(vectors: np.ndarray, match: str) -> None:
    with pytest.raises(InputError, match=match):
        Embeddings(vectors, Vocab(["a", "b", "c"]))


def test_non_finite_vectors_name_the_row() -> None:
    v = np.ones((3, 2))
    v[1, 0] = np.nan
    with pytest.raises(InputError, match=r"row 1 \('b'\) is not finite"):
        Embeddings(v, Vocab(["a", "b", "c"]))


def test_config_must_be_json() -> None:
    with pytest.raises(InputError, match="config must be JSON-serialisable"):
        Embeddings(np.ones((1, 2)), Vocab(["a"]), config={"x": object()})
    with pytest.raises(InputError, match="vocab must be a likewise.Vocab"):
        Embeddings(np.ones((1, 2)), ["a"])  # type: ignore[arg-type]


def test_fingerprint(emb: Embeddings) -> None:
    h = hashlib.sha256(emb.vectors.astype("<f4").tobytes() + "\n".join(emb.keys).encode())
    assert emb.fingerprint == "lw1-" + h.hexdigest()[:20]
    assert compute_fingerprint(emb.vectors, emb.keys) == emb.fingerprint
    other = make_space(seed=0, keys=[f"x{i}" for i in range(V)])  # same vectors, other keys
    assert other.fingerprint != emb.fingerprint
    given = Embeddings(emb.vectors, emb.vocab, fingerprint="lw1-given")
    assert given.fingerprint == "lw1-given"


def test_normed_unit_rows_zero_rows_stay_zero() -> None:
    v = np.array([[3.0, 4.0], [0.0, 0.0], [1e-20, 0.0]])
    e = Embeddings(v, Vocab(["a", "b", "c"]))
    n = e.normed
    assert n.dtype == np.float32 and np.isfinite(n).all()
    np.testing.assert_allclose(n, [[0.6, 0.8], [0, 0], [1, 0]], atol=1e-6)
    assert e.normed is n
    # a query about the zero vector scores 0 against everything: ties by id, no NaN
    res = e.similar("b", k=2)
    assert res.keys == ["a", "c"] and np.all(res.scores == 0)


# ---- items and their errors -----------------------------------------------------------------------------


def test_vector_by_key_and_id(emb: Embeddings) -> None:
    v = emb.vector("item005")
    assert isinstance(v, SpaceVector) and v.fingerprint == emb.fingerprint and v.shape == (D,)
    np.testing.assert_array_equal(v, emb.vectors[5])
    np.testing.assert_array_equal(emb.vector(Row(np.int64(5))), v)
    np.testing.assert_allclose(np.linalg.norm(emb.vector(Row(5), norm=True)), 1.0, rtol=1e-6)
    v[0] = 1e6  # a copy: the space is untouched
    assert emb.vectors[5, 0] != 1e6
    batch = emb.vectors_of(["item001", Row(2)])
    assert isinstance(batch, SpaceVector) and batch.shape == (2, D)
    np.testing.assert_array_equal(batch, emb.vectors[[1, 2]])


def test_unknown_key_suggests(camping: Embeddings) -> None:
    with pytest.raises(UnknownItemError, match="did you mean 'tent'") as info:
        camping.vector("tnet")
    assert isinstance(info.value, KeyError) and info.value.key == "tnet"
    with pytest.raises(UnknownItemError, match="did you mean 'tent'"):
        camping.similar("tnet")


def test_id_past_the_end(camping: Embeddings) -> None:
    with pytest.raises(ItemIndexError, match="item row 7 is out of range for a table of 7 rows"):
        camping.vector(Row(7))
    with pytest.raises(ItemIndexError, match="item row -1 is out of range for a table of 7 rows"):
        camping.similar([Row(0), Row(-1)])
    with pytest.raises(IndexError):
        camping.recommend([Row(99)])


def test_bad_item_types(camping: Embeddings) -> None:
    with pytest.raises(InputError, match="use vectors_of"):
        camping.vector(["tent"])  # type: ignore[arg-type]
    with pytest.raises(
        InputError,
        match=r"an item is a str key, an int \(the key written the same way\) or likewise.Row.*got float",
    ):
        camping.similar([1.5])  # type: ignore[list-item]
    with pytest.raises(InputError, match="on_unknown == 'drop'"):
        camping.similar(["tent"], on_unknown="drop")  # type: ignore[arg-type]


# ---- SpaceVector ----------------------------------------------------------------------------------------


def test_space_vector_arithmetic() -> None:
    a, b = make_space(seed=1, n=10, dim=4), make_space(seed=2, n=10, dim=4)
    x, y = a.vector(Row(0)), a.vector(Row(1))
    z = x - y + 2 * a.vector(Row(2)) + np.ones(4)
    assert isinstance(z, SpaceVector) and z.fingerprint == a.fingerprint
    plain = np.asarray(z)
    assert type(plain) is np.ndarray
    assert not isinstance(float(x @ y), SpaceVector)
    with pytest.raises(SpaceMismatchError) as info:
        _ = x + b.vector(Row(0))
    assert a.fingerprint in str(info.value) and b.fingerprint in str(info.value)
    with pytest.raises(SpaceMismatchError):
        _ = x @ b.vector(Row(0))
    with pytest.raises(SpaceMismatchError):
        np.dot(x, b.vector(Row(0)))
    with pytest.raises(SpaceMismatchError):
        np.concatenate([x, b.vector(Row(0))])
    with pytest.raises(SpaceMismatchError):
        x.dot(b.vector(Row(0)))  # the ndarray method bypasses __array_ufunc__ / __array_function__
    assert float(x.dot(y)) == pytest.approx(float(np.dot(np.asarray(x), np.asarray(y))))
    out = a.vector(Row(3))
    np.add(x, y, out=out)
    assert out.fingerprint == a.fingerprint
    np.testing.assert_allclose(out, a.vectors[0] + a.vectors[1])


def test_check_same_space() -> None:
    a, b = make_space(seed=1, n=10, dim=4), make_space(seed=2, n=10, dim=4)
    a.check_same_space(Embeddings(a.vectors, a.vocab))
    with pytest.raises(SpaceMismatchError, match="Embeddings comes from space"):
        a.check_same_space(b)


# ---- similar --------------------------------------------------------------------------------------------


def test_similar_single_matches_brute_force(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    res = emb.similar("item042", k=10)
    assert_matches(res, *oracle(n @ n[42], 10, exclude=[42]))
    assert len(res) == 10 and res.keys == [emb.keys[i] for i in res.ids]
    assert res.queries is None and not res.batched
    assert [k for k, _ in res.pairs()] == res.keys
    with pytest.raises(TypeError, match="not a tuple"):
        ids, scores = res  # implicit's habit: refused, not two silent pairs


def test_similar_batch_matches_brute_force(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    queries = [Row(3), "item100", Row(299), Row(0)]
    res = emb.similar(queries, k=7)
    assert res.ids.shape == (4, 7) and res.scores.shape == (4, 7) and res.batched
    np.testing.assert_array_equal(res.queries, np.arange(4))
    for row, q in enumerate([3, 100, 299, 0]):
        want_ids, want_scores = oracle(n @ n[q], 7, exclude=[q])
        np.testing.assert_array_equal(res.ids[row], want_ids)
        np.testing.assert_allclose(res.scores[row], want_scores, atol=2e-5)
        assert res[row].keys == res.keys[row]
    assert len(res) == 4 and [len(r) for r in res.rows()] == [7] * 4


def test_similar_restrict_int(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    res = emb.similar("item250", k=5, restrict=50)
    assert_matches(res, *oracle(n @ n[250], 5, candidates=range(50)))
    res = emb.similar(["item010", "item250"], k=5, restrict=50)
    np.testing.assert_array_equal(res.ids[0], oracle(n @ n[10], 5, exclude=[10], candidates=range(50))[0])
    np.testing.assert_array_equal(res.ids[1], oracle(n @ n[250], 5, candidates=range(50))[0])


def test_similar_restrict_set(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    cand = [5, 77, 120, 121, 200, 260, 299, 17]
    keys = {emb.keys[i] for i in cand}
    res = emb.similar("item120", k=4, restrict=keys)
    assert_matches(res, *oracle(n @ n[120], 4, exclude=[120], candidates=cand))
    assert set(res.ids) <= set(cand)


@pytest.mark.parametrize("restrict", [0, V + 1, -3])
def test_restrict_out_of_range(emb: Embeddings, restrict: int) -> None:
    with pytest.raises(
        InputError, match=f"restrict == {restrict}, must be between 1 and the vocabulary size 300"
    ):
        emb.similar(Row(0), restrict=restrict)


def test_restrict_bad_values(camping: Embeddings) -> None:
    with pytest.raises(UnknownItemError, match="did you mean 'tent'"):
        camping.similar("map", restrict=["tnet", "stove"])
    with pytest.raises(InputError, match="got str 'tent'"):
        camping.similar("map", restrict="tent")
    with pytest.raises(InputError, match="empty collection"):
        camping.similar("map", restrict=set())


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3"])
def test_bad_k(camping: Embeddings, k: object) -> None:
    with pytest.raises(InputError, match=f"k == {k!r}, must be an int >= 1"):
        camping.similar("tent", k=k)  # type: ignore[arg-type]


def test_k_is_clamped(camping: Embeddings) -> None:
    assert len(camping.similar("tent", k=100)) == 6  # 7 items minus the query
    res = camping.similar(["tent", "map"], k=100, restrict=["tent", "map", "stove"])
    assert res.ids.shape == (2, 2)  # each query has 2 candidates left
    assert len(camping.similar("tent", k=3, restrict=["tent"])) == 0


def test_ties_broken_by_id() -> None:
    rng = np.random.default_rng(3)
    v = rng.normal(size=(40, 6))
    v[10:30] = v[0] * 2.0  # items 10..29 are exactly parallel to item 0
    e = Embeddings(v, Vocab([f"i{i}" for i in range(40)]))
    res = e.similar(Row(0), k=5)
    np.testing.assert_array_equal(res.ids, [10, 11, 12, 13, 14])
    np.testing.assert_allclose(res.scores, 1.0, rtol=1e-6)
    res = e.similar(Row(25), k=3)
    np.testing.assert_array_equal(res.ids, [0, 10, 11])


def test_on_unknown_skip_in_batch(camping: Embeddings) -> None:
    res = camping.similar(["tent", "nope", "map"], k=2, on_unknown="skip")
    assert res.ids.shape == (2, 2)
    np.testing.assert_array_equal(res.queries, [0, 2])
    assert res.keys == [camping.similar("tent", k=2).keys, camping.similar("map", k=2).keys]
    with pytest.raises(UnknownItemError):
        camping.similar("nope", on_unknown="skip")  # a single unknown query has nothing to answer
    with pytest.raises(ItemIndexError):
        camping.similar(["tent", Row(70)], on_unknown="skip")  # skip is for unknown keys, not bad rows


def test_kernel_blocks_match_brute_force(emb: Embeddings) -> None:
    n = emb.normed
    queries = unit64(np.random.default_rng(9).normal(size=(23, D))).astype(np.float32)
    ex_rows, ex_cols = np.array([0, 0, 5, 22]), np.array([1, 2, 3, 4])
    rows, scores = top_k_search(n, queries, 6, ex_rows, ex_cols, block_elems=V * 4)  # 4 queries per block
    for r in range(23):
        want_ids, want_scores = oracle(unit64(n) @ queries[r], 6, exclude=ex_cols[ex_rows == r])
        np.testing.assert_array_equal(rows[r], want_ids)
        np.testing.assert_allclose(scores[r], want_scores, atol=2e-5)


# ---- similar_to_vector ----------------------------------------------------------------------------------


def test_similar_to_vector(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    q = np.random.default_rng(4).normal(size=(3, D))
    res = emb.similar_to_vector(q[0], k=8)
    assert_matches(res, *oracle(n @ unit64(q[0]), 8))
    res = emb.similar_to_vector(q, k=8, exclude=["item001", Row(2)])
    assert res.ids.shape == (3, 8)
    for r in range(3):
        np.testing.assert_array_equal(res.ids[r], oracle(n @ unit64(q[r]), 8, exclude=[1, 2])[0])
    # an item's own vector finds itself first (nothing excluded by default)
    assert emb.similar_to_vector(emb.vector("item009"), k=1).keys == ["item009"]
    assert emb.similar_to_vector(emb.vector(Row(9)), k=1, exclude="item009").keys != ["item009"]


def test_similar_to_vector_errors(emb: Embeddings) -> None:
    with pytest.raises(InputError, match="query vector has length 5, expected 16"):
        emb.similar_to_vector(np.ones(5))
    with pytest.raises(InputError, match="query vector has length 3, expected 16"):
        emb.similar_to_vector(np.ones((2, 3)))
    with pytest.raises(InputError, match="NaN or infinite"):
        emb.similar_to_vector(np.full(D, np.nan))
    other = make_space(seed=5)
    with pytest.raises(SpaceMismatchError) as info:
        emb.similar_to_vector(other.vector(Row(0)))
    assert other.fingerprint in str(info.value) and emb.fingerprint in str(info.value)


# ---- recommend ------------------------------------------------------------------------------------------


def test_recommend_matches_brute_force(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    basket = ["item004", "item019", Row(250)]
    res = emb.recommend(basket, k=10)
    q = n[[4, 19, 250]].sum(axis=0)
    assert_matches(res, *oracle(n @ unit64(q), 10, exclude=[4, 19, 250]))

    baskets = [["item004", "item019"], [Row(7)], [Row(1), Row(2), Row(3), Row(4)]]
    res = emb.recommend(baskets, k=5, restrict=100)
    assert res.ids.shape == (3, 5)
    for row, b in enumerate([[4, 19], [7], [1, 2, 3, 4]]):
        want = oracle(n @ unit64(n[b].sum(axis=0)), 5, exclude=b, candidates=range(100))
        np.testing.assert_array_equal(res.ids[row], want[0])
        np.testing.assert_allclose(res.scores[row], want[1], atol=2e-5)


def test_recommend_unknown(camping: Embeddings) -> None:
    with pytest.raises(UnknownItemError, match="did you mean 'tent'"):
        camping.recommend(["tnet", "stove"])
    skipped = camping.recommend(["tnet", "stove"], on_unknown="skip")
    assert skipped.keys == camping.recommend(["stove"]).keys
    with pytest.raises(InputError, match="basket has no known item"):
        camping.recommend(["tnet", "zzz"], on_unknown="skip")
    with pytest.raises(InputError, match="basket 1 has no known item"):
        camping.recommend([["stove"], ["zzz"]], on_unknown="skip")
    with pytest.raises(InputError, match="wrap a single item in a list"):
        camping.recommend("tent")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="basket is empty"):
        camping.recommend([])
    with pytest.raises(InputError, match="mixes items and lists"):
        camping.recommend(["tent", ["map"]])  # type: ignore[list-item]


# ---- analogy --------------------------------------------------------------------------------------------


def test_analogy_add_matches_brute_force(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    res = emb.analogy("item001", "item002", "item003", k=10)
    q = n[2] - n[1] + n[3]
    assert_matches(res, *oracle(n @ unit64(q), 10, exclude=[1, 2, 3]))


def test_analogy_mul_matches_brute_force_and_formula(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    a, b, c = 11, 22, 33
    res = emb.analogy(Row(a), Row(b), Row(c), k=10, method="mul")
    pos = lambda i: (1 + n @ n[i]) / 2  # noqa: E731
    want_scores = pos(b) * pos(c) / (pos(a) + 1e-6)
    assert_matches(res, *oracle(want_scores, 10, exclude=[a, b, c]))
    # the direct formula for the winner, item by item
    x = int(res.ids[0])
    cos = lambda i, j: float(n[i] @ n[j])  # noqa: E731
    direct = ((1 + cos(x, b)) / 2) * ((1 + cos(x, c)) / 2) / ((1 + cos(x, a)) / 2 + 1e-6)
    assert res.scores[0] == pytest.approx(direct, rel=1e-5)


def test_analogy_batch_and_restrict(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    a, b, c = [1, 5, 9], [2, 6, 10], [3, 7, 11]
    for method in ("add", "mul"):
        rows = lambda xs: [Row(i) for i in xs]  # noqa: E731
        res = emb.analogy(rows(a), [emb.keys[i] for i in b], rows(c), k=4, method=method, restrict=150)
        assert res.ids.shape == (3, 4)
        for r in range(3):
            single = emb.analogy(Row(a[r]), Row(b[r]), Row(c[r]), k=4, method=method, restrict=150)
            np.testing.assert_array_equal(res.ids[r], single.ids)
            np.testing.assert_allclose(res.scores[r], single.scores, rtol=1e-6)
    res = emb.analogy(Row(1), Row(2), Row(3), k=3, restrict={"item010", "item020", "item030", "item002"})
    want = oracle(n @ unit64(n[2] - n[1] + n[3]), 3, exclude=[1, 2, 3], candidates=[10, 20, 30, 2])
    assert_matches(res, *want)


def test_analogy_planted() -> None:
    # a, b, c, d on the unit sphere with b - a + c == d exactly (a rectangle); other items random.
    a, b = np.array([0.6, 0.8, 0.0]), np.array([-0.6, 0.8, 0.0])
    c, d = np.array([0.6, 0.0, 0.8]), np.array([-0.6, 0.0, 0.8])
    assert np.array_equal(b - a + c, d)
    rng = np.random.default_rng(11)
    noise = rng.normal(size=(30, 3)) + np.array([3.0, -3.0, -3.0])  # far from d
    keys = ["man", "king", "woman", "queen"] + [f"n{i}" for i in range(30)]
    pad = np.zeros((34, 5))
    e = Embeddings(np.hstack([np.vstack([a, b, c, d, noise]), pad]), Vocab(keys))
    res = e.analogy("man", "king", "woman", k=3)
    assert res.keys[0] == "queen"
    assert res.scores[0] == pytest.approx(1.0, abs=1e-6)
    assert e.analogy("man", "king", "woman", k=1, method="mul").keys == ["queen"]
    # scaling the inputs does not matter: the queries use unit vectors
    e2 = Embeddings(e.vectors * np.arange(1, 35)[:, None], e.vocab)
    assert e2.analogy("man", "king", "woman", k=1).keys == ["queen"]


def test_analogy_errors(camping: Embeddings) -> None:
    with pytest.raises(InputError, match="method == 'sub'"):
        camping.analogy("tent", "tarp", "stove", method="sub")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="equal lengths, got 2, 1, 1"):
        camping.analogy(["tent", "map"], ["tarp"], ["stove"])
    with pytest.raises(InputError, match="all be single items or all be sequences"):
        camping.analogy("tent", ["tarp"], "stove")  # type: ignore[arg-type]


# ---- doesnt_match, similarity ---------------------------------------------------------------------------


def test_doesnt_match_matches_brute_force(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    ids = [3, 40, 41, 100, 222]
    mean = unit64(n[ids].mean(axis=0))
    want = emb.keys[ids[int(np.argmin(n[ids] @ mean))]]
    assert emb.doesnt_match([emb.keys[i] for i in ids]) == want


def test_doesnt_match_planted() -> None:
    v = np.array([[1.0, 0.1, 0], [1.0, -0.1, 0], [0.9, 0, 0.1], [0, 0, 1.0]])
    e = Embeddings(v, Vocab(["apple", "pear", "plum", "hammer"]))
    assert e.doesnt_match(["apple", "hammer", "pear", "plum"]) == "hammer"
    assert e.doesnt_match(["apple", "hammer", "zzz"], on_unknown="skip") in {"apple", "hammer"}
    with pytest.raises(InputError, match="at least two known items, got 1"):
        e.doesnt_match(["apple", "zzz"], on_unknown="skip")


def test_similarity(emb: Embeddings) -> None:
    n = unit64(emb.vectors)
    assert emb.similarity("item001", Row(2)) == pytest.approx(float(n[1] @ n[2]), abs=1e-6)
    assert isinstance(emb.similarity(Row(1), Row(2)), float)
    got = emb.similarity([Row(1), Row(3)], ["item002", Row(4)])
    np.testing.assert_allclose(got, [n[1] @ n[2], n[3] @ n[4]], atol=1e-6)


# ---- Neighbours -----------------------------------------------------------------------------------------


def test_neighbours_records(camping: Embeddings) -> None:
    res = camping.similar("tent", k=2)
    recs = res.to_records()
    assert [r["rank"] for r in recs] == [1, 2]
    first = {
        "rank": 1,
        "item": res.keys[0],
        "id": int(res.ids[0]),
        "score": float(res.scores[0]),
        "name": None,
        "count": int(camping.counts[res.ids[0]]),
    }
    assert recs[0] == first
    assert res[1] == (res.keys[1], float(res.scores[1]))
    batch = camping.similar(["tent", "zzz", "map"], k=2, on_unknown="skip").to_records()
    assert [r["query"] for r in batch] == [0, 0, 2, 2]
    assert all(isinstance(r["score"], float) and isinstance(r["id"], int) for r in batch)


def test_space_vector_survives_pickle_and_slicing() -> None:
    import pickle

    e = make_space(seed=1, n=10, dim=4)
    v = e.vector(Row(0))
    assert pickle.loads(pickle.dumps(v)).fingerprint == e.fingerprint
    assert v[:2].fingerprint == e.fingerprint
    assert e.vectors_of([Row(0), Row(1)])[1].fingerprint == e.fingerprint
