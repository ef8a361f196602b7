"""A newcomer's first hour, played: the calls an ``implicit`` user and a ``gensim`` user reach for first.

Every call must give the peer's answer (checked against real implicit / gensim where they are installed:
the same shapes, the same id space, the same conventions, and on the same vectors the same numbers) or
fail with a one-line message that points to likewise's way. What must never happen is a silently
different answer: ids that are not matrix columns, a result that unpacks into something else, a query
about a dropped column answered with an unrelated suggestion.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import planted_baskets

import likewise
from likewise.errors import InputError, UnknownItemError

sp = pytest.importorskip("scipy.sparse")
pytestmark = pytest.mark.filterwarnings("ignore:OpenBLAS is configured:RuntimeWarning")  # implicit on 2 cores

CONFIG = {"dim": 8, "epochs": 4, "seed": 3, "threads": 1, "deterministic": True}
EMPTY = 33  # the matrix's last column: no user holds it


def one_line(e: pytest.ExceptionInfo) -> str:
    msg = str(e.value)
    assert "\n" not in msg, msg
    return msg


# ---- implicit ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def user_items():
    """300 users × 34 columns: planted groups of 8 columns (g0: 0-7, ...), confidences 1-5, an empty
    column 33 and columns numbered unlike likewise's count order."""
    baskets, labels = planted_baskets(n=300, seed=7)
    keys = sorted(labels, key=lambda k: (k[::-1], k))
    col = {k: j for j, k in enumerate(keys)}
    rows = [sorted(col[k] for k in b) for b in baskets]
    indptr = np.r_[0, np.cumsum([len(r) for r in rows])]
    conf = np.random.default_rng(0).integers(1, 6, int(indptr[-1])).astype(np.float32)
    m = sp.csr_matrix((conf, np.concatenate(rows), indptr), shape=(len(rows), len(keys) + 2))
    group = np.array([labels[k] for k in keys] + ["none", "none"])
    return m, group


@pytest.fixture(scope="module")
def model(user_items):
    m, _ = user_items
    return likewise.train(m, user_keys=[str(u) for u in range(m.shape[0])], **CONFIG)


@pytest.fixture(scope="module")
def als(user_items):
    implicit = pytest.importorskip("implicit.cpu.als")
    m, _ = user_items
    model = implicit.AlternatingLeastSquares(factors=8, iterations=5, random_state=0, num_threads=1)
    model.fit(m, show_progress=False)
    return model


def test_recommend_answers_in_columns_as_implicit(model, als, user_items) -> None:
    m, group = user_items
    ids, scores = model.recommend(0, m[0], N=3)  # implicit's call, implicit's unpacking
    want_ids, want_scores = als.recommend(0, m[0], N=3)
    assert ids.shape == want_ids.shape == (3,) and scores.shape == want_scores.shape
    liked = set(m[0].indices.tolist())
    assert not liked & set(ids.tolist()) and not liked & set(want_ids.tolist())  # filtered, as implicit
    assert set(group[ids]) == {group[m[0].indices[0]]}  # columns of the user's own group (>= 3 left)
    batch_ids, batch_scores = model.recommend(np.arange(20), m[:20], N=3)
    assert batch_ids.shape == als.recommend(np.arange(20), m[:20], N=3)[0].shape == (20, 3)
    np.testing.assert_array_equal(batch_ids[0], ids)
    assert (
        np.mean(
            [len({group[j] for j in row} | {group[m[u].indices[0]]}) == 1 for u, row in enumerate(batch_ids)]
        )
        >= 0.9
    )
    same, _ = model.recommend(np.arange(20), m[:20], k=3)  # likewise's k= beside user_items
    np.testing.assert_array_equal(same, batch_ids)
    np.testing.assert_array_equal(model.recommend(0, m[0], N=3, recalculate_user=True)[0], ids)


def test_recommend_filters_take_columns(model, als, user_items) -> None:
    m, _ = user_items
    ids, _ = model.recommend(0, m[0], N=5)
    kept, _ = model.recommend(0, m[0], N=5, filter_items=ids[:2])
    assert not set(ids[:2].tolist()) & set(kept.tolist())
    allowed = np.arange(8, 24)
    only, _ = model.recommend(0, m[0], N=3, items=allowed)
    want, _ = als.recommend(0, m[0], N=3, items=allowed)
    assert set(only.tolist()) <= set(allowed.tolist()) and set(want.tolist()) <= set(allowed.tolist())


