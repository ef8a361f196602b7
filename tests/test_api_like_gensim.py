"""The gensim-like surface of Embeddings: ``emb[key]``, ``in``/``len``/``iter``, ``most_similar`` checked
against gensim's own ``KeyedVectors.most_similar`` on the same vectors, and the Arrow / pandas exports."""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pytest

from likewise import Row
from likewise.data.vocab import Vocab
from likewise.errors import (
    InputError,
    ItemIndexError,
    LikewiseError,
    MissingDependencyError,
    SpaceMismatchError,
    UnknownItemError,
)
from likewise.space.embeddings import Embeddings, SpaceVector

V, D = 200, 12


def make_space(seed: int = 0) -> Embeddings:
    rng = np.random.default_rng(seed)
    keys = [f"w{i:03d}" for i in range(V)]
    vectors = rng.normal(size=(V, D)) * rng.uniform(0.5, 2.0, size=(V, 1))  # unequal norms on purpose
    return Embeddings(vectors, Vocab(keys, np.arange(V, 0, -1) * 3), config={"seed": seed})


@pytest.fixture(scope="module")
def emb() -> Embeddings:
    return make_space()


@pytest.fixture(scope="module")
def kv(emb: Embeddings):
    gensim_kv = pytest.importorskip("gensim.models.keyedvectors")
    kv = gensim_kv.KeyedVectors(D)
    kv.add_vectors(emb.keys, np.asarray(emb.vectors))  # the same float32 rows, in id order
    return kv


# ---- emb[key], in, len, iter ------------------------------------------------------------------------------


def test_getitem_is_vector(emb: Embeddings) -> None:
    v = emb["w007"]
    assert isinstance(v, SpaceVector) and v.shape == (emb.dim,) and v.dtype == np.float32
    assert v.fingerprint == emb.fingerprint
    np.testing.assert_array_equal(v, emb.vector("w007"))
    np.testing.assert_array_equal(emb[Row(7)], v)
    np.testing.assert_array_equal(emb[Row(np.int64(7))], v)


def test_getitem_batch_is_vectors_of(emb: Embeddings) -> None:
    got = emb[["w003", Row(5), Row(np.int32(9))]]
    assert isinstance(got, SpaceVector) and got.shape == (3, emb.dim)
    np.testing.assert_array_equal(got, emb.vectors_of(["w003", Row(5), Row(9)]))
    np.testing.assert_array_equal(emb[[Row(1), Row(2)]], np.asarray(emb.vectors)[[1, 2]])


def test_getitem_errors_match_vector(emb: Embeddings) -> None:
    with pytest.raises(UnknownItemError) as a:
        emb["w00x"]
    with pytest.raises(UnknownItemError) as b:
        emb.vector("w00x")
    assert str(a.value) == str(b.value) and isinstance(a.value, KeyError)
    with pytest.raises(ItemIndexError, match="out of range"):
        emb[Row(V)]
    with pytest.raises(UnknownItemError, match=r"Row\(7\)"):
        emb[7]  # an int is the key "7" (this space has none); a row is Row(7)
    with pytest.raises(UnknownItemError):
        emb[["w001", "nope"]]
    for bad in (slice(0, 3), 1.5, True, None):
        with pytest.raises(InputError, match=r"emb\[\.\.\.\] takes"):
            emb[bad]


def test_contains_len_iter_are_one_mapping(emb: Embeddings) -> None:
    assert len(emb) == V
    assert "w000" in emb and "nope" not in emb
    assert Row(0) in emb and Row(V - 1) in emb and Row(V) not in emb and Row(-1) not in emb
    assert 0 not in emb  # an int is the key "0", which this space lacks
    assert 1.0 not in emb and None not in emb and True not in emb
    assert list(emb) == emb.keys  # iterating yields keys, as a dict does
    for key in list(emb)[:5]:
        np.testing.assert_array_equal(emb[key], emb.vector(key))


# ---- most_similar against gensim --------------------------------------------------------------------------


CASES = [
    pytest.param({"positive": "w010"}, id="single-str"),
    pytest.param({"positive": ["w010"]}, id="one-positive"),
    pytest.param({"positive": ["w010", "w020"]}, id="two-positive"),
    pytest.param({"positive": ["w010", "w020"], "negative": ["w030"]}, id="analogy"),
    pytest.param({"positive": ["w001", "w002", "w003"], "negative": ["w004", "w005"]}, id="three-minus-two"),
    pytest.param({"negative": ["w042"]}, id="negative-only"),
    pytest.param({"positive": [15, "w016"], "negative": 17}, id="int-ids"),
    pytest.param({"positive": [("w010", 2.0), "w011"], "negative": [("w012", 0.5)]}, id="weighted"),
    pytest.param({"positive": ["w010"], "topn": 1}, id="topn-1"),
    pytest.param({"positive": ["w010", "w050"], "negative": ["w060"], "topn": 40}, id="topn-40"),
]


def _ours(kwargs: dict) -> dict:
    """gensim's int indexes as likewise asks for rows (``Row(i)``; a bare int is the key written so)."""

    def row(x):
        if isinstance(x, list):
            return [row(v) for v in x]
        return Row(x) if isinstance(x, int) and not isinstance(x, bool) else x

    return {k: row(v) if k in ("positive", "negative") else v for k, v in kwargs.items()}


def _gensim_kwargs(kwargs: dict) -> dict:
    out = dict(kwargs)
    if "restrict" in out:
        out["restrict_vocab"] = out.pop("restrict")
    return out


