"""Answers that weigh evidence: neighbours shrunk by their baskets, customers by what sets them apart."""

from __future__ import annotations

import numpy as np
import pytest

import likewise
from likewise import retail
from likewise.errors import InputError
from likewise.space.search import centred_unit_rows, evidence_weights
from likewise.training.evidence import SHRINK_GRID, choose_shrink, excess_hits

DEPTS = {d: [f"{d}-{i:02d}" for i in range(12)] for d in ("camp", "kitchen", "office", "garden")}


def _baskets(seed: int = 0, n: int = 3_000, rare: int = 400) -> list[list[str]]:
    """Four departments of twelve best sellers (each basket: three of one department), and ``rare``
    products bought twice each, each time as an extra in a random basket of any department."""
    rng = np.random.default_rng(seed)
    depts = list(DEPTS.values())
    out = [list(rng.choice(depts[int(rng.integers(4))], size=3, replace=False)) for _ in range(n)]
    for r in range(rare):
        for b in rng.choice(n, size=2, replace=False):
            out[int(b)].append(f"rare-{r:03d}")
    return out


@pytest.fixture(scope="module")
def shop():
    return likewise.train(
        _baskets(), mode="basket", dim=16, epochs=10, min_count=1, seed=3, completion="affinity"
    )


def test_evidence_weights_and_centred_rows():
    w = evidence_weights(np.array([0, 2, 20, 2_000]), 20.0)
    assert w.dtype == np.float32
    np.testing.assert_allclose(w, [0.0, 2 / 22, 0.5, 2_000 / 2_020], rtol=1e-6)
    np.testing.assert_array_equal(evidence_weights(np.array([1, 5]), 0.0), [1.0, 1.0])
    x = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 0.0]], dtype=np.float32)
    rows = centred_unit_rows(x, np.array([1, 1, 0]))  # the weighted mean is (2, 0)
    np.testing.assert_allclose(rows, [[-1, 0], [1, 0], [-1, 0]], atol=1e-6)
    assert np.allclose(np.linalg.norm(centred_unit_rows(np.ones((3, 2)), np.ones(3)), axis=1), 0.0)


def test_training_on_baskets_chooses_a_shrink_on_held_out_baskets(shop):
    chosen = shop.meta["similar_evidence"]
    assert chosen["shrink"] in SHRINK_GRID and chosen["shrink"] > 0
    assert chosen["held_out"] > 0 and chosen["centred"] is True
    assert set(chosen["beyond_chance"]) == {f"{s:g}" for s in SHRINK_GRID}
    assert "held-out baskets" in chosen["reason"]
    assert shop.evidence_shrink == chosen["shrink"]
    assert shop.report.similar.value == chosen["shrink"] and shop.report.similar.reason == chosen["reason"]
    assert shop.report.timings.similar > 0


def test_best_sellers_neighbours_are_not_products_bought_twice(shop):
    """Known answer: each best seller's neighbours are its own department's best sellers."""
    for dept, keys in DEPTS.items():
        for key in keys:
            got = shop.similar(key, k=4)
            assert all(k.startswith(dept) for k in got.keys), (key, got.keys)
            assert shop.counts[got.ids].min() > 100
    # plain cosine answers with products bought twice for some best seller: what the default avoids
    plain = [shop.similar(k, k=4, evidence=False) for keys in DEPTS.values() for k in keys]
    assert min(int(shop.counts[p.ids].min()) for p in plain) == 2


def test_a_rare_product_is_still_answerable_and_answers(shop):
    got = shop.similar("rare-007", k=3)
    assert len(got.keys) == 3 and "rare-007" not in got.keys
    # scores descend and are the centred cosines shrunk by each answer's baskets
    rows = centred_unit_rows(np.asarray(shop.vectors), shop.counts)
    me = shop.vocab.id("rare-007")
    want = rows[got.ids] @ rows[me] * evidence_weights(shop.counts, shop.evidence_shrink)[got.ids]
    np.testing.assert_allclose(got.scores, want, rtol=1e-5, atol=1e-6)
    assert np.all(np.diff(got.scores) <= 0)