def test_what_likewise_does_not_do_is_refused_in_one_line(model, als, user_items) -> None:
    m, _ = user_items
    assert set(m[0].indices) & set(als.recommend(0, m[0], N=34, filter_already_liked_items=False)[0].tolist())
    with pytest.raises(InputError) as e:
        model.recommend(0, m[0], N=5, filter_already_liked_items=False)
    assert "never proposes a basket's own items" in one_line(e)
    with pytest.raises(ValueError):  # implicit: one row per user
        als.recommend(np.arange(3), m[:5], N=5)
    with pytest.raises(InputError) as e:  # InputError is a ValueError too
        model.recommend(np.arange(3), m[:5], N=5)
    assert "user_items[userid]" in one_line(e)
    with pytest.raises(InputError) as e:
        model.similar_items(3, recalculate_item=True)
    assert "likewise.retail.update.update" in one_line(e)  # a name that exists (tests/test_pointers.py)
    with pytest.raises(InputError) as e:
        model.recommend(["3"], filter_items=[1])  # a basket of keys with implicit's column filter
    assert "restrict=" in one_line(e)
    with pytest.raises(TypeError, match="unexpected keyword argument 'filter_liked'"):
        model.recommend(0, m[0], N=5, filter_liked=True)  # implicit's keywords are checked by name
    ids, _ = model.recommend(0, m[0], N=3)
    np.testing.assert_array_equal(model.implicit_recommend(0, m[0], 3)[0], ids)  # the path it delegates to


def test_implicit_names_on_a_space_not_trained_from_a_matrix_say_so(emb, user_items) -> None:
    m, _ = user_items
    for call in (lambda: emb.recommend(0, m[0], N=3), lambda: emb.similar_items(0), lambda: emb.item_factors):
        with pytest.raises(InputError) as e:
            call()
        assert "space trained on a user × item matrix" in one_line(e)


def test_results_refuse_tuple_unpacking(model) -> None:
    for res in (model.similar("3", k=2), model.similar(["3", "4"], k=2), model.recommend(["3"], k=2)):
        with pytest.raises(TypeError) as e:
            ids, scores = res  # noqa: F841 -- implicit's habit: refused, never two rows or two pairs
        assert "res.ids, res.scores" in one_line(e)
    res = model.similar("3", k=2)
    assert res.pairs() == list(zip(res.keys, res.scores.tolist(), strict=True))


def test_similar_items_and_users_as_implicit(model, als, user_items) -> None:
    m, group = user_items
    ids, scores = model.similar_items(3, N=5)
    want, _ = als.similar_items(3, N=5)
    assert ids[0] == want[0] == 3 and ids.shape == want.shape  # the item itself first, as implicit
    assert abs(scores[0] - 1) < 1e-5 and set(group[ids]) == {group[3]}
    batch, _ = model.similar_items(np.array([3, 4]), N=5)
    assert batch.shape == als.similar_items(np.array([3, 4]), N=5)[0].shape == (2, 5)
    assert 3 not in model.similar_items(3, N=5, filter_items=[3])[0]
    users, _ = model.similar_users(7, N=4)
    assert users[0] == als.similar_users(7, N=4)[0][0] == 7 and users.shape == (4,)
    assert model.item_factors.shape == (m.shape[1], 8) and model.user_factors.shape == (m.shape[0], 8)
    np.testing.assert_array_equal(
        model.item_factors[3], model.vectors[model.vocab.id(model.column_keys()[3])]
    )


def test_columns_survive_save_and_load(model, user_items, tmp_path) -> None:
    m, _ = user_items
    model.save(tmp_path / "m")
    again = likewise.load(tmp_path / "m")
    for a, b in zip(
        again.recommend(np.arange(5), m[:5], N=4), model.recommend(np.arange(5), m[:5], N=4), strict=True
    ):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(again.similar_items(5, N=4)[0], model.similar_items(5, N=4)[0])


def test_given_item_keys_are_remembered(user_items, tmp_path) -> None:
    m, _ = user_items
    keys = [f"sku{j}" for j in range(m.shape[1])]
    emb = likewise.train(m, item_keys=keys, **CONFIG)
    emb.save(tmp_path / "k")
    emb = likewise.load(tmp_path / "k")
    ids, _ = emb.recommend(0, m[0], N=3)  # no item_keys again at query time
    assert emb.recommend(m[:1]).keys[0][:3] == [keys[j] for j in ids]


def test_an_empty_column_is_noted_and_named_when_asked(model) -> None:
    dropped = model.meta["dropped"]
    assert dropped["empty"] == 2 and str(EMPTY) in dropped["keys"]
    with pytest.raises(UnknownItemError) as e:
        model.similar_items(EMPTY)
    assert "holds no value > 0" in one_line(e) and "did you mean" not in str(e.value)
    with pytest.raises(UnknownItemError, match="holds no value > 0"):
        model.similar(str(EMPTY))


def test_errors_redirect(model) -> None:
    with pytest.raises(UnknownItemError) as e:  # a customer (matrix row) named where an item is asked
        model.similar("250")
    assert "is a customer of this space" in one_line(e) and "similar-customers" in str(e.value)
    vocab = likewise.Vocab(["tent-00005", "tent-00001", "kettle-00002"], [5, 3, 1])
    assert vocab.suggest("tent") == ["tent-00005", "tent-00001"]  # a bare prefix finds its keys


