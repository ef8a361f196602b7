"""Evaluation: equality with gensim (analogies, word pairs), ranking metrics, splits, labels, planted data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from likewise import Embeddings, Row, Vocab
from likewise.baselines.counts import BASELINES
from likewise.data.datasets import planted_baskets, ring_baskets
from likewise.errors import CorruptModelError, InputError
from likewise.evaluate import (
    EmbeddingRecommender,
    evaluate_analogies,
    evaluate_labels,
    evaluate_pairs,
    heldout_loss,
    holdout_cases,
    holdout_report,
    label_purity,
    load_split,
    ranking_metrics,
    save_split,
    split_sequences,
    winners,
)
from likewise.training.train import train

gensim = pytest.importorskip("gensim")
from gensim.models import KeyedVectors  # noqa: E402
from gensim.test.utils import datapath  # noqa: E402

QUESTIONS = datapath("questions-words.txt")
PAIRS = [datapath("wordsim353.tsv"), datapath("simlex999.txt")]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LIKEWISE_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def word_space():
    """Random vectors with planted analogy offsets (about half the questions right), mixed-case keys.

    Returns our space and a gensim KeyedVectors over exactly the same vectors and keys.
    """
    rng = np.random.default_rng(0)
    words, pairs, sec = [], [], -1
    with open(QUESTIONS) as f:
        for line in f:
            if line.startswith(":"):
                sec += 1
                continue
            a, b, c, d = line.split()
            pairs += [(a, b, sec), (c, d, sec)]
            words += [a, b, c, d]
    vocab = list(dict.fromkeys(words))
    vocab += [w.lower() for w in vocab[:200]]  # case variants: the uppercased key stands for the first
    for p in PAIRS:
        with open(p) as f:
            vocab += [w for line in f if not line.startswith("#") for w in line.split("\t")[:2]]
    vocab = list(dict.fromkeys(vocab))
    rng.shuffle(vocab)
    idx = {w: i for i, w in enumerate(vocab)}
    dim = 32
    vecs = rng.standard_normal((len(vocab), dim)).astype(np.float32)
    offsets = rng.standard_normal((20, dim)) * 2
    for a, b, s in pairs:
        vecs[idx[b]] = vecs[idx[a]] + offsets[s] + rng.standard_normal(dim) * 0.8
    kv = KeyedVectors(dim)
    kv.add_vectors(vocab, vecs)
    return Embeddings(vecs, Vocab(vocab, what="word")), kv


def _gensim_sections(result):
    return [(s["section"], len(s["correct"]), len(s["correct"]) + len(s["incorrect"])) for s in result[1]]


def _our_sections(r):
    rows = [(s["section"], s["correct"], s["total"]) for s in r["sections"]]
    return rows + [("Total accuracy", r["total"]["correct"], r["total"]["total"])]


@pytest.mark.parametrize(
    ("restrict", "case_insensitive", "dummy4unknown"),
    [(300_000, True, False), (300_000, False, False), (1500, True, False), (1500, True, True)],
)
def test_analogies_equal_gensim(word_space, restrict, case_insensitive, dummy4unknown):
    emb, kv = word_space
    g = kv.evaluate_word_analogies(
        QUESTIONS, restrict_vocab=restrict, case_insensitive=case_insensitive, dummy4unknown=dummy4unknown
    )
    r = evaluate_analogies(
        emb, QUESTIONS, restrict=restrict, case_insensitive=case_insensitive, dummy4unknown=dummy4unknown
    )
    assert _our_sections(r) == _gensim_sections(g)
    assert r["total"]["accuracy"] == g[0]
    assert 0.05 < r["total"]["accuracy"] < 0.95  # a mix of right and wrong answers: the test has teeth
    assert len(r["sections"]) == 14


def test_analogies_3cosmul_agrees_with_embeddings_analogy(word_space, tmp_path):
    emb, _ = word_space
    with open(QUESTIONS) as f:
        lines = [line.split() for line in f if not line.startswith(":")]
    lines = [q for q in lines if all(w in emb.vocab for w in q)][::200]
    path = tmp_path / "q.txt"
    path.write_text(": sample\n" + "".join(" ".join(q) + "\n" for q in lines))
    r = evaluate_analogies(emb, path, case_insensitive=False, method="mul")
    # case-sensitive, so the top candidate (a, b, c excluded) is the answer
    expected = sum(emb.analogy(a, b, c, k=1, method="mul").keys[0] == d for a, b, c, d in lines)
    assert r["total"]["total"] == len(lines) > 50
    assert r["total"]["correct"] == expected > 0
    add = evaluate_analogies(emb, path, case_insensitive=False, method="add")
    assert add["total"]["correct"] == sum(emb.analogy(a, b, c, k=1).keys[0] == d for a, b, c, d in lines)


@pytest.mark.parametrize("path", PAIRS)
@pytest.mark.parametrize(("restrict", "case_insensitive"), [(300_000, True), (500, True), (300_000, False)])
def test_word_pairs_equal_gensim(word_space, path, restrict, case_insensitive):
    emb, kv = word_space
    pearson, spearman, oov = kv.evaluate_word_pairs(
        path, restrict_vocab=restrict, case_insensitive=case_insensitive
    )
    r = evaluate_pairs(emb, path, restrict=restrict, case_insensitive=case_insensitive)
    assert r["pearson"] == pytest.approx(pearson[0], abs=1e-6)
    assert r["spearman"] == pytest.approx(spearman[0], abs=1e-6)
    assert r["oov_ratio"] * 100 == pytest.approx(oov, abs=1e-9)


def test_restrict_means_the_most_frequent_words_whatever_the_row_order(word_space):
    """``restrict=N`` is gensim's restrict_vocab: the N most frequent keys. With rows out of count order
    (as after an update, which appends rows), the N most frequent are not the first N rows: the answers
    must equal gensim's over the same vectors in count order."""
    emb, kv = word_space
    n = len(emb)
    moved = np.r_[300:n, 0:300]  # the 300 most frequent words go last, keeping their counts
    counts = np.arange(n, 0, -1)[moved]
    shuffled = Embeddings(emb.vectors[moved], Vocab([emb.keys[i] for i in moved], counts, what="word"))
    for restrict, dummy in ((1500, False), (1500, True)):
        g = kv.evaluate_word_analogies(QUESTIONS, restrict_vocab=restrict, dummy4unknown=dummy)
        r = evaluate_analogies(shuffled, QUESTIONS, restrict=restrict, dummy4unknown=dummy)
        assert _our_sections(r) == _gensim_sections(g)
    pearson, spearman, oov = kv.evaluate_word_pairs(PAIRS[0], restrict_vocab=500)
    r = evaluate_pairs(shuffled, PAIRS[0], restrict=500)
    assert r["pearson"] == pytest.approx(pearson[0], abs=1e-6)
    assert r["oov_ratio"] * 100 == pytest.approx(oov, abs=1e-9)