def test_evidence_argument_and_restrict(shop):
    a = shop.similar("camp-00", k=3, evidence=shop.evidence_shrink)
    b = shop.similar("camp-00", k=3)
    assert a.keys == b.keys
    plain = shop.similar("camp-00", k=3, evidence=False)
    np.testing.assert_allclose(
        plain.scores, shop.similar_to_vector(shop["camp-00"], k=4).scores[1:], rtol=1e-5
    )
    among = ["kitchen-01", "rare-001", "camp-03", "camp-00"]
    got = shop.similar("camp-00", k=2, restrict=among)
    assert set(got.keys) <= set(among) - {"camp-00"} and got.keys[0] == "camp-03"
    top = shop.similar(["camp-00", "office-02"], k=2, restrict=5)  # the 5 most frequent
    five = shop.vocab.most_frequent(5)
    five = set(range(5)) if five is None else set(five.tolist())  # None: the first five rows
    assert set(np.asarray(top.ids).ravel().tolist()) <= five
    for bad in ("yes", -1.0, None):
        with pytest.raises(InputError, match="evidence"):
            shop.similar("camp-00", evidence=bad)


def test_plain_cosine_spaces_are_unchanged():
    """A text space records no evidence rule: similar is the plain cosine it always was."""
    text = [["a", "b", "c", "d"], ["b", "c", "d", "e"]] * 50
    emb = likewise.train(text, mode="sequence", dim=8, epochs=2, min_count=1)
    assert "similar_evidence" not in emb.meta and emb.evidence_shrink is None
    assert emb.similar("a", k=3).keys == emb.similar("a", k=3, evidence=False).keys


def test_damaged_shrink_is_refused(shop, tmp_path):
    shop.save(tmp_path / "m")
    import json

    man = json.loads((tmp_path / "m" / "manifest.json").read_text())
    man["meta"]["similar_evidence"]["shrink"] = "many"
    (tmp_path / "m" / "manifest.json").write_text(json.dumps(man))
    emb = likewise.load(tmp_path / "m")
    with pytest.raises(InputError, match="similar_evidence"):
        emb.similar("camp-00")


@pytest.mark.parametrize("v", [700, 40])
def test_excess_hits_shortlist_equals_a_full_ranking(v):
    """The shortlist that the shrinks re-rank gives the answer a full ranking gives (reference), with
    negative cosines, products of count 0 and rows that may not answer."""
    rng = np.random.default_rng(5)
    d = 6
    rows = centred_unit_rows(rng.normal(size=(v, d)).astype(np.float32), np.ones(v))
    counts = rng.integers(0, 3_000, size=v).astype(np.float64)
    counts[:3] = 0
    visible = rng.random(v) > 0.1
    queries = rng.integers(0, v, size=40)
    truths = [np.unique(rng.integers(0, v, size=8)) for _ in queries]
    truths = [t[t != q] for t, q in zip(truths, queries, strict=True)]
    got = excess_hits(rows, counts, queries, truths, 5_000, 4.0, visible=visible)
    want = np.zeros_like(got)
    for si, s in enumerate(SHRINK_GRID):
        w = evidence_weights(counts, s)
        for r, q in enumerate(queries):
            sc = rows @ rows[q] * w
            sc[q] = -np.inf
            sc[~visible] = -np.inf
            top = np.argsort(-sc, kind="stable")[:10]
            chance = np.minimum(1.0, counts[top] / 5_000 * ((len(truths[r]) + 1) / 4.0))
            want[si, r] = np.isin(top, truths[r]).sum() - chance.sum()
    np.testing.assert_allclose(got, want)


def test_choose_shrink_needs_held_out_baskets():
    shrink, record = choose_shrink(
        np.ones((3, 2), np.float32), np.ones(3), np.zeros(4, np.int32), np.array([0, 2, 4]), 0
    )
    assert shrink is None and "plain cosine" in record["reason"]


# ---- customers --------------------------------------------------------------------------------------


def _households(seed: int = 0) -> list[tuple[str, int, list[str]]]:
    """Two tastes: every household fills its baskets with the same staples (five of eight), and half of
    its baskets add two products of its own group's niche. (customer, basket, products) rows."""
    rng = np.random.default_rng(seed)
    staples = [f"staple-{i}" for i in range(8)]
    niche = {"A": [f"vegan-{i}" for i in range(6)], "B": [f"baby-{i}" for i in range(6)]}
    rows, b = [], 0
    for c in range(120):
        group = "A" if c % 2 == 0 else "B"
        for _ in range(6):
            items = list(rng.choice(staples, size=5, replace=False))
            if rng.random() < 0.5:  # two of the niche: niche products go together, as real ones do
                items.extend(str(x) for x in rng.choice(niche[group], size=2, replace=False))
            rows.append((f"{group}{c:03d}", b, items))
            b += 1
    return rows