@pytest.mark.parametrize("kwargs", CASES)
@pytest.mark.parametrize("restrict", [None, 60])
def test_most_similar_matches_gensim(emb: Embeddings, kv, kwargs: dict, restrict: int | None) -> None:
    if restrict is not None:
        kwargs = {**kwargs, "restrict": restrict}
    got = emb.most_similar(**_ours(kwargs))
    want = kv.most_similar(**_gensim_kwargs(kwargs))
    assert isinstance(got, list) and all(isinstance(k, str) and type(s) is float for k, s in got)
    assert [k for k, _ in got] == [k for k, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


def test_most_similar_raw_vector_term_matches_gensim(emb: Embeddings, kv) -> None:
    v = np.asarray(emb.vectors[3] * 2.5 + emb.vectors[8])
    for kwargs in ({"positive": v}, {"positive": [v, "w020"], "negative": ["w021"]}):
        got = emb.most_similar(**kwargs)
        want = kv.most_similar(**kwargs)
        assert [k for k, _ in got] == [k for k, _ in want]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


def test_most_similar_agrees_with_similar_and_analogy(emb: Embeddings) -> None:
    one = emb.similar("w010", k=10)
    assert emb.most_similar("w010") == one.pairs()
    add = emb.analogy("w030", "w010", "w020", k=10)  # w030 : w010 :: w020 : ?
    got = emb.most_similar(positive=["w010", "w020"], negative=["w030"])
    assert [k for k, _ in got] == add.keys
    np.testing.assert_allclose([s for _, s in got], add.scores, atol=1e-6)


def test_most_similar_excludes_queries_and_restricts(emb: Embeddings) -> None:
    got = emb.most_similar(positive=["w001", "w002"], negative=["w003"], topn=V)
    keys = [k for k, _ in got]
    assert len(keys) == V - 3 and not {"w001", "w002", "w003"} & set(keys)
    assert all(a >= b for (_, a), (_, b) in zip(got, got[1:], strict=False))
    few = emb.most_similar("w001", restrict=["w005", "w006", "w001"], topn=10)
    assert sorted(k for k, _ in few) == ["w005", "w006"]  # clamped: the query itself is excluded


def test_most_similar_errors(emb: Embeddings) -> None:
    with pytest.raises(InputError, match="at least one positive or negative"):
        emb.most_similar()
    with pytest.raises(InputError, match="at least one positive or negative"):
        emb.most_similar(positive=[], negative=[])
    with pytest.raises(UnknownItemError, match="unknown item 'w99'"):
        emb.most_similar(positive=["w001"], negative=["w99"])
    assert emb.most_similar("w001", topn=0) == []  # gensim's answer to topn < 1
    with pytest.raises(InputError, match=r"\(key, weight\) pair"):
        emb.most_similar(positive=[("w001", "heavy")])
    with pytest.raises(InputError, match="most_similar term"):
        emb.most_similar(positive=[1.5])
    with pytest.raises(InputError, match="positive must be"):
        emb.most_similar(positive={"w001": 1})
    with pytest.raises(InputError, match="expected 12"):
        emb.most_similar(positive=np.ones(5))
    other = make_space(seed=1)
    with pytest.raises(SpaceMismatchError):
        emb.most_similar(positive=[other["w001"]])


# ---- Arrow and pandas -------------------------------------------------------------------------------------


def test_to_arrow(emb: Embeddings) -> None:
    t = emb.to_arrow()
    assert isinstance(t, pa.Table) and t.num_rows == V
    assert t.column_names == ["key", "id", "count", "vector"]
    assert t.schema.field("key").type == pa.string()
    assert t.schema.field("id").type == pa.int64() and t.schema.field("count").type == pa.int64()
    assert t.schema.field("vector").type == pa.list_(pa.float32(), D)
    assert t.column("key").to_pylist() == emb.keys
    assert t.column("id").to_pylist() == list(range(V))
    np.testing.assert_array_equal(t.column("count").to_numpy(), emb.counts)
    flat = t.column("vector").combine_chunks().flatten().to_numpy()
    np.testing.assert_array_equal(flat.reshape(V, D), emb.vectors)
    assert t.schema.metadata[b"likewise.fingerprint"] == emb.fingerprint.encode()
    assert t.schema.metadata[b"likewise.what"] == b"item"
    normed = emb.to_arrow(norm=True).column("vector").combine_chunks().flatten().to_numpy()
    np.testing.assert_allclose(np.linalg.norm(normed.reshape(V, D), axis=1), 1.0, atol=1e-6)


def test_to_pandas(emb: Embeddings) -> None:
    pytest.importorskip("pandas")
    df = emb.to_pandas()
    assert list(df.columns) == ["key", "id", "count", "vector"] and len(df) == V
    assert df["key"].tolist() == emb.keys
    assert df["id"].dtype == np.int64 and df["count"].dtype == np.int64
    np.testing.assert_array_equal(df["count"].to_numpy(), emb.counts)
    cell = df["vector"].iloc[7]
    assert isinstance(cell, np.ndarray) and cell.dtype == np.float32 and cell.shape == (D,)
    np.testing.assert_array_equal(np.stack(df["vector"].to_numpy()), emb.vectors)
    cell[0] = 99.0  # the cells are a copy: the space is untouched
    assert emb.vectors[7, 0] != 99.0
    assert df.attrs["fingerprint"] == emb.fingerprint
    normed = np.stack(emb.to_pandas(norm=True)["vector"].to_numpy())
    np.testing.assert_allclose(normed, emb.normed)


def test_to_pandas_without_pandas_says_how_to_install(emb: Embeddings, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` raise ImportError
    with pytest.raises(MissingDependencyError, match="pip install pandas") as e:
        emb.to_pandas()
    assert isinstance(e.value, ImportError) and isinstance(e.value, LikewiseError)
    assert str(e.value) == "pandas is needed for Embeddings.to_pandas(): pip install pandas"
