"""gensim's KeyedVectors names on Embeddings, each answer checked against gensim's own ``KeyedVectors`` on
the same vectors; ``save_word2vec_format`` byte for byte; gensim's ``Word2Vec`` argument names given to
``train`` answered with a one-line hint naming likewise's."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from likewise import Row, train
from likewise.data.formats import write_word2vec
from likewise.data.vocab import Vocab
from likewise.errors import InputError, SpaceMismatchError, UnknownItemError
from likewise.space.embeddings import Embeddings, SpaceVector

V, D = 200, 12


def make_space(seed: int = 0) -> Embeddings:
    rng = np.random.default_rng(seed)
    keys = [f"w{i:03d}" for i in range(V)]
    vectors = rng.normal(size=(V, D)) * rng.uniform(0.5, 2.0, size=(V, 1))  # unequal norms on purpose
    return Embeddings(vectors, Vocab(keys, np.arange(V, 0, -1) * 3))


@pytest.fixture(scope="module")
def emb() -> Embeddings:
    return make_space()


@pytest.fixture(scope="module")
def kv(emb: Embeddings):
    keyedvectors = pytest.importorskip("gensim.models.keyedvectors")
    kv = keyedvectors.KeyedVectors(D)
    kv.add_vectors(emb.keys, np.asarray(emb.vectors))  # the same float32 rows, in id order
    for key, count in zip(emb.keys, emb.counts.tolist(), strict=True):
        kv.set_vecattr(key, "count", int(count))
    kv.fill_norms()
    return kv


def ours(x):
    """gensim's int index as likewise asks for a row: ``Row(i)`` (a bare int is the key written so)."""
    if isinstance(x, list):
        return [ours(v) for v in x]
    return Row(x) if isinstance(x, int | np.integer) else x


def test_an_int_is_a_key_not_gensims_index(emb: Embeddings, kv) -> None:
    np.testing.assert_array_equal(emb.get_vector(Row(42)), kv.get_vector(42))  # gensim's index, said so
    with pytest.raises(UnknownItemError, match=r"the int 42 is read as the key '42'.*Row\(42\)"):
        emb.get_vector(42)  # gensim would answer row 42: likewise reads what was written