@pytest.fixture(scope="module")
def households(tmp_path_factory):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _households()
    path = tmp_path_factory.mktemp("hh") / "orders.parquet"
    lines = [(c, str(b), p) for c, b, items in rows for p in items]
    pq.write_table(
        pa.table({k: [r[i] for r in lines] for i, k in enumerate(("customer_id", "order_id", "product_id"))}),
        path,
    )
    return likewise.train(
        str(path),
        basket_col="order_id",
        item_col="product_id",
        user_col="customer_id",
        dim=12,
        seed=1,
        progress=False,
    )


def test_customer_profiles_are_centred_unit_rows(households):
    table = households.customers
    prof = table.profiles
    np.testing.assert_allclose(np.linalg.norm(prof, axis=1), 1.0, rtol=1e-5)
    centred = np.asarray(table.vectors, np.float64) - np.asarray(table.vectors, np.float64).mean(0)
    np.testing.assert_allclose(prof, centred / np.linalg.norm(centred, axis=1, keepdims=True), atol=1e-5)
    assert not prof.flags.writeable


@pytest.mark.parametrize("method", ["centroid", "knn"])
def test_lookalike_finds_the_niche_not_the_staples(households, method):
    """Known answer: seeds of one niche find the rest of that niche, though staples fill every basket."""
    table = households.customers
    seeds = [k for k in table.keys if k.startswith("A")][:10]
    got = retail.lookalike(households, seeds, k=30, method=method)
    share = np.mean([k.startswith("A") for k in got.keys])
    assert share >= 0.8, (method, share, got.keys)
    plain = table.normed  # what the raw vectors say: staples make every household look alike
    rows = [table.vocab.id(s) for s in seeds]
    c = plain[rows].mean(0)
    others = [i for i in range(len(table)) if i not in rows]
    ranked = [table.keys[others[i]] for i in np.argsort(-(plain[others] @ c))[:30]]
    assert share > np.mean([k.startswith("A") for k in ranked])


def test_similar_customers_share_the_niche(households):
    got = retail.similar_customers(households, "B001", k=10)
    assert np.mean([k.startswith("B") for k in got.keys]) >= 0.8


# ---- each answer's evidence, names without training on them --------------------------------------------


def test_each_answer_carries_its_evidence(shop):
    got = shop.similar("camp-00", k=3)
    recs = got.records()
    assert [r["count"] for r in recs] == shop.counts[got.ids].tolist()
    batch = shop.similar(["camp-00", "office-01"], k=2)
    assert [[r["count"] for r in row] for row in batch.records()] == shop.counts[batch.ids].tolist()


def test_names_are_shown_not_trained_on(tmp_path, capsys):
    """``--names`` keeps a table for display: answers carry names, the vectors are those of the same
    training without it, and similar's table shows each answer's baskets."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from likewise.cli import main

    baskets = _baskets(n=600, rare=40)
    lines = [(str(b), p) for b, items in enumerate(baskets) for p in items]
    pq.write_table(
        pa.table({"order_id": [x[0] for x in lines], "product_id": [x[1] for x in lines]}),
        tmp_path / "o.parquet",
    )
    keys = sorted({p for _, p in lines})
    (tmp_path / "products.csv").write_text(
        "product_id,name,department\n" + "".join(f"{k},Nice {k},{k.split('-')[0]}\n" for k in keys)
    )
    common = [
        str(tmp_path / "o.parquet"),
        "--basket-col",
        "order_id",
        "--item-col",
        "product_id",
        "--dim",
        "8",
    ]
    common += ["--epochs", "3", "--deterministic", "--completion", "affinity", "--progress", "none"]
    main(["train", *common, "--names", str(tmp_path / "products.csv"), "-o", str(tmp_path / "named")])
    main(["train", *common, "-o", str(tmp_path / "plain")])
    named, plain = likewise.load(tmp_path / "named"), likewise.load(tmp_path / "plain")
    np.testing.assert_array_equal(np.asarray(named.vectors), np.asarray(plain.vectors))
    assert named.similar("camp-00", k=2).names == [f"Nice {k}" for k in named.similar("camp-00", k=2).keys]
    capsys.readouterr()
    main(["similar", str(tmp_path / "named"), "camp-00", "-k", "2"])
    out = capsys.readouterr().out
    assert "score" in out and "baskets" in out and "Nice camp-" in out
    both = str(tmp_path / "products.csv")
    code = main(["train", *common, "--names", both, "--item-attrs", both, "-o", str(tmp_path / "both")])
    assert code == 1 and "not both" in capsys.readouterr().err