def test_dense_matrix_and_confidences(user_items, model) -> None:
    m, _ = user_items
    dense = likewise.train(m.toarray(), user_keys=[str(u) for u in range(m.shape[0])], **CONFIG)
    np.testing.assert_array_equal(dense.vectors, model.vectors)
    ones = m.copy()
    ones.data[:] = 1
    np.testing.assert_array_equal(likewise.train(ones, **CONFIG).vectors, model.vectors)  # documented: unused
    with pytest.raises(InputError, match="2-D NumPy array of numbers"):
        likewise.train(np.eye(3).astype(str), item_keys=["a", "b", "c"])


# ---- gensim -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def words():
    rng = np.random.default_rng(1)
    groups = [[f"w{g}{i}" for i in range(6)] for g in range(5)]
    return [list(rng.choice(groups[int(rng.integers(5))], 5)) for _ in range(600)]


@pytest.fixture(scope="module")
def emb(words):
    return likewise.train(sentences=words, min_count=1, **CONFIG)  # gensim's keyword


@pytest.fixture(scope="module")
def kv(emb):
    keyedvectors = pytest.importorskip("gensim.models.keyedvectors")
    kv = keyedvectors.KeyedVectors(emb.dim)
    kv.add_vectors(emb.keys, np.asarray(emb.vectors))
    kv.fill_norms()
    return kv


def test_keyedvectors_names_answer_as_gensim(emb, kv) -> None:
    assert emb.wv is emb and emb.wv.most_similar("w00", topn=3) == emb.most_similar("w00", topn=3)
    a, b = emb.keys[0], emb.keys[9]
    assert emb.rank(a, b) == kv.rank(a, b)
    assert emb.closer_than(a, b) == kv.closer_than(a, b) == emb.words_closer_than(a, b)
    given = emb.keys[3:8]
    assert emb.most_similar_to_given(a, given) == kv.most_similar_to_given(a, given)
    assert emb.get_index(a) == kv.get_index(a) and emb.get_index(4) == kv.get_index(4)
    assert emb.get_index("nope", -1) == kv.get_index("nope", -1) == -1
    assert emb.has_index_for(a) and not emb.has_index_for("nope") and not kv.has_index_for("nope")
    with pytest.raises(KeyError):
        emb.get_index("nope")
    assert emb.fill_norms() is None
    np.testing.assert_allclose(emb.norms, kv.norms, rtol=1e-6)


def test_most_similar_topn_none_and_clips_as_gensim(emb, kv) -> None:
    got = emb.most_similar(positive=["w00", "w11"], negative=["w22"], topn=None)
    want = kv.most_similar(positive=["w00", "w11"], negative=["w22"], topn=None)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert emb.most_similar("w00", topn=0) == kv.most_similar("w00", topn=0) == []
    got = emb.most_similar("w00", topn=4, clip_start=2, clip_end=20)
    want = kv.most_similar("w00", topn=4, clip_start=2, clip_end=20)
    assert [k for k, _ in got] == [k for k, _ in want]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


@pytest.mark.parametrize(
    "call, pointer",
    [
        (lambda e: e.evaluate_word_analogies("q.txt"), "likewise.evaluate.evaluate_analogies"),
        (lambda e: e.evaluate_word_pairs("p.tsv"), "likewise.evaluate.evaluate_pairs"),
        (lambda e: e.add_vectors(["x"], np.zeros((1, 8))), "update"),
        (lambda e: e.most_similar("w00", indexer=object()), "attach_index"),
        (lambda e: likewise.load("vectors.vec"), "read_word2vec"),
    ],
)
def test_what_likewise_names_otherwise_points_there(emb, call, pointer) -> None:
    with pytest.raises((AttributeError, InputError, likewise.CorruptModelError)) as e:
        call(emb)
    assert pointer in one_line(e)


def test_gensim_ways_to_give_the_corpus(words, emb, tmp_path) -> None:
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(" ".join(s) for s in words) + "\n")
    from_file = likewise.train(corpus_file=str(path), min_count=1, **CONFIG)
    assert from_file.keys == emb.keys
    with pytest.raises(InputError) as e:
        likewise.train(words, sentences=words)
    assert "given twice" in one_line(e)
    with pytest.raises(InputError, match="vector_size is gensim's name: use dim=8"):
        likewise.train(words, vector_size=8)


def test_word2vec_files_read_with_the_pointed_reader(emb, kv, tmp_path) -> None:
    from likewise.data.formats import read_word2vec

    kv.save_word2vec_format(str(tmp_path / "v.vec"))
    with pytest.raises(likewise.CorruptModelError) as e:
        likewise.load(tmp_path / "v.vec")
    assert "read_word2vec" in one_line(e)
    back = read_word2vec(tmp_path / "v.vec")
    assert back.most_similar("w00", topn=3)[0][0] == kv.most_similar("w00", topn=3)[0][0]