def assert_same_list(got: list, want: list) -> None:
    """Two gensim answers (lists of (key, score)): the same keys in the same order, scores to 1e-5."""
    assert isinstance(got, list) and all(isinstance(k, str) and type(s) is float for k, s in got)
    assert [k for k, _ in got] == [k for k, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


# ---- the table --------------------------------------------------------------------------------------------


def test_key_to_index_and_index_to_key(emb: Embeddings, kv) -> None:
    assert emb.key_to_index == kv.key_to_index
    assert dict(emb.key_to_index) == kv.key_to_index
    assert emb.key_to_index["w007"] == 7 and "w007" in emb.key_to_index and len(emb.key_to_index) == V
    assert emb.index_to_key == kv.index_to_key and emb.index_to_key is emb.keys
    with pytest.raises(TypeError):  # a read-only view: the vocabulary is shared
        emb.key_to_index["new"] = 0  # type: ignore[index]


def test_vectors_vector_size_and_norms(emb: Embeddings, kv) -> None:
    np.testing.assert_array_equal(emb.vectors, kv.vectors)
    assert emb.vector_size == kv.vector_size == D
    norms = emb.norms
    assert norms.dtype == np.float32 and norms.shape == (V,) and not norms.flags.writeable
    np.testing.assert_allclose(norms, kv.norms, rtol=1e-6)
    assert emb.norms is norms  # kept
    np.testing.assert_allclose(emb.get_normed_vectors(), kv.get_normed_vectors(), atol=1e-6)


@pytest.mark.parametrize("key", ["w000", "w042", 42, np.int64(199)])
@pytest.mark.parametrize("norm", [False, True])
def test_get_vector(emb: Embeddings, kv, key, norm: bool) -> None:
    got = emb.get_vector(ours(key), norm=norm)
    assert isinstance(got, SpaceVector) and got.shape == (D,) and got.dtype == np.float32
    np.testing.assert_allclose(got, kv.get_vector(key, norm=norm), rtol=1e-6, atol=1e-7)
    mine = ours(key)
    np.testing.assert_allclose(emb.get_vector(mine, True) @ emb.get_vector(mine, True), 1.0, atol=1e-6)


# ---- neighbours -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("word", ["w010", "w150", 33])
@pytest.mark.parametrize("topn", [1, 10, 40])
@pytest.mark.parametrize("restrict_vocab", [None, 60])
def test_similar_by_word_and_key(emb: Embeddings, kv, word, topn: int, restrict_vocab) -> None:
    want = kv.similar_by_word(word, topn=topn, restrict_vocab=restrict_vocab)
    assert_same_list(emb.similar_by_word(ours(word), topn=topn, restrict_vocab=restrict_vocab), want)
    assert_same_list(
        emb.similar_by_key(ours(word), topn, restrict_vocab), kv.similar_by_key(word, topn, restrict_vocab)
    )


@pytest.mark.parametrize("restrict_vocab", [None, 60])
def test_similar_by_vector(emb: Embeddings, kv, restrict_vocab) -> None:
    rng = np.random.default_rng(5)
    for v in (rng.normal(size=D), np.asarray(emb.vectors[3] * 2.5 + emb.vectors[8]), emb["w004"]):
        got = emb.similar_by_vector(v, topn=15, restrict_vocab=restrict_vocab)
        assert_same_list(got, kv.similar_by_vector(np.asarray(v), topn=15, restrict_vocab=restrict_vocab))
    assert emb.similar_by_vector(emb["w004"])[0][0] == "w004"  # a vector excludes nothing
    assert_same_list(emb.similar_by_vector(list(emb.vectors[9])), kv.similar_by_vector(emb.vectors[9]))


COSMUL = [
    pytest.param({"positive": ["w010", "w020"], "negative": ["w030"]}, id="analogy"),
    pytest.param({"positive": "w010"}, id="one-str"),
    pytest.param({"positive": ["w010", "w020"]}, id="two-positive"),
    pytest.param({"positive": ["w001", "w002", "w003"], "negative": ["w004", "w005"]}, id="three-over-two"),
    pytest.param({"positive": ["w010", "w050"], "negative": "w060", "topn": 40}, id="topn-40"),
    pytest.param({"positive": ["w010"], "topn": 1}, id="topn-1"),
]


@pytest.mark.parametrize("kwargs", COSMUL)
def test_most_similar_cosmul_matches_gensim(emb: Embeddings, kv, kwargs: dict) -> None:
    assert_same_list(emb.most_similar_cosmul(**kwargs), kv.most_similar_cosmul(**kwargs))


def test_most_similar_cosmul_with_a_raw_vector_matches_gensim(emb: Embeddings, kv) -> None:
    v = np.asarray(emb.vectors[3] * 0.3, dtype=np.float32)  # used as given, as gensim does: not normalised
    kwargs = {"positive": [v, "w020"], "negative": ["w021"]}
    assert_same_list(emb.most_similar_cosmul(**kwargs), kv.most_similar_cosmul(**kwargs))


def test_most_similar_cosmul_is_the_mul_analogy_and_honours_restrict(emb: Embeddings) -> None:
    got = emb.most_similar_cosmul(positive=[Row(10), "w020"], negative=["w030"])  # rows too
    mul = emb.analogy("w030", "w010", "w020", k=10, method="mul")
    assert [k for k, _ in got] == mul.keys
    np.testing.assert_allclose([s for _, s in got], mul.scores, atol=1e-6)
    everything = emb.most_similar_cosmul(positive=["w100", "w020"], negative=["w030"], topn=V)
    assert len(everything) == V - 3 and not {"w100", "w020", "w030"} & {k for k, _ in everything}
    few = emb.most_similar_cosmul(positive=["w100", "w020"], negative=["w030"], restrict_vocab=60)
    assert few == [(k, s) for k, s in everything if emb.key_to_index[k] < 60][:10]


def test_most_similar_cosmul_errors(emb: Embeddings) -> None:
    with pytest.raises(InputError, match="at least one positive term"):
        emb.most_similar_cosmul(negative=["w001"])
    with pytest.raises(UnknownItemError, match="unknown item 'w99'") as e:
        emb.most_similar_cosmul(positive=["w001"], negative=["w99"])
    assert isinstance(e.value, KeyError)
    with pytest.raises(InputError, match="most_similar_cosmul term"):
        emb.most_similar_cosmul(positive=[("w001", 2.0)])
    with pytest.raises(InputError, match="k == 0"):
        emb.most_similar_cosmul("w001", topn=0)
    with pytest.raises(SpaceMismatchError):
        emb.most_similar_cosmul(positive=[make_space(seed=1)["w001"]])


# ---- pairs ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("w1", "w2"), [("w001", "w002"), ("w010", "w010"), ("w150", 7)])
def test_distance(emb: Embeddings, kv, w1, w2) -> None:
    got = emb.distance(ours(w1), ours(w2))
    assert type(got) is float
    np.testing.assert_allclose(got, kv.distance(w1, w2), atol=1e-6)
    np.testing.assert_allclose(got, 1.0 - emb.similarity(ours(w1), ours(w2)), atol=1e-12)


def test_distances(emb: Embeddings, kv) -> None:
    rng = np.random.default_rng(3)
    v = rng.normal(size=D).astype(np.float32)
    others = ["w005", "w001", "w190", "w005"]
    for query, other in (("w010", ()), ("w010", others), (v, others), (v, ()), (emb["w010"] * 3, ())):
        got = emb.distances(query, other)
        want = kv.distances(np.asarray(query) if not isinstance(query, str) else query, other)
        assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=1e-6)
    assert emb.distances("w010")[10] == pytest.approx(0.0, abs=1e-6)  # every item, the query included
    np.testing.assert_array_equal(emb.distances("w010", None), emb.distances("w010"))


