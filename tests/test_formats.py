"""word2vec text/binary byte-exact with gensim, round trips both ways, fastText .vec, Projector files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from likewise import Embeddings, Vocab
from likewise.data.formats import export_projector, read_word2vec, write_word2vec
from likewise.errors import CorruptModelError, InputError

gensim = pytest.importorskip("gensim")
from gensim.models import KeyedVectors  # noqa: E402


@pytest.fixture(scope="module")
def space():
    rng = np.random.default_rng(1)
    keys = [f"w{i}é" for i in range(60)] + ["日本", "a_b"]
    counts = rng.integers(1, 20, len(keys))  # many ties: the stable order matters
    # values over many magnitudes, so the float text is exercised (exponents, short and long digits)
    vecs = (rng.standard_normal((len(keys), 7)) * [1, 1e-6, 1e6, 1, 3, 1e-30, 1]).astype(np.float32)
    vecs[0, 0] = 0.5
    vecs[1, 0] = -0.0
    return Embeddings(vecs, Vocab(keys, counts))


def _gensim_kv(emb: Embeddings) -> KeyedVectors:
    kv = KeyedVectors(emb.dim)
    kv.add_vectors(emb.keys, np.asarray(emb.vectors))
    for k, c in zip(emb.keys, emb.counts.tolist(), strict=True):
        kv.set_vecattr(k, "count", int(c))
    return kv


@pytest.mark.parametrize("binary", [False, True])
def test_we_write_exactly_what_gensim_writes(space, tmp_path, binary):
    _gensim_kv(space).save_word2vec_format(str(tmp_path / "g"), binary=binary)
    write_word2vec(space, tmp_path / "o", binary=binary)
    assert (tmp_path / "o").read_bytes() == (tmp_path / "g").read_bytes()


@pytest.mark.parametrize("binary", [False, True])
def test_gensim_reads_ours_and_we_read_gensims(space, tmp_path, binary):
    write_word2vec(space, tmp_path / "o", binary=binary)
    kv = KeyedVectors.load_word2vec_format(str(tmp_path / "o"), binary=binary)
    order = np.argsort(-space.counts, kind="stable")
    assert kv.index_to_key == [space.keys[i] for i in order]
    np.testing.assert_array_equal(kv.vectors, space.vectors[order])  # float32 exact, text included

    _gensim_kv(space).save_word2vec_format(str(tmp_path / "g"), binary=binary)
    back = read_word2vec(tmp_path / "g")  # format detected
    assert back.keys == kv.index_to_key
    np.testing.assert_array_equal(back.vectors, kv.vectors)
    assert back.meta["source"]["format"] == ("word2vec-binary" if binary else "word2vec")


@pytest.mark.parametrize("binary", [False, True])
def test_file_to_space_to_file_is_byte_identical(space, tmp_path, binary):
    write_word2vec(space, tmp_path / "a", binary=binary)
    imported = read_word2vec(tmp_path / "a", binary=binary)
    assert list(imported.counts) == sorted(imported.counts, reverse=True)  # file order is frequency order
    write_word2vec(imported, tmp_path / "b", binary=binary)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def test_fasttext_vec_and_c_tool_binary_layouts(tmp_path):
    vecs = np.array([[0.5, -1.25], [3.0, 1e-3]], dtype=np.float32)
    # fastText's .vec: the text format with a space before each newline
    (tmp_path / "ft.vec").write_text("2 2\nhello 0.5 -1.25 \nworld 3 0.001 \n", encoding="utf-8")
    emb = read_word2vec(tmp_path / "ft.vec")
    assert emb.keys == ["hello", "world"]
    np.testing.assert_array_equal(emb.vectors, vecs)
    # the C tool writes a newline after each binary vector
    raw = b"2 2\n" + b"".join(
        k.encode() + b" " + v.astype("<f4").tobytes() + b"\n"
        for k, v in zip(["hello", "world"], vecs, strict=True)
    )
    (tmp_path / "c.bin").write_bytes(raw)
    emb = read_word2vec(tmp_path / "c.bin", binary=True)
    assert emb.keys == ["hello", "world"]
    np.testing.assert_array_equal(emb.vectors, vecs)
    kv = KeyedVectors.load_word2vec_format(str(tmp_path / "c.bin"), binary=True)
    np.testing.assert_array_equal(kv.vectors, emb.vectors)


def test_keys_with_whitespace_are_refused_or_replaced(tmp_path):
    emb = Embeddings(np.eye(3, dtype=np.float32), Vocab(["sleeping bag", "tent", "head\tlamp"]))
    with pytest.raises(InputError, match="'sleeping bag'.*replace_space"):
        write_word2vec(emb, tmp_path / "x.txt")
    assert not list(tmp_path.iterdir())  # nothing half-written
    write_word2vec(emb, tmp_path / "x.txt", replace_space="_")
    assert read_word2vec(tmp_path / "x.txt").keys == ["sleeping_bag", "tent", "head_lamp"]
    clash = Embeddings(np.eye(2, dtype=np.float32), Vocab(["a b", "a_b"]))
    with pytest.raises(InputError, match="two keys equal to 'a_b'"):
        write_word2vec(clash, tmp_path / "y.txt", replace_space="_")


def test_damaged_files_are_named(tmp_path):
    (tmp_path / "h").write_text("not a header\n")
    with pytest.raises(CorruptModelError, match="not a 'V D' header"):
        read_word2vec(tmp_path / "h")
    (tmp_path / "t").write_text("3 2\na 1 2\nb 3 4\n")
    with pytest.raises(CorruptModelError, match="unexpected end of file at vector 2 of 3"):
        read_word2vec(tmp_path / "t")
    (tmp_path / "w").write_text("1 3\na 1 2\n")
    with pytest.raises(CorruptModelError, match="2 values, the header says 3"):
        read_word2vec(tmp_path / "w")


def test_limit_reads_the_first_vectors(space, tmp_path):
    write_word2vec(space, tmp_path / "o")
    assert len(read_word2vec(tmp_path / "o", limit=5)) == 5


def test_projector_files(space, tmp_path):
    labels = {space.keys[0]: "x", space.keys[1]: "y"}
    out = export_projector(space, tmp_path / "p", labels=labels)
    tensors = np.loadtxt(out / "tensors.tsv", delimiter="\t", dtype=np.float32)
    np.testing.assert_array_equal(tensors, space.vectors)
    meta = (out / "metadata.tsv").read_text(encoding="utf-8").splitlines()
    assert meta[0] == "item\tlabel\tcount"
    assert meta[1] == f"{space.keys[0]}\tx\t{space.counts[0]}"
    assert meta[3] == f"{space.keys[2]}\t\t{space.counts[2]}"
    assert len(meta) == len(space) + 1
    config = json.loads((out / "projector_config.json").read_text())
    assert config["embeddings"][0]["tensorShape"] == [len(space), space.dim]
    assert config["embeddings"][0]["tensorPath"] == "tensors.tsv"
    # one column: no header row (the projector's rule)
    single = export_projector(space, tmp_path / "q", counts=False)
    assert (single / "metadata.tsv").read_text(encoding="utf-8").splitlines() == space.keys
    with pytest.raises(InputError, match="already exists"):
        export_projector(space, tmp_path / "q")


@pytest.mark.parametrize(
    ("name", "binary"),
    [
        ("lee_fasttext.vec", False),  # written by fastText
        ("crime-and-punishment.vec", False),
        ("pang_lee_polarity_fasttext.vec", False),  # fastText, with keys that are not UTF-8
        ("euclidean_vectors.bin", True),
        ("high_precision.kv.txt", False),
        ("high_precision.kv.bin", True),
    ],
)
def test_files_shipped_with_gensim_read_as_gensim_reads_them(name, binary):
    from gensim.test.utils import datapath

    kv = KeyedVectors.load_word2vec_format(datapath(name), binary=binary, unicode_errors="replace")
    emb = read_word2vec(datapath(name), unicode_errors="replace")  # text or binary detected
    assert emb.keys == kv.index_to_key
    np.testing.assert_array_equal(emb.vectors, kv.vectors)
    assert emb.meta["source"]["format"] == ("word2vec-binary" if binary else "word2vec")


def test_keys_that_are_not_utf8_are_named():
    from gensim.test.utils import datapath

    with pytest.raises(CorruptModelError, match="not UTF-8.*--unicode-errors replace"):
        read_word2vec(datapath("pang_lee_polarity_fasttext.vec"))


def test_library_writers_refuse_to_replace_a_file_unless_told(tmp_path):
    """write_word2vec and write_audience replace an existing file only with overwrite=True, as the
    command line needs --overwrite; gensim's save_word2vec_format name replaces it, as gensim does."""
    import likewise
    from likewise.data.formats import write_word2vec
    from likewise.retail.queries import write_audience
    from likewise.space.results import Neighbours

    emb = likewise.Embeddings(np.eye(3, dtype=np.float32), likewise.Vocab(["a", "b", "c"], [3, 2, 1]))
    out = tmp_path / "v.txt"
    out.write_text("keep")
    with pytest.raises(likewise.InputError, match="overwrite=True"):
        write_word2vec(emb, out)
    assert out.read_text() == "keep"
    write_word2vec(emb, out, overwrite=True)
    assert out.read_text().startswith("3 3\n")
    emb.save_word2vec_format(str(out))  # gensim's name, gensim's behaviour
    res = Neighbours(["c1", "c2"], np.array([0, 1]), np.array([0.9, 0.5], dtype=np.float32))
    csv = tmp_path / "a.csv"
    csv.write_text("keep")
    with pytest.raises(likewise.InputError, match="overwrite=True"):
        write_audience(res, csv)
    assert csv.read_text() == "keep" and write_audience(res, csv, overwrite=True) == 2
