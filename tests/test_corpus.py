"""Compiled corpora: vocab order, trimming, round trip, caching, publishing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from likewise import readers
from likewise._fileio import publish
from likewise.data import corpus as corpus_mod
from likewise.data.corpus import Corpus, build_corpus, corpus_from_sequences
from likewise.data.corpus_build import NPY_HEADER
from likewise.errors import CorruptModelError, InputError, ItemIndexError
from likewise.readers import InputSpec
from likewise.readers import log as log_reader
from likewise.readers import text as text_reader

# counts: b=4, a=3, c=3, d=1, e=1 -> order b, a, c, d, e (ties by key)
SEQS = [["a", "b", "c"], ["b", "a"], ["d"], ["c", "b", "e"], ["a", "c", "b"]]


def write_text(path: Path, seqs: list[list[str]]) -> Path:
    path.write_text("".join(" ".join(s) + "\n" for s in seqs), encoding="utf-8")
    return path


def test_vocab_order_desc_count_ties_by_key(tmp_path: Path) -> None:
    c = corpus_from_sequences(SEQS, tmp_path / "c")
    assert c.vocab.keys == ["b", "a", "c", "d", "e"]
    assert c.vocab.counts.tolist() == [4, 3, 3, 1, 1]
    assert c.keys(0) == ["a", "b", "c"]
    assert c.sequence(0).tolist() == [1, 0, 2]
    assert c.n_sequences == 5 and c.n_tokens == 12
    assert c.offsets.tolist() == [0, 3, 5, 6, 9, 12]


def test_a_set_basket_is_read_in_sorted_order_whatever_the_hash_seed(tmp_path: Path) -> None:
    # A set of strings iterates in hash order, which PYTHONHASHSEED changes from process to process: read
    # sorted, the same baskets compile to the same corpus in every process (and train the same vectors).
    import subprocess
    import sys

    code = (
        "import sys; from likewise.data.corpus import corpus_from_sequences as c; "
        "k = c([set('qwertyuiop'), frozenset(['b', 'a'])], sys.argv[1]); "
        "print(k.keys(0), k.keys(1))"
    )
    out = {
        subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / f"c{seed}")],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True, text=True, check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }  # fmt: skip
    assert out == {f"{sorted('qwertyuiop')} ['a', 'b']\n"}


def test_min_count_drops_tokens_and_empty_sequences(tmp_path: Path) -> None:
    c = corpus_from_sequences(iter(SEQS), tmp_path / "c", min_count=2)
    assert c.vocab.keys == ["b", "a", "c"]
    want = [["a", "b", "c"], ["b", "a"], ["c", "b"], ["a", "c", "b"]]
    assert [c.keys(i) for i in range(c.n_sequences)] == want
    assert c.manifest["dropped_tokens"] == 2
    assert c.manifest["dropped_sequences"] == 1
    assert c.manifest["n_tokens"] == 10 and c.manifest["input_tokens"] == 12


def test_max_items(tmp_path: Path) -> None:
    path = write_text(tmp_path / "s.txt", SEQS)
    c = build_corpus(InputSpec(str(path)), max_items=1, cache_dir=tmp_path / "cache")
    assert c.vocab.keys == ["b"]
    assert [c.keys(i) for i in range(c.n_sequences)] == [["b"]] * 4
    assert c.manifest["dropped_tokens"] == 8 and c.manifest["dropped_sequences"] == 1


def test_everything_dropped_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"min_count=9 .*'b', occurs 4 times"):
        corpus_from_sequences(SEQS, tmp_path / "c", min_count=9)
    with pytest.raises(InputError, match="min_count == 0"):
        corpus_from_sequences(SEQS, tmp_path / "c", min_count=0)
    with pytest.raises(InputError, match="max_items == 0"):
        corpus_from_sequences(SEQS, tmp_path / "c", max_items=0)


def test_sequences_input_validation(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="got the string 'a b c'"):
        corpus_from_sequences(["a b c"], tmp_path / "c")
    with pytest.raises(InputError, match="keys must be str, got int 3"):
        corpus_from_sequences([["a", 3]], tmp_path / "c")  # type: ignore[list-item]
    assert not (tmp_path / "c").exists()
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]  # temp folders removed


def test_round_trip_memory_mapped(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    seqs = [[f"k{int(x)}" for x in rng.zipf(1.5, size=int(rng.integers(1, 20))) % 500] for _ in range(2000)]
    c = corpus_from_sequences((s for s in seqs), tmp_path / "c")
    d = Corpus.open(tmp_path / "c")
    assert isinstance(d.ids, np.memmap) and isinstance(d.offsets, np.memmap)
    assert d.ids.dtype == np.int32 and d.offsets.dtype == np.int64
    np.testing.assert_array_equal(c.ids, d.ids)
    np.testing.assert_array_equal(c.offsets, d.offsets)
    assert c.vocab == d.vocab
    assert [d.keys(i) for i in range(d.n_sequences)] == seqs
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == sorted(
        ["ids.npy", "offsets.npy", "vocab.json", "counts.npy", "manifest.json"]
    )
    plain = np.load(tmp_path / "c" / "ids.npy", allow_pickle=False)
    np.testing.assert_array_equal(plain, d.ids)
    assert d.sequence(-1).tolist() == d.ids[d.offsets[-2] :].tolist()
    with pytest.raises(ItemIndexError, match="sequence 2000 is out of range for a table of 2000 rows"):
        d.sequence(2000)


def test_out_dir_rules(tmp_path: Path) -> None:
    corpus_from_sequences(SEQS, tmp_path / "c")
    again = corpus_from_sequences([["x", "y"]], tmp_path / "c")  # an existing corpus is replaced
    assert again.vocab.keys == ["x", "y"]
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(InputError, match="exists and is not empty"):
        corpus_from_sequences(SEQS, other)
    assert (other / "notes.txt").read_text(encoding="utf-8") == "keep me"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert corpus_from_sequences(SEQS, empty).n_sequences == 5


def test_open_errors(tmp_path: Path) -> None:
    with pytest.raises(CorruptModelError, match="manifest.json is missing|ids.npy is missing"):
        Corpus.open(tmp_path / "nothing")
    corpus_from_sequences(SEQS, tmp_path / "c")
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text(encoding="utf-8"))
    manifest["format_version"] = 99
    (tmp_path / "c" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(CorruptModelError, match="format version 99"):
        Corpus.open(tmp_path / "c")
    manifest["format_version"] = corpus_mod.FORMAT_VERSION
    manifest["n_tokens"] = 5
    (tmp_path / "c" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(CorruptModelError, match="inconsistent"):
        Corpus.open(tmp_path / "c")


# ------------------------------------------------------------------------------------------- caching


def test_cache_reuse_does_not_read_input(tmp_path: Path, monkeypatch) -> None:
    path = write_text(tmp_path / "s.txt", SEQS)
    spec = InputSpec(str(path))
    first = build_corpus(spec, cache_dir=tmp_path / "cache")
    stamp = (first.path / "ids.npy").stat().st_mtime_ns

    def boom(*args, **kwargs):
        raise AssertionError("the input was read again")

    monkeypatch.setattr(readers, "iter_text_chunks", boom)
    monkeypatch.setattr(text_reader, "_open_text", boom)
    second = build_corpus(spec, cache_dir=tmp_path / "cache")
    assert second.path == first.path
    assert (second.path / "ids.npy").stat().st_mtime_ns == stamp
    np.testing.assert_array_equal(first.ids, second.ids)


def test_log_cache_reuse(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "o.csv"
    path.write_text("b,i\n1,x\n2,y\n1,z\n", encoding="utf-8")
    spec = InputSpec(str(path), basket_col="b", item_col="i")
    first = build_corpus(spec, cache_dir=tmp_path / "cache")
    monkeypatch.setattr(readers, "scan_log", lambda *a, **k: pytest.fail("the log was read again"))
    # pass 2 reads the log through the name readers.log imported, so that is the one to replace
    monkeypatch.setattr(log_reader, "iter_log_batches", lambda *a, **k: pytest.fail("the log was read again"))
    assert build_corpus(spec, cache_dir=tmp_path / "cache").path == first.path


def test_cache_invalidated_when_input_changes(tmp_path: Path) -> None:
    path = write_text(tmp_path / "s.txt", SEQS)
    spec = InputSpec(str(path))
    first = build_corpus(spec, cache_dir=tmp_path / "cache")
    write_text(path, SEQS + [["z", "z"]])
    second = build_corpus(spec, cache_dir=tmp_path / "cache")
    assert second.path != first.path
    assert second.keys(second.n_sequences - 1) == ["z", "z"]
    # same size, new mtime: still a new key
    path.write_text(path.read_text(encoding="utf-8").replace("z z", "y y"), encoding="utf-8")
    os.utime(path, ns=(1, 1))
    third = build_corpus(spec, cache_dir=tmp_path / "cache")
    assert third.path not in (first.path, second.path)
    assert third.keys(third.n_sequences - 1) == ["y", "y"]
    # other parameters change the key too
    assert build_corpus(spec, cache_dir=tmp_path / "cache", min_count=2).path != third.path


def test_cache_dir_from_environment(tmp_path: Path, monkeypatch) -> None:
    path = write_text(tmp_path / "s.txt", SEQS)
    monkeypatch.setenv("LIKEWISE_CACHE", str(tmp_path / "envcache"))
    c = build_corpus(InputSpec(str(path)))
    assert c.path.parent == tmp_path / "envcache"


def test_broken_cache_entry_is_rebuilt(tmp_path: Path) -> None:
    path = write_text(tmp_path / "s.txt", SEQS)
    spec = InputSpec(str(path))
    first = build_corpus(spec, cache_dir=tmp_path / "cache")
    (first.path / "ids.npy").unlink()
    again = build_corpus(spec, cache_dir=tmp_path / "cache")
    assert again.path == first.path and again.n_tokens == 12


def test_publish_keeps_existing_folder_when_racing(tmp_path: Path) -> None:
    winner = corpus_from_sequences(SEQS, tmp_path / "final")
    loser_tmp = tmp_path / ".final.tmp-1"
    corpus_from_sequences([["other"]], loser_tmp)
    publish(loser_tmp, tmp_path / "final", replace=False)
    assert not loser_tmp.exists()
    assert Corpus.open(tmp_path / "final").vocab == winner.vocab


# ------------------------------------------------------------------------------------ regressions


def test_out_dir_with_another_manifest_is_never_replaced(tmp_path: Path) -> None:
    saved = tmp_path / "model"
    saved.mkdir()
    manifest = {"format": "likewise.embeddings", "format_version": 1}
    (saved / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (saved / "vectors.npy").write_bytes(b"precious")
    with pytest.raises(
        InputError, match=r"model'? holds a 'likewise.embeddings' folder .*not a likewise corpus"
    ):
        corpus_from_sequences([["x", "y"]], saved)
    assert (saved / "vectors.npy").read_bytes() == b"precious"
    assert json.loads((saved / "manifest.json").read_text(encoding="utf-8")) == manifest
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"junk'? holds a manifest.json that cannot be read"):
        corpus_from_sequences([["x", "y"]], junk)
    assert (junk / "manifest.json").read_text(encoding="utf-8") == "{not json"
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_numpy_string_keys_are_accepted_as_str(tmp_path: Path) -> None:
    baskets = np.array([["a", "b"], ["b", "c"], ["b", "a"]])
    c = corpus_from_sequences(baskets, tmp_path / "c")
    assert c.vocab.keys == ["b", "a", "c"]
    assert all(type(k) is str for k in c.vocab.keys)
    assert [c.keys(i) for i in range(3)] == baskets.tolist()
    mixed = corpus_from_sequences([np.array(["a", "b"]), ["b", "a"]], tmp_path / "m")
    assert mixed.vocab.keys == ["a", "b"] and mixed.vocab.counts.tolist() == [2, 2]


def _flip_byte(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(("name", "at"), [("ids.npy", 0), ("offsets.npy", 8)])
def test_open_verifies_checksums(tmp_path: Path, name: str, at: int) -> None:
    corpus_from_sequences(SEQS, tmp_path / "c")
    _flip_byte(tmp_path / "c" / name, NPY_HEADER + at)  # a data byte: shapes stay valid
    with pytest.raises(CorruptModelError, match=rf"{name} has sha256 .*the manifest expects"):
        Corpus.open(tmp_path / "c")
    assert Corpus.open(tmp_path / "c", verify=False).n_tokens == 12  # opt out: opens unchecked
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text(encoding="utf-8"))
    del manifest["sha256"]
    (tmp_path / "c" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(CorruptModelError, match="manifest.json has no sha256 for ids.npy"):
        Corpus.open(tmp_path / "c")


def test_bit_flipped_cache_entry_is_rebuilt(tmp_path: Path) -> None:
    path = write_text(tmp_path / "s.txt", SEQS)
    spec = InputSpec(str(path))
    first = build_corpus(spec, cache_dir=tmp_path / "cache")
    good_ids = np.array(first.ids)
    _flip_byte(first.path / "ids.npy", NPY_HEADER)
    again = build_corpus(spec, cache_dir=tmp_path / "cache")
    assert again.path == first.path
    np.testing.assert_array_equal(again.ids, good_ids)
    assert Corpus.open(again.path).n_tokens == 12  # verifies


def _ranked_by_sorting_everything(counts: dict[str, int], min_count: int, max_items: int | None, cap: int):
    """The rule ranked_vocab implements, written the direct way: sort every key."""
    ranked = sorted(counts.items(), key=lambda kc: (-kc[1], kc[0]))
    kept = [kc for kc in ranked if kc[1] >= min_count]
    below = [kc for kc in ranked if kc[1] < min_count]
    past = kept[max_items:] if max_items is not None else []
    kept = kept[:max_items] if max_items is not None else kept
    tagged = [(k, c, "max_items") for k, c in past] + [(k, c, "min_count") for k, c in below]
    tagged = sorted(tagged, key=lambda t: (-t[1], t[0]))[:cap]
    return kept, len(below), len(past), sum(c for _, c in below + past), tagged


@pytest.mark.parametrize("max_items", [None, 7])
def test_ranked_vocab_sorts_only_what_it_keeps_and_lists(monkeypatch, max_items) -> None:
    """ranked_vocab (used by the text compiler and Vocab.from_counts) equals sorting every key, also
    when more keys are dropped than Dropped lists (only candidates at or above the cut are sorted)."""
    from likewise.data import vocab as vocab_mod

    monkeypatch.setattr(vocab_mod, "MAX_DROPPED_KEYS", 5)
    rng = np.random.default_rng(0)
    keys = [f"k{i:03d}" for i in rng.permutation(300)]
    counts = np.minimum(rng.zipf(1.6, size=300), 50).astype(np.int64)
    vocab, source = vocab_mod.ranked_vocab(keys, counts, min_count=3, max_items=max_items)
    kept, n_below, n_past, tokens, tagged = _ranked_by_sorting_everything(
        dict(zip(keys, counts.tolist(), strict=True)), 3, max_items, 5
    )
    assert vocab.keys == [k for k, _ in kept] and vocab.counts.tolist() == [c for _, c in kept]
    assert [keys[i] for i in source] == vocab.keys
    d = vocab.dropped
    assert (d.below_min_count, d.past_max_items, d.tokens) == (n_below, n_past, tokens)
    assert list(zip(d.keys, d.counts, d.reasons, strict=True)) == tagged
    assert _same_as_from_counts(dict(zip(keys, counts.tolist(), strict=True)), vocab, max_items)


def _same_as_from_counts(counts: dict[str, int], vocab, max_items) -> bool:
    from likewise.data.vocab import Vocab

    other = Vocab.from_counts(counts, min_count=3, max_items=max_items)
    return other == vocab and other.dropped == vocab.dropped


def test_release_pages_keeps_the_data_and_skips_memory(tmp_path: Path) -> None:
    """release_pages only drops pages of a read-only file map (they are read again on access)."""
    from likewise.data.corpus import release_pages

    c = corpus_from_sequences([[str(i % 50) for i in range(3000)]] * 20, tmp_path / "c")
    ids, before = c.ids, np.array(c.ids)
    release_pages(ids, 0, len(ids))
    release_pages(c.offsets, 0, len(c.offsets))
    release_pages(ids, 10, 5)  # empty range
    assert np.array_equal(ids, before) and c.offsets[-1] == len(ids)
    mem = np.arange(5000, dtype=np.int32)
    release_pages(mem, 0, len(mem))  # in memory: untouched
    assert np.array_equal(mem, np.arange(5000))
    np.save(tmp_path / "w.npy", np.arange(5000, dtype=np.int32))
    writable = np.load(tmp_path / "w.npy", mmap_mode="c")
    writable[:] = 7
    release_pages(writable, 0, len(writable))  # a private writeable map keeps its changes
    assert (writable == 7).all()