@pytest.mark.parametrize(
    ("ws1", "ws2"),
    [(["w001", "w002"], ["w003"]), (["w010"], ["w010"]), (["w001", "w050", "w099"], ["w002", 7, "w150"])],
)
def test_n_similarity(emb: Embeddings, kv, ws1, ws2) -> None:
    got = emb.n_similarity(ours(ws1), ours(ws2))
    assert type(got) is float
    np.testing.assert_allclose(got, kv.n_similarity(ws1, ws2), atol=1e-6)


def test_pair_errors(emb: Embeddings) -> None:
    with pytest.raises(InputError, match="ws2 must be a non-empty sequence"):
        emb.n_similarity(["w001"], [])
    with pytest.raises(InputError, match="ws1 must be a non-empty sequence"):
        emb.n_similarity("w001", ["w002"])
    with pytest.raises(InputError, match="distance takes two"):
        emb.distance(["w001"], "w002")
    with pytest.raises(InputError, match="other_words must be a sequence"):
        emb.distances("w001", "w002")
    with pytest.raises(InputError, match="similar_by_word takes one"):
        emb.similar_by_word(["w001", "w002"])
    with pytest.raises(InputError, match="similar_by_vector takes one vector"):
        emb.similar_by_vector(np.ones((2, D)))


@pytest.mark.parametrize(
    "call",
    [
        lambda e: e.get_vector("nope"),
        lambda e: e.similar_by_word("nope"),
        lambda e: e.distance("w001", "nope"),
        lambda e: e.distances("nope"),
        lambda e: e.distances("w001", ["w002", "nope"]),
        lambda e: e.n_similarity(["w001", "nope"], ["w002"]),  # gensim would skip it silently
        lambda e: e.most_similar_cosmul(["nope"]),
    ],
)
def test_unknown_keys_raise_our_key_error(emb: Embeddings, call) -> None:
    with pytest.raises(UnknownItemError, match="unknown item 'nope'") as e:
        call(emb)
    assert isinstance(e.value, KeyError)


# ---- files ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("binary", [False, True])
def test_save_word2vec_format_is_byte_identical_to_gensims(
    emb: Embeddings, kv, tmp_path, binary: bool
) -> None:
    kv.save_word2vec_format(str(tmp_path / "gensim"), binary=binary)
    assert emb.save_word2vec_format(tmp_path / "ours", binary=binary) is None
    assert (tmp_path / "ours").read_bytes() == (tmp_path / "gensim").read_bytes()
    write_word2vec(emb, tmp_path / "formats", binary=binary)  # one writer
    assert (tmp_path / "formats").read_bytes() == (tmp_path / "ours").read_bytes()
    emb.save_word2vec_format(fname=str(tmp_path / "str"), binary=binary)  # gensim's argument name, a str path
    assert (tmp_path / "str").read_bytes() == (tmp_path / "gensim").read_bytes()


def test_save_word2vec_format_refuses_whitespace_unless_replaced(tmp_path) -> None:
    spaced = Embeddings(np.eye(2, dtype=np.float32), Vocab(["a b", "c"], [2, 1]))
    with pytest.raises(InputError, match="contains whitespace"):
        spaced.save_word2vec_format(tmp_path / "x")
    spaced.save_word2vec_format(tmp_path / "x", replace_space="_")
    assert (tmp_path / "x").read_text().splitlines()[1].startswith("a_b ")


