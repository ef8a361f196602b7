"""A scipy.sparse user × item matrix (what ``implicit`` trains on) in, as baskets: one per row.

The matrix is built from the planted baskets of tests/conftest.py with counts as values, so the answer is
known twice over: the planted groups must be neighbours, and training on the matrix must give, bit for
bit, what training on its rows listed as keys gives (deterministic, same seed). The rows are listed in
the matrix's column order: basket mode samples a basket's contexts by position, so the same items in
another order draw other random numbers and give other (equally good) vectors.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import planted_baskets

import likewise
from likewise.errors import InputError, UnknownItemError
from likewise.space.customers import customer_table
from likewise.training.report import Choice

sp = pytest.importorskip("scipy.sparse")

CONFIG = {"dim": 8, "epochs": 4, "seed": 3, "threads": 1, "deterministic": True}


@pytest.fixture(scope="module")
def data():
    """(matrix, item keys, user keys, rows as key lists, labels): 400 baskets over 32 planted items."""
    baskets, labels = planted_baskets(n=400, seed=5)
    keys = sorted(labels, key=lambda k: (k[::-1], k))  # column order unlike the vocabulary's
    col = {k: j for j, k in enumerate(keys)}
    rows = [sorted(col[k] for k in b) for b in baskets]
    indptr = np.r_[0, np.cumsum([len(r) for r in rows])]
    counts = np.random.default_rng(0).integers(1, 6, int(indptr[-1])).astype(np.float32)  # not used
    m = sp.csr_matrix((counts, np.concatenate(rows), indptr), shape=(len(rows), len(keys)))
    users = [f"user{i}" for i in range(len(rows))]
    lists = [[keys[j] for j in r] for r in rows]
    return m, keys, users, lists, labels


@pytest.fixture(scope="module")
def spaces(data):
    """The same baskets trained from the matrix (with user keys) and from the key lists."""
    m, keys, users, lists, _ = data
    return (
        likewise.train(m, item_keys=keys, user_keys=users, **CONFIG),
        likewise.train(lists, mode="basket", **CONFIG),
    )


def test_matrix_trains_exactly_as_its_rows_listed(spaces, data) -> None:
    from likewise.evaluate import label_purity

    got, want = spaces
    assert got.keys == want.keys
    np.testing.assert_array_equal(got.vectors, want.vectors)
    np.testing.assert_array_equal(got.context, want.context)
    assert got.report.mode == Choice("basket", "a sparse matrix: each row a basket")
    assert got.meta["matrix"] == {"rows": 400, "columns": 32, "item_keys": "given", "column_keys": data[1]}
    assert label_purity(got, data[4], k=5) >= 0.9
    assert got.similar("g0_0", k=5).keys == want.similar("g0_0", k=5).keys


def test_any_format_values_and_explicit_zeros_give_the_same_corpus(data, tmp_path) -> None:
    from likewise.data.corpus import corpus_from_sequences
    from likewise.readers import sparse_baskets

    m, keys, _, lists, _ = data
    want = corpus_from_sequences(lists, tmp_path / "lists")
    coo = m.tocoo()
    r = next(r for r in range(m.shape[0]) if 0 not in m[r].indices)
    # duplicate entries (summed) and an explicit zero (not in its basket), in COO and CSC
    dup = sp.coo_matrix(
        (np.r_[coo.data / 2, coo.data / 2, 0.0], (np.r_[coo.row, coo.row, r], np.r_[coo.col, coo.col, 0])),
        shape=m.shape,
    )
    # a CSR whose rows are not sorted: read on a copy, the caller's matrix unchanged
    rev = np.concatenate([m.indices[a:b][::-1] for a, b in zip(m.indptr[:-1], m.indptr[1:], strict=True)])
    unsorted = sp.csr_matrix((m.data.copy(), rev.copy(), m.indptr.copy()), shape=m.shape)
    assert not unsorted.has_canonical_format
    for i, matrix in enumerate([m, dup, dup.tocsc(), unsorted, sp.csr_array(m), (m > 0).astype(bool)]):
        got = corpus_from_sequences(sparse_baskets(matrix, keys), tmp_path / f"m{i}")
        assert got.vocab.keys == want.vocab.keys and got.manifest["input"]["source"] == "matrix"
        np.testing.assert_array_equal(got.ids, want.ids)
        np.testing.assert_array_equal(got.offsets, want.offsets)
    np.testing.assert_array_equal(unsorted.indices, rev)
    bare = corpus_from_sequences(m, tmp_path / "bare")  # a bare matrix: the column numbers as keys
    assert sorted(bare.vocab.keys, key=int) == [str(j) for j in range(m.shape[1])]


def test_customer_vectors_are_customer_table_of_the_rows(spaces, data) -> None:
    m, keys, users, _, _ = data
    emb = spaces[0]
    assert emb.customers is not None and emb.customers.keys == users
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    ids = np.array([emb.vocab.index[keys[j]] for j in m.indices])
    want = customer_table(emb.vectors, emb.counts, emb.fingerprint, users, rows, ids)
    np.testing.assert_array_equal(emb.customers.vectors, want.vectors)
    np.testing.assert_array_equal(emb.customers.bought_ids, want.bought_ids)
    assert spaces[1].customers is None


def test_items_below_min_count_are_left_out_of_customers() -> None:
    # item "c" occurs once: min_count=2 drops it, and user "u2", who bought only it, gets no vector;
    # keys may come as a numpy array (or any ordered iterable of str)
    m = sp.csr_matrix(np.array([[1, 1, 0], [1, 1, 0], [0, 0, 3]], dtype=np.float64))
    users = np.array(["u0", "u1", "u2"])
    emb = likewise.train(m, item_keys=("a", "b", "c"), user_keys=users, min_count=2, dim=4, epochs=1)
    assert emb.keys == ["a", "b"] and emb.customers.keys == ["u0", "u1"]
    assert emb.customers.config["customers_without_vector"] == 1


def test_recommend_on_matrix_rows_equals_recommend_on_key_lists(spaces, data) -> None:
    m, keys, _, lists, _ = data
    emb = spaces[0]
    got = emb.recommend(m[:20], k=5, item_keys=keys)
    want = emb.recommend(lists[:20], k=5)
    assert got.batched and got.ids.shape == (20, 5)
    np.testing.assert_array_equal(got.ids, want.ids)
    np.testing.assert_array_equal(got.scores, want.scores)
    one = emb.recommend(m[3:4], k=5, item_keys=keys)
    assert one.batched and one.keys == [emb.recommend(lists[3], k=5).keys]
    assert not set(got.keys[0]) & set(lists[0])  # a row's own items are never recommended


def test_recommend_defaults_to_the_column_numbers_of_the_training_matrix(data, tmp_path) -> None:
    m, _, _, lists, _ = data
    emb = likewise.train(m, dim=4, epochs=1, seed=1)  # no item_keys: columns keyed "0", "1", ...
    assert emb.meta["matrix"]["item_keys"] == "column numbers" and "0" in emb.vocab
    got = emb.recommend(m[:4], k=3)
    want = emb.recommend([[str(j) for j in m[r].indices] for r in range(4)], k=3)
    np.testing.assert_array_equal(got.ids, want.ids)
    emb.save(tmp_path / "space")  # meta["matrix"] is saved: a loaded space reads the columns alike
    np.testing.assert_array_equal(likewise.load(str(tmp_path / "space")).recommend(m[:4], k=3).ids, got.ids)
    with pytest.raises(InputError, match="the matrix has 31 columns, the space was trained on 32"):
        emb.recommend(m[:4, :31], k=3)


def test_recommend_refuses_what_it_cannot_read(spaces, data) -> None:
    m, keys, _, _, _ = data
    emb, from_lists = spaces
    assert emb.recommend(m[:2]).keys == emb.recommend(m[:2], item_keys=keys).keys  # the columns remembered
    with pytest.raises(InputError, match="not trained from a matrix: name the 32 columns"):
        from_lists.recommend(m[:2])
    empty = m[:3].tolil()
    empty[1, :] = 0
    with pytest.raises(InputError, match=r"row 1 of the matrix \(1 of its 3 rows\) has no value > 0"):
        emb.recommend(empty.tocsr(), item_keys=keys)
    with pytest.raises(InputError, match="item_keys has 31 keys, expected 32"):
        emb.recommend(m[:2], item_keys=keys[:31])
    with pytest.raises(InputError, match="item_keys= names the columns of a sparse matrix"):
        emb.recommend(["g0_0"], item_keys=keys)
    renamed = ["new"] + keys[1:]
    row = sp.csr_matrix(([1.0, 1.0], ([0, 0], [0, 1])), shape=(1, 32))
    with pytest.raises(UnknownItemError, match="new"):
        emb.recommend(row, item_keys=renamed)
    assert emb.recommend(row, item_keys=renamed, on_unknown="skip").keys[0][0] != keys[1]


@pytest.mark.parametrize(
    "matrix, kw, message",
    [
        (
            np.eye(3).astype(str),
            {"item_keys": ["a", "b", "c"]},
            "scipy.sparse or a 2-D NumPy array of numbers",
        ),
        ("eye", {"item_keys": ["a", "b"]}, r"item_keys has 2 keys, expected 3 \(one per column"),
        ("eye", {"item_keys": ["a", "b", "a"]}, "item_keys holds 'a' more than once"),
        ("eye", {"item_keys": ["a", "b", 3]}, r"item_keys\[2\] is int 3, keys must be str"),
        ("eye", {"item_keys": "abc"}, "item_keys must be a sequence of str keys"),
        ("eye", {"item_keys": {"a", "b", "c"}}, "item_keys must be a sequence .* got set"),
        ("eye", {"user_keys": ["u", "v"]}, r"user_keys has 2 keys, expected 3 \(one per row"),
        ("eye", {"user_keys": ["u", "v", "v"]}, "user_keys holds 'v' more than once"),
        (
            sp.csr_matrix([[1.0, -2.0], [0.0, 1.0]]),
            {},
            r"matrix\[0, 1\] == -2.0, values must be finite and >= 0",
        ),
        (sp.csr_matrix([[1.0, np.nan]]), {}, r"matrix\[0, 1\] == nan"),
        (sp.csr_matrix((0, 4)), {}, r"shape \(0, 4\), expected at least one row and one column"),
        (sp.csr_matrix((3, 4)), {}, r"shape \(3, 4\) holds no value > 0"),
        (sp.coo_array(np.array([1.0, 2.0])), {}, r"shape \(2,\), expected a 2-D matrix"),
        ("eye", {"basket_col": "order"}, "basket_col= does not apply to a sparse matrix"),
        ("eye", {"user_col": "user"}, "user_col= does not apply to a sparse matrix"),
    ],
)
def test_bad_input_says_what_is_wrong(matrix, kw, message) -> None:
    matrix = sp.eye(3, format="csr") if isinstance(matrix, str) else matrix
    with pytest.raises(InputError, match=message):
        likewise.train(matrix, dim=4, epochs=1, **kw)


def test_keys_without_a_matrix_are_refused() -> None:
    with pytest.raises(InputError, match="name the columns and rows of a user × item matrix"):
        likewise.train([["a", "b"]], item_keys=["a", "b"])


def test_import_likewise_does_not_import_scipy() -> None:
    code = "import sys, likewise, likewise.readers; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_an_empty_dataframe_is_named_as_a_table_not_a_temporary_file():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"order_id": pd.Series([], dtype="int64"), "product": pd.Series([], dtype="str")})
    for extra in ({}, {"user_col": "customer"}):
        frame = df.assign(customer=pd.Series([], dtype="str")) if extra else df
        with pytest.raises(InputError, match=r"^the table is empty: it has no rows \(columns 'order_id'"):
            likewise.train(frame, basket_col="order_id", item_col="product", **extra)