def test_analogy_file_without_section_is_refused(tmp_path, word_space):
    p = tmp_path / "q.txt"
    p.write_text("a b c d\n")
    with pytest.raises(InputError, match="missing section header"):
        evaluate_analogies(word_space[0], p)


# --- ranking metrics ----------------------------------------------------------------------------------


class _Fixed:
    name = "fixed"
    n_items = 10

    def __init__(self, lists):
        self.lists = np.asarray(lists, dtype=np.int64)

    def recommend_ids(self, contexts, k):
        return self.lists[:, :k]


def test_ranking_metrics_known_answer():
    rec = _Fixed([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    ctx = [np.array([0])] * 3
    m = ranking_metrics(rec, ctx, [1, 6, 0], k=3)  # ranks 1, 3, absent
    assert m["hr"] == pytest.approx(2 / 3)
    assert m["ndcg"] == pytest.approx((1 + 1 / np.log2(4)) / 3)
    assert m["mrr"] == pytest.approx((1 + 1 / 3) / 3)
    assert m["coverage"] == pytest.approx(9 / 10)
    assert (m["k"], m["n"]) == (3, 3)
    with pytest.raises(InputError, match="one target per context"):
        ranking_metrics(rec, ctx, [1, 2], k=3)


def test_winners_names_ties():
    rows = {"a": {"hr": 0.5, "x": 1.0}, "b": {"hr": 0.5, "x": 2.0}}
    assert winners(rows, ["hr", "x"]) == {"hr": "a = b", "x": "b"}


def test_embedding_recommender_equals_recommend():
    rng = np.random.default_rng(1)
    emb = Embeddings(rng.standard_normal((40, 6)), Vocab([f"k{i}" for i in range(40)]))
    contexts = [rng.choice(40, size=3, replace=False) for _ in range(20)]
    top = EmbeddingRecommender(emb).recommend_ids(contexts, 5)
    ref = emb.recommend([[Row(int(x)) for x in c] for c in contexts], k=5).ids
    np.testing.assert_array_equal(top, ref)


def test_heldout_loss_known_answers():
    # items on a circle: the context's nearest other item ranks first, the opposite one last
    angles = np.arange(8) * (2 * np.pi / 8)
    emb = Embeddings(np.c_[np.cos(angles), np.sin(angles)], Vocab([f"k{i}" for i in range(8)]))
    assert heldout_loss(emb, [np.array([0])], np.array([4])) == pytest.approx(1.0)
    # item 1 ties with item 7 for first place among the 7 others: half a place above it
    assert heldout_loss(emb, [np.array([0])], np.array([1])) == pytest.approx(0.5 / 6)


# --- labels -------------------------------------------------------------------------------------------


def test_evaluate_labels_known_answer():
    # unit vectors at these angles: cluster a near 0 degrees, cluster b near 90, and b3 in between
    deg = np.radians([0, 10, -10, 90, 80, 42])
    keys = ["a1", "a2", "a3", "b1", "b2", "b3"]
    emb = Embeddings(np.c_[np.cos(deg), np.sin(deg)], Vocab(keys))
    labels = {"a1": "a", "a2": "a", "a3": "a", "b1": "b", "b2": "b", "b3": "b", "zz": "b"}
    r = evaluate_labels(emb, labels, k=2)
    assert r["n"] == 6 and r["n_unknown"] == 1
    # b3's two nearest are a2 (32 degrees) and b2 (38): a tie of labels, won by the nearer one, "a"
    assert r["per_label"]["a"] == {"n": 3, "accuracy": 1.0, "purity": 1.0}
    assert r["per_label"]["b"]["accuracy"] == pytest.approx(2 / 3)
    assert r["per_label"]["b"]["purity"] == pytest.approx(2.5 / 3)
    assert r["accuracy"] == pytest.approx(5 / 6)
    assert r["purity"] == pytest.approx(5.5 / 6)
    assert label_purity(emb, labels, k=2) == pytest.approx(r["purity"])
    with pytest.raises(InputError, match="only 1 labelled item"):
        evaluate_labels(emb, {"a1": "a"})


# --- splits -------------------------------------------------------------------------------------------


def test_split_basket_mode_is_seeded_and_partitions():
    seqs = [[f"i{j}" for j in range(i % 5 + 1)] + ["i0"] for i in range(200)]
    a = split_sequences(seqs, mode="basket", test_fraction=0.25, seed=3)
    b = split_sequences(seqs, mode="basket", test_fraction=0.25, seed=3)
    c = split_sequences(seqs, mode="basket", test_fraction=0.25, seed=4)
    assert (a.contexts, a.targets, a.train) == (b.contexts, b.targets, b.train)
    assert a.targets != c.targets or a.contexts != c.contexts
    eligible = sum(1 for s in seqs if len(set(s)) >= 2)
    assert len(a.targets) == round(0.25 * eligible)
    assert len(a.train) + len(a.targets) == len(seqs)
    assert a.n_short == len(seqs) - eligible
    for ctx, t in zip(a.contexts, a.targets, strict=True):
        assert t not in ctx and len(ctx) == len(set(ctx)) >= 1  # distinct items, the hidden one removed
    assert len(set(a.targets)) > 1  # not always the same position


def test_split_sequence_mode_hides_the_last_item():
    seqs = [["a", "b", "c"], ["b", "b"], ["x"], ["c", "a", "b", "a"]] * 10
    s = split_sequences(seqs, mode="sequence", test_fraction=0.5, seed=0)
    for ctx, t in zip(s.contexts, s.targets, strict=True):
        assert [*ctx, t] in seqs
    assert s.n_short == 10


def test_split_folder_round_trip_and_checksums(tmp_path):
    seqs = [["a", "b", "c"], ["b", "d"], ["c", "d", "a"]] * 20
    s = split_sequences(seqs, test_fraction=0.3, seed=1)
    save_split(s, tmp_path / "sp")
    back = load_split(tmp_path / "sp")
    assert (back.train, back.contexts, back.targets, back.mode) == (s.train, s.contexts, s.targets, "basket")
    man = json.loads((tmp_path / "sp" / "split.json").read_text())
    assert man["format"] == "likewise.split" and man["version"] == 1 and man["n_test"] == len(s.targets)
    with pytest.raises(InputError, match="already exists"):
        save_split(s, tmp_path / "sp")
    with open(tmp_path / "sp" / "test.tsv", "a") as f:
        f.write("a\tb\n")
    with pytest.raises(CorruptModelError, match="checksum"):
        load_split(tmp_path / "sp")


def test_split_refuses_keys_that_cannot_be_read_back(tmp_path):
    s = split_sequences([["sleeping bag", "tent"]] * 10, test_fraction=0.5)
    with pytest.raises(InputError, match="'sleeping bag'"):
        save_split(s, tmp_path / "sp")
    assert not (tmp_path / "sp").exists() and not list(tmp_path.iterdir())  # nothing half-written
    s.delimiter = ","  # with a delimiter, spaces inside keys are fine
    save_split(s, tmp_path / "sp")
    assert load_split(tmp_path / "sp").train == s.train


def test_holdout_cases_drop_unknown_items():
    s = split_sequences([["a", "b", "zz"], ["a", "b"]] * 5, test_fraction=0.99, seed=0)
    ctx, tgt, dropped = holdout_cases({"a": 0, "b": 1}, s)
    assert len(tgt) + dropped["unknown_target"] + dropped["empty_context"] == len(s.targets)
    assert all(set(c.tolist()) <= {0, 1} for c in ctx)


# --- the planted data: the model against the baselines -------------------------------------------------


@pytest.fixture(scope="module")
def planted_report():
    """Zipf-skewed planted groups (10 groups of 20 items, 3000 baskets): split, train, report."""
    baskets, labels = planted_baskets(n_groups=10, group_size=20, n_baskets=3000, zipf=1.0, seed=0)
    split = split_sequences(baskets, mode="basket", test_fraction=0.2, seed=0)
    emb = train(
        split.train, mode="basket", dim=8, min_count=1, sample=0.0, epochs=10, seed=0, deterministic=True
    )
    return holdout_report(emb, split, k=10), emb, labels


def test_planted_report_model_beats_popularity(planted_report, record_property):
    r, emb, labels = planted_report
    hr = {name: row["hr"] for name, row in r["rows"].items()}
    record_property("hr_at_10", hr)
    print("planted zipf=1.0 HR@10:", hr, "winners:", r["winners"])
    assert r["n"] == 600
    assert set(r["rows"]) == {"model", "model-cosine", *BASELINES}
    assert label_purity(emb, labels) > 0.95  # the space does separate the planted groups
    assert hr["model"] > hr["popular"] + 0.3


def test_planted_report_model_matches_cocount(planted_report):
    """On planted groups co-counting is close to the best possible ranking (an item's group is named by
    any item of the basket, and counts inside it follow popularity), so the model can at best tie it.
    Measured: model (affinity) 0.728, co-count 0.743, 600 cases (one standard error is about 0.018).
    The cosine ranking, which ignores popularity, trails here (0.58)."""
    r, _, _ = planted_report
    hr = {name: row["hr"] for name, row in r["rows"].items()}
    assert hr["model"] >= hr["cocount"] - 0.04, hr
    assert hr["model"] > hr["model-cosine"], hr


def test_ring_report_model_beats_counts():
    """Neighbours on a ring, seen sparsely: most pairs of neighbours were never bought together, so
    counts cannot rank them and the model must generalise. Measured HR@10: model-cosine 0.518, PPMI-SVD
    0.558, PPMI 0.480, co-count 0.439, model (affinity) 0.256, popular 0.003 (798 cases). The affinity
    scores pairs by how often they were seen together, so like the counts it cannot generalise here."""
    baskets = ring_baskets(n_items=2000, n_baskets=4000, width=10, seed=0)
    split = split_sequences(baskets, mode="basket", test_fraction=0.2, seed=0)
    emb = train(
        split.train, mode="basket", dim=16, min_count=1, sample=0.0, epochs=20, seed=0, deterministic=True
    )
    r = holdout_report(emb, split, k=10)
    hr = {name: row["hr"] for name, row in r["rows"].items()}
    print("ring HR@10:", hr)
    assert hr["model-cosine"] > hr["cocount"] + 0.05, hr
    assert hr["model-cosine"] > hr["popular"] + 0.4, hr


# ---- labels files: item<TAB>label lines or tables with named columns ------------------------------------


def test_read_labels_lines_and_tables(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from likewise.evaluate import read_labels

    (tmp_path / "l.tsv").write_text("# comment\ntent\toutdoor\nkettle\tkitchen\n", encoding="utf-8")
    assert read_labels(tmp_path / "l.tsv") == {"tent": "outdoor", "kettle": "kitchen"}
    (tmp_path / "p.csv").write_text(
        "product_id,name,department\ntent,Dome tent,outdoor\nkettle,Kettle,kitchen\nmug,,\n", encoding="utf-8"
    )
    assert read_labels(tmp_path / "p.csv", label_col="department") == {"tent": "outdoor", "kettle": "kitchen"}
    assert read_labels(tmp_path / "p.csv") == {"tent": "Dome tent", "kettle": "Kettle"}  # first two columns
    (tmp_path / "p.tsv").write_text(
        "product_id\tname\tdepartment\ntent\tDome tent\toutdoor\n", encoding="utf-8"
    )
    assert read_labels(tmp_path / "p.tsv", label_col="department") == {"tent": "outdoor"}
    pq.write_table(pa.table({"sku": [1, 2], "dept": ["a", "b"]}), tmp_path / "p.parquet")
    assert read_labels(tmp_path / "p.parquet") == {"1": "a", "2": "b"}
    with pytest.raises(InputError, match=r"no column 'aisle'; its columns are \['product_id', 'name'"):
        read_labels(tmp_path / "p.csv", label_col="aisle")
    (tmp_path / "empty.csv").write_text("a,b\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no"):
        read_labels(tmp_path / "empty.csv")