# ---- gensim's Word2Vec argument names given to train ------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"vector_size": 8}, "vector_size is gensim's name: use dim=8"),
        ({"size": 8}, "size is gensim's name: use dim=8"),
        ({"workers": 4}, "workers is gensim's name: use threads=4"),
        ({"alpha": 0.05}, "alpha is gensim's name: use lr=0.05"),
        ({"min_alpha": 0.001}, "min_alpha is gensim's name: use min_lr=0.001"),
        ({"iter": 10}, "iter is gensim's name: use epochs=10"),
        ({"max_final_vocab": 500}, "max_final_vocab is gensim's name: use max_items=500"),
        (
            {"max_vocab_size": 500},
            "max_vocab_size is gensim's name: use max_items=500 (the closest: the max_items most frequent "
            "items are kept)",
        ),
        ({"sg": 1}, "sg is gensim's name: likewise trains skip-gram only; drop sg="),
        ({"sg": 0}, "sg is gensim's name: likewise trains skip-gram only; drop sg="),
        (
            {"hs": 1},
            "hs is gensim's name: hierarchical softmax is not offered; likewise uses negative sampling "
            "(negative=); drop hs=",
        ),
        (
            {"cbow_mean": 1},
            "cbow_mean is gensim's name: CBOW is not offered, likewise trains skip-gram; drop cbow_mean=",
        ),
        (
            {"null_word": 0},
            "null_word is gensim's name: CBOW is not offered, likewise trains skip-gram; drop null_word=",
        ),
        (
            {"callbacks": []},
            "callbacks is gensim's name: likewise.train takes callback=, a function called with each epoch's "
            "EpochStats",
        ),
        (
            {"compute_loss": True},
            "compute_loss is gensim's name: the loss is always kept (EpochStats.loss, meta['history']); drop "
            "compute_loss=",
        ),
        (
            {"trim_rule": None},
            "trim_rule is gensim's name: not offered; min_count= and max_items= trim the vocabulary",
        ),
        (
            {"sorted_vocab": 1},
            "sorted_vocab is gensim's name: the vocabulary is always sorted by descending count; drop "
            "sorted_vocab=",
        ),
        (
            {"shrink_windows": True},
            "shrink_windows is gensim's name: windows always shrink (a radius drawn in 1..window); drop "
            "shrink_windows=",
        ),
        ({"hashfxn": hash}, "hashfxn is gensim's name: every random stream comes from seed=; drop hashfxn="),
        (
            {"batch_words": 10000},
            "batch_words is gensim's name: drop batch_words= (the torch backend's step size is "
            "batch_tokens=)",
        ),
        (
            {"comment": "x"},
            "comment is gensim's name: drop comment= (notes go in emb.meta, which is saved with the space)",
        ),
    ],
)
def test_gensim_training_names_get_a_hint(kwargs: dict, message: str) -> None:
    with pytest.raises(InputError) as e:
        train([["a", "b"]], **kwargs)
    assert str(e.value) == message


def test_several_gensim_names_and_an_unknown_one_in_one_message() -> None:
    with pytest.raises(InputError) as e:
        train([["a", "b"]], vector_size=8, workers=2, dims=3, min_count=1)
    assert str(e.value).startswith(
        "vector_size is gensim's name: use dim=8; workers is gensim's name: use threads=2; "
        "unknown training parameter 'dims' (did you mean dim=?)"
    )
    assert "\n" not in str(e.value)


def test_gensim_names_given_to_the_retail_fit_get_the_same_hint() -> None:
    from likewise.retail.fit import fit_order_log

    with pytest.raises(InputError, match=r"^vector_size is gensim's name: use dim=8$"):
        fit_order_log(None, vector_size=8)  # type: ignore[arg-type]


def test_most_similar_takes_gensims_restrict_vocab(emb: Embeddings, kv) -> None:
    ours = emb.most_similar(positive=["w001"], topn=5, restrict_vocab=40)
    assert ours == emb.most_similar(positive=["w001"], topn=5, restrict=40)
    theirs = kv.most_similar(positive=["w001"], topn=5, restrict_vocab=40)
    assert [k for k, _ in ours] == [k for k, _ in theirs]
    with pytest.raises(InputError, match="restrict_vocab is gensim's name"):
        emb.most_similar(positive=["w001"], restrict=10, restrict_vocab=40)


def test_keys_and_index_to_key_cannot_be_changed_by_a_caller(emb: Embeddings) -> None:
    before = list(emb.keys)
    for change in (
        lambda k: k.__setitem__(0, "x"),
        lambda k: k.append("x"),
        lambda k: k.sort(reverse=True),
        lambda k: k.__delitem__(0),
    ):
        with pytest.raises(TypeError, match="read-only"):
            change(emb.index_to_key)
    assert emb.keys == before and emb.id_of(before[0]) == 0
    mine = list(emb.keys)  # a copy is the caller's to edit; + gives a plain list
    mine[0] = "x"
    assert isinstance(emb.keys + ["y"], list) and emb.keys[0] == before[0]
    assert pickle.loads(pickle.dumps(emb.keys)) == before


def test_print_of_a_batch_shows_its_answers(emb: Embeddings) -> None:
    batch = emb.similar(["w001", "w002", "w003", "w004"], k=2)
    text = repr(batch)
    assert text.startswith("Neighbours(4 queries × 2 neighbours: {")
    assert repr(batch[0].keys[0]) in text and text.endswith("; ...)")
