"""The approximate index against exact search (the oracle), its persistence, and the query hook."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from likewise import Embeddings, Row, Vocab
from likewise.cli import main
from likewise.errors import CorruptModelError, InputError, SpaceMismatchError

pytest.importorskip("hnswlib")

from likewise.index import AnnIndex, IndexParams, ann_top_k, build_index, index_folder  # noqa: E402


def clustered(n: int, dim: int, seed: int) -> Embeddings:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim)).astype(np.float32)
    x = centres[rng.integers(0, 40, n)] + 0.7 * rng.standard_normal((n, dim)).astype(np.float32)
    return Embeddings(x, Vocab([f"i{i}" for i in range(n)], counts=np.arange(n, 0, -1)))


@pytest.fixture(scope="module")
def space() -> Embeddings:
    return clustered(4000, 24, seed=0)


@pytest.fixture(scope="module")
def index(space) -> AnnIndex:
    return build_index(
        space, IndexParams(m=16, ef_construction=100, ef_search=64), threads=1, recall_queries=500
    )


def test_build_measures_recall_against_exact(space, index):
    assert index.size == len(space) and index.dim == space.dim
    assert index.fingerprint == space.fingerprint
    assert index.info["recall_queries"] == 500
    assert index.info["recall_at_10"] >= 0.95
    assert index.info["ms_per_query"] > 0


def test_ann_top_k_matches_exact_on_the_same_queries(space, index):
    q = np.arange(0, 4000, 37, dtype=np.int64)
    exact = space.similar([Row(i) for i in q.tolist()], k=10)
    got = ann_top_k(index, space.normed, space.normed[q], 10, np.arange(len(q)), q)
    assert got is not None
    ids, scores = got
    assert ids.shape == (len(q), 10)
    assert not (ids == q[:, None]).any()  # the query itself is excluded
    recall = np.mean([len(np.intersect1d(a, b)) / 10 for a, b in zip(ids, exact.ids, strict=True)])
    assert recall >= 0.95
    # scores are exact cosines of the returned ids, best first
    ref = np.einsum("nkd,nd->nk", space.normed[ids], space.normed[q])
    np.testing.assert_allclose(scores, ref, atol=1e-6)
    assert (np.diff(scores, axis=1) <= 0).all()


def test_queries_use_an_attached_index_and_fall_back_to_exact(space, index):
    emb = Embeddings(space.vectors, space.vocab)
    exact_sim = emb.similar("i5", k=10)
    exact_rec = emb.recommend(["i5", "i6"], k=10)
    emb.attach_index(index)
    assert emb.index is index
    calls = []
    orig = index.search
    index.search = lambda qs, k: calls.append(k) or orig(qs, k)  # type: ignore[method-assign]
    try:
        ann_sim = emb.similar("i5", k=10)
        ann_rec = emb.recommend(["i5", "i6"], k=10)
        assert calls == [11, 12]  # k plus the excluded items
        assert len(set(ann_sim.keys) & set(exact_sim.keys)) >= 9
        assert len(set(ann_rec.keys) & set(exact_rec.keys)) >= 9
        # restrict and 3CosMul always go exact
        r = emb.similar("i5", k=5, restrict=100)
        assert (r.ids < 100).all()
        emb.analogy("i1", "i2", "i3", k=3, method="mul")
        assert calls == [11, 12]
        # k near the table size: the graph cannot answer, exact search does
        big = emb.similar("i5", k=len(emb) - 1)
        assert len(big) == len(emb) - 1 and "i5" not in big.keys
    finally:
        index.search = orig  # type: ignore[method-assign]
    emb.attach_index(None)
    assert emb.index is None


def test_attach_refuses_an_index_of_another_space(index):
    other = clustered(4000, 24, seed=1)
    with pytest.raises(SpaceMismatchError, match="index comes from space"):
        other.attach_index(index)


def test_save_load_beside_the_model(tmp_path, space, index):
    model = tmp_path / "model"
    space.save(model)
    index.save(index_folder(model))
    manifest = json.loads((model / "index" / "manifest.json").read_text())
    assert manifest["library"] == "hnswlib" and manifest["fingerprint"] == space.fingerprint
    assert manifest["recall_at_10"] == index.info["recall_at_10"]
    assert manifest["params"] == {"m": 16, "ef_construction": 100, "ef_search": 64, "seed": 0}
    assert not [p for p in model.iterdir() if p.name.startswith(".")]  # no temp folder left behind

    emb = Embeddings.load(model, mmap=True)
    assert isinstance(emb.index, AnnIndex) and not emb.index.loaded  # the graph is read on first use
    res = emb.similar("i7", k=10)
    assert emb.index.loaded
    np.testing.assert_array_equal(res.ids, space.similar("i7", k=10).ids)
    assert Embeddings.load(model, index=False).index is None

    with pytest.raises(InputError, match="already exists"):
        index.save(index_folder(model))
    index.save(index_folder(model), overwrite=True)


def test_a_stale_index_is_ignored_with_a_warning(tmp_path, space, index):
    model = tmp_path / "model"
    other = clustered(4000, 24, seed=2)
    other.save(model)
    index.save(index_folder(model))  # built on `space`, not on `other`
    with pytest.warns(UserWarning, match="ignoring the index .* exact search"):
        emb = Embeddings.load(model)
    assert emb.index is None
    np.testing.assert_array_equal(emb.similar("i3", k=5).ids, other.similar("i3", k=5).ids)


def test_a_damaged_index_raises(tmp_path, space, index):
    model = tmp_path / "model"
    space.save(model)
    index.save(index_folder(model))
    graph = model / "index" / "hnsw.bin"
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF
    graph.write_bytes(bytes(data))
    with pytest.raises(CorruptModelError, match="sha256"):
        Embeddings.load(model)
    graph.write_bytes(bytes(data[:-10]))
    with pytest.raises(CorruptModelError, match="bytes"):
        Embeddings.load(model, verify=False)


def test_params_are_validated():
    with pytest.raises(InputError, match="ef_search == 1, must be an int >= 2"):
        IndexParams(ef_search=1)


def test_cli_index(tmp_path, space, capsys):
    model = tmp_path / "model"
    space.save(model)
    args = [
        "index",
        str(model),
        "--threads",
        "1",
        "--recall-queries",
        "200",
        "--ef-construction",
        "64",
        "--json",
    ]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["library"] == "hnswlib" and out["items"] == 4000 and out["recall_at_10"] >= 0.95
    assert main(args) == 1
    assert "already exists" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["similar", str(model), "i3", "-k", "3", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["answers"][0]["results"]) == 3
    assert Path(model / "index" / "hnsw.bin").is_file()


def test_one_query_and_a_batch_take_the_same_answer(space, index):
    q = np.array([11, 222, 3333], dtype=np.int64)
    batch = ann_top_k(index, space.normed, space.normed[q], 10, np.arange(3), q)
    assert batch is not None
    for r, i in enumerate(q.tolist()):
        one = ann_top_k(
            index, space.normed, space.normed[i : i + 1], 10, np.zeros(1, np.int64), np.array([i])
        )
        assert one is not None
        np.testing.assert_array_equal(one[0][0], batch[0][r])
        np.testing.assert_allclose(one[1][0], batch[1][r], atol=1e-6)


def _small_model(folder: Path) -> Path:
    clustered(60, 8, seed=5).save(folder)
    return folder


INDEX_ARGS = ["--threads", "1", "--recall-queries", "0", "--overwrite"]


@pytest.mark.parametrize("what", ["notes", "file", "nested"])
def test_index_overwrite_replaces_an_index_only(tmp_path, capsys, what):
    """``likewise index MODEL --overwrite`` replaced whatever ``MODEL/index`` was: a folder of someone's
    notes, a file, or an index holding another saved model went, unasked (issue 32 item 5). Now only a
    likewise index is replaced, and never one that holds a saved folder; the refusal comes before the
    build and names what is in the way."""
    model = _small_model(tmp_path / "model")
    folder = index_folder(model)
    if what == "notes":
        folder.mkdir()
        (folder / "notes.txt").write_text("keep me\n")
    elif what == "file":
        folder.write_text("keep me\n")
    else:
        assert main(["index", str(model), *INDEX_ARGS]) == 0
        # a space moved inside the index (by hand, or saved there before the rule)
        shutil.move(_small_model(tmp_path / "inner"), folder / "inner")
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    capsys.readouterr()
    assert main(["index", str(model), *INDEX_ARGS]) == 1
    err = capsys.readouterr().err
    if what == "nested":
        assert f"refusing to overwrite {str(folder)!r}: it holds another saved likewise folder" in err
    else:
        assert f"refusing to overwrite {str(folder)!r}: it is not a likewise index" in err
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before


def test_an_index_is_saved_in_its_space_but_nowhere_else_inside_a_saved_folder(tmp_path, capsys):
    model = _small_model(tmp_path / "model")
    emb = Embeddings.load(model)
    index = build_index(emb, threads=1, recall_queries=0)
    index.save(index_folder(model))  # its own place, MODEL/index
    for inside in (model / "sub" / "index", model / "index" / "index", model / "other"):
        with pytest.raises(InputError, match="inside .* a saved likewise folder"):
            index.save(inside)
    other = _small_model(tmp_path / "other")
    capsys.readouterr()
    assert main(["index", str(other / "index" / "deeper"), "--threads", "1", "--recall-queries", "0"]) == 1
    assert "inside" in capsys.readouterr().err
