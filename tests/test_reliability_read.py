"""Reading what others wrote (issue 14, items 8-11): lying ``.npy`` headers, deep or incomplete
manifests, FIFOs, non-finite tables with matching checksums, manifest paths out of the folder, and one
enormous text line. Each case gets a clear error naming the file, in bounded time and memory.

The property tests of every reader (item 15) are in tests/test_reader_fuzz.py.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _saved
import numpy as np
import pytest

from likewise import Embeddings
from likewise.errors import CorruptModelError, InputError

BIG = 10**12  # rows a lying header claims
MEMORY_BOUND = 64 * 2**20  # bytes (traced by tracemalloc, numpy's buffers included) any bad file may cost


def traced_peak(call: Callable[[], Any]) -> tuple[BaseException | None, int]:
    """Run ``call``; return what it raised (or None) and the peak of traced allocations meanwhile."""
    tracemalloc.start()
    try:
        call()
        raised = None
    except BaseException as e:  # noqa: BLE001 - the caller asserts on it
        raised = e
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return raised, peak


def npy_header(shape: tuple[int, ...], descr: str) -> bytes:
    """The bytes of a version 1.0 ``.npy`` header for ``shape`` (no data after it)."""
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
    text += " " * (63 - (10 + len(text)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin1")


@pytest.fixture
def folders(saved_folders: dict[str, Path]) -> dict[str, Path]:
    """One pristine saved folder of each kind (tests/conftest.py); tests copy the one they damage."""
    return saved_folders


def copy_of(folders: dict[str, Path], kind: str, tmp_path: Path) -> Path:
    import shutil

    if kind not in folders:
        pytest.skip(f"no {kind} folder (torch is not installed)")
    return Path(shutil.copytree(folders[kind], tmp_path / kind))


def loader(kind: str, **kw: Any) -> Callable[[Path], Any]:
    """The public reader of a saved folder of ``kind``."""
    if kind in ("space", "retail", "index"):
        return lambda p: Embeddings.load(p, **kw)
    if kind == "corpus":
        from likewise.data.corpus import Corpus

        return lambda p: Corpus.open(p, verify=True)
    if kind == "split":
        from likewise.evaluate import load_split

        return load_split
    from likewise.torch import load_model

    return load_model


# ---- 8: a .npy header claiming 10^12 rows ------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name", "descr", "load"),
    [
        ("space", "counts.npy", "<i8", {}),
        ("space", "counts.npy", "<i8", {"mmap": True}),
        ("space", "vectors.npy", "<f4", {"verify": False}),
        ("corpus", "counts.npy", "<i8", {}),
        ("nexttoken", "hidden.bias.npy", "<f4", {}),
    ],
)
def test_a_npy_header_claiming_a_trillion_rows_is_refused_before_allocating(
    folders: dict[str, Path], tmp_path: Path, kind: str, name: str, descr: str, load: dict
) -> None:
    """The checksum matches (another tool wrote the file): only the header's claim is wrong."""
    folder = copy_of(folders, kind, tmp_path)
    shape = (BIG,) if name != "vectors.npy" else (BIG, 4)
    (folder / name).write_bytes(npy_header(shape, descr) + b"\0" * 64)
    _saved.refresh_entry(folder, name)
    raised, peak = traced_peak(lambda: loader(kind, **load)(folder))
    assert isinstance(raised, CorruptModelError), repr(raised)
    assert name in str(raised) and str(BIG) in str(raised)
    assert peak < MEMORY_BOUND


@pytest.mark.parametrize("binary", [False, True])
def test_a_word2vec_header_claiming_a_trillion_vectors_is_refused(tmp_path: Path, binary: bool) -> None:
    from likewise.data.formats import read_word2vec

    path = tmp_path / "v.bin"
    body = b"a " + np.ones(4, "<f4").tobytes() if binary else b"a 1 2 3 4\n"
    path.write_bytes(f"{BIG} 4\n".encode() + body)
    raised, peak = traced_peak(lambda: read_word2vec(path, binary=binary))
    assert isinstance(raised, CorruptModelError), repr(raised)
    assert str(path) in str(raised) and str(BIG) in str(raised)
    assert peak < MEMORY_BOUND


# ---- 8: a 100k-deep JSON manifest ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("space", "manifest.json"),
        ("space", "keys.json"),
        ("index", "index/manifest.json"),
        ("corpus", "manifest.json"),
        ("corpus", "vocab.json"),
        ("split", "split.json"),
        ("nexttoken", "manifest.json"),
    ],
)
def test_a_100k_deep_json_file_is_refused(
    folders: dict[str, Path], tmp_path: Path, kind: str, name: str
) -> None:
    folder = copy_of(folders, kind, tmp_path)
    (folder / name).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    if name in ("keys.json", "vocab.json"):
        _saved.refresh_entry(folder, name)
    raised, peak = traced_peak(lambda: loader(kind)(folder))
    assert isinstance(raised, CorruptModelError), repr(raised)
    assert str(folder / name) in str(raised) and "deeper than" in str(raised)
    assert peak < MEMORY_BOUND


# ---- 8: an index manifest with missing keys ------------------------------------------------------------


@pytest.mark.parametrize("key", ["fingerprint", "size", "dim", "params", "files"])
def test_an_index_manifest_missing_a_key_names_it(folders: dict[str, Path], tmp_path: Path, key: str) -> None:
    from likewise.index import HnswIndex

    folder = copy_of(folders, "index", tmp_path)
    mpath = folder / "index" / "manifest.json"
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    del manifest[key]
    _saved.rewrite_manifest(mpath, manifest)
    for load in (lambda: HnswIndex.load(folder / "index"), lambda: Embeddings.load(folder)):
        with pytest.raises(CorruptModelError, match=rf"manifest\.json' lacks the field '{key}'"):
            load()


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("params", {"m": 16, "bogus": 1}, "params .* are not valid"),
        ("params", [16], "'params' is \\[16\\], expected an object"),
        ("size", "40", "'size' is '40', expected an integer"),
        ("size", 10**15, "more than the .* bytes of hnsw.bin can hold"),
        ("files", {"hnsw.bin": 3}, "'hnsw.bin' is 3, expected an object"),
    ],
)
def test_an_index_manifest_with_a_wrong_value_names_it(
    folders: dict[str, Path], tmp_path: Path, field: str, value: Any, expected: str
) -> None:
    from likewise.index import HnswIndex

    folder = copy_of(folders, "index", tmp_path)
    mpath = folder / "index" / "manifest.json"
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    manifest[field] = value
    _saved.rewrite_manifest(mpath, manifest)
    with pytest.raises(CorruptModelError, match=expected):
        HnswIndex.load(folder / "index")


# ---- 8: a FIFO in place of a manifest ------------------------------------------------------------------

FIFO_CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    cases = json.loads(sys.argv[1])
    for kind, folder in cases:
        folder = Path(folder)
        try:
            if kind in ("space", "index"):
                from likewise import Embeddings
                Embeddings.load(folder)
            elif kind == "corpus":
                from likewise.data.corpus import Corpus
                Corpus.open(folder)
            elif kind == "split":
                from likewise.evaluate import load_split
                load_split(folder)
            elif kind == "check_target":
                from likewise._targets import check_target
                check_target(folder, overwrite=True)
            else:
                from likewise.torch import load_model
                load_model(folder)
            print(kind, "loaded", flush=True)
        except Exception as e:
            print(kind, type(e).__name__, str(e).replace("\\n", " "), flush=True)
    """
)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_place_of_a_manifest_is_refused_without_blocking(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    """All cases run in one child process; its timeout only guards against a hang (it never decides)."""
    cases = []
    for kind, name in [
        ("space", "manifest.json"),
        ("index", "index/manifest.json"),
        ("corpus", "manifest.json"),
        ("split", "split.json"),
        ("check_target", "manifest.json"),
        ("nexttoken", "manifest.json"),
    ]:
        if kind == "nexttoken" and kind not in folders:
            continue
        folder = copy_of(folders, "space" if kind == "check_target" else kind, tmp_path / kind)
        (folder / name).unlink()
        os.mkfifo(folder / name)
        cases.append((kind, str(folder)))
    try:
        done = subprocess.run(
            [sys.executable, "-c", FIFO_CHILD, json.dumps(cases)], capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"a reader blocked on a FIFO; it had printed: {e.stdout!r}")
    lines = done.stdout.splitlines()
    assert len(lines) == len(cases), done.stderr
    for (kind, folder), line in zip(cases, lines, strict=True):
        assert line.startswith(f"{kind} "), line
        if kind == "check_target":  # a folder whose manifest is a FIFO is not a saved space: not replaced
            assert line.startswith("check_target InputError") and "refusing to overwrite" in line, line
        else:
            assert line.startswith(f"{kind} CorruptModelError") and "FIFO" in line and folder in line, line


# ---- 9: non-finite tables with matching checksums ------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name", "value"),
    [
        ("space", "vectors.npy", np.nan),
        ("space", "vectors.npy", np.inf),
        ("retail", "context.npy", -np.inf),
        ("retail", "customer_vectors.npy", np.nan),
    ],
)
@pytest.mark.parametrize("mmap", [False, True])
def test_non_finite_values_with_a_matching_checksum_are_refused_at_load(
    folders: dict[str, Path], tmp_path: Path, kind: str, name: str, value: float, mmap: bool
) -> None:
    folder = copy_of(folders, kind, tmp_path)
    table = np.load(folder / name)
    table[3, 1] = value
    np.save(folder / name, table)
    _saved.refresh_entry(folder, name)
    with pytest.raises(
        CorruptModelError, match=rf"{name} in .*{folder.name}.*: row 3 \('[^']+'\) holds NaN or inf"
    ):
        Embeddings.load(folder, mmap=mmap)


# ---- ids past a table's end: refused when loading without checksums too (issue 32 item 5) ------------


@pytest.mark.parametrize("verify", [True, False])
@pytest.mark.parametrize(
    ("name", "at", "value", "message"),
    [
        ("ids.npy", 3, 10**6, r"ids\.npy holds id 1000000 at token 3, outside the vocabulary of 5 keys"),
        ("ids.npy", 0, -1, r"ids\.npy holds id -1 at token 0"),
        ("offsets.npy", 2, 0, r"offsets\.npy goes back at sequence 1 \(3 then 0\)"),
    ],
)
def test_a_corpus_with_ids_out_of_range_is_refused_with_or_without_verify(
    folders: dict[str, Path], tmp_path: Path, verify: bool, name: str, at: int, value: int, message: str
) -> None:
    """``verify=False`` skips the checksums, not the cheap checks: before, such a corpus opened and a
    key lookup failed later with a bare IndexError (training with the kernel's own id check)."""
    from likewise.data.corpus import Corpus

    folder = copy_of(folders, "corpus", tmp_path)
    arr = np.load(folder / name)
    arr[at] = value
    np.save(folder / name, arr)
    if verify:
        _saved.refresh_entry(folder, name)  # written by another tool, with checksums to match
    with pytest.raises(CorruptModelError, match=message):
        Corpus.open(folder, verify=verify)


@pytest.mark.parametrize("verify", [True, False])
def test_a_corpus_with_a_customer_past_its_customer_list_is_refused(tmp_path: Path, verify: bool) -> None:
    from likewise.data.corpus import Corpus, build_corpus
    from likewise.readers import InputSpec

    log = tmp_path / "orders.csv"
    log.write_text(
        "order_id,product_id,customer_id\n" + "".join(f"o{i},p{i % 3},c{i % 2}\n" for i in range(8))
    )
    spec = InputSpec(paths=(str(log),), basket_col="order_id", item_col="product_id", user_col="customer_id")
    folder = build_corpus(spec, cache_dir=tmp_path / "cache").path
    users = np.load(folder / "user.npy")
    users[5] = 7
    np.save(folder / "user.npy", users)
    if verify:
        _saved.refresh_entry(folder, "user.npy")
    with pytest.raises(
        CorruptModelError, match=r"user\.npy holds customer 7 at token 5, outside the 2 customers"
    ):
        Corpus.open(folder, verify=verify)


@pytest.mark.parametrize("verify", [True, False])
@pytest.mark.parametrize("name", ["customer_bought_ids.npy", "itemitem_cols.npy", "itemitem_items.npy"])
def test_a_space_with_ids_past_its_table_is_refused_with_or_without_verify(
    folders: dict[str, Path], tmp_path: Path, verify: bool, name: str
) -> None:
    """A saved space's id arrays (what customers bought, the item-item model's rows and columns) are
    range-checked at every load, ``verify=False`` included."""
    folder = copy_of(folders, "retail", tmp_path)
    arr = np.load(folder / name)
    arr[-1] = 10**6
    np.save(folder / name, arr)
    if verify:
        _saved.refresh_entry(folder, name)
    with pytest.raises(
        CorruptModelError, match="customer table .* disagrees|item-item arrays are inconsistent"
    ):
        Embeddings.load(folder, verify=verify)


def test_serve_refuses_a_non_finite_model_at_start(folders: dict[str, Path], tmp_path: Path, capsys) -> None:
    """Before, it loaded and `serve` died drawing the map (a traceback from the linear algebra)."""
    pytest.importorskip("fastapi")
    import uvicorn

    from likewise.cli import main
    from likewise.service.models import ModelSpec, Registry

    folder = copy_of(folders, "space", tmp_path)
    table = np.load(folder / "vectors.npy")
    table[5] = np.nan
    np.save(folder / "vectors.npy", table)
    _saved.refresh_entry(folder, "vectors.npy")
    with pytest.raises(CorruptModelError, match=r"vectors\.npy .*row 5 \('k5'\)"):
        Registry([ModelSpec("m", folder)])
    mp = pytest.MonkeyPatch()
    mp.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("serve started with a broken model"))
    try:
        assert main(["serve", str(folder)]) == 1
    finally:
        mp.undo()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "row 5 ('k5') holds NaN or infinity" in err[0]


def test_update_refuses_a_non_finite_parent(folders: dict[str, Path], tmp_path: Path) -> None:
    from likewise.retail.update import update

    folder = copy_of(folders, "retail", tmp_path)
    log = folders["retail"].parent / "retail.csv"
    context = np.load(folder / "context.npy")
    context[2, 0] = np.nan
    np.save(folder / "context.npy", context)
    _saved.refresh_entry(folder, "context.npy")
    with pytest.raises(CorruptModelError, match=r"context\.npy .*row 2 \('[^']+'\) holds NaN"):
        update(folder, log, tmp_path / "out")
    # a space built in memory without the check (check_finite=False) is refused by update itself
    good = Embeddings.load(folders["retail"])
    parent = Embeddings(good.vectors, good.vocab, config=good.config, meta=good.meta, check_finite=False)
    parent.attach_context(context)
    with pytest.raises(InputError, match=rf"context table row 2 \({good.keys[2]!r}\) holds NaN"):
        update(parent, log, tmp_path / "out2")
    assert not (tmp_path / "out").exists() and not (tmp_path / "out2").exists()


# ---- 10: every path a manifest names stays inside its folder --------------------------------------------


def test_a_next_token_manifest_cannot_name_a_file_outside_the_model(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    """Before, ``"../x.npy"`` (with a matching checksum and shape) was read and loaded as a parameter."""
    from likewise.torch import load_model

    folder = copy_of(folders, "nexttoken", tmp_path)
    mpath = folder / "manifest.json"
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    entry = manifest["tensors"]["hidden.bias"]
    outside = tmp_path / "x.npy"
    os.replace(folder / entry["file"], outside)
    for name in ("../x.npy", str(outside)):
        entry["file"] = name
        _saved.rewrite_manifest(mpath, manifest)
        with pytest.raises(CorruptModelError, match=rf"names the file {name!r}, which is not inside"):
            load_model(folder)
    # a symlink inside the folder that points out of it is refused too
    (folder / "hidden.bias.npy").symlink_to(outside)
    entry["file"] = "hidden.bias.npy"
    _saved.rewrite_manifest(mpath, manifest)
    with pytest.raises(CorruptModelError, match="'hidden.bias.npy', which is not inside"):
        load_model(folder)


def test_a_split_manifest_cannot_name_a_file_outside_the_split(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    from likewise.evaluate import load_split

    folder = copy_of(folders, "split", tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("not yours\n", encoding="utf-8")
    manifest = json.loads((folder / "split.json").read_text(encoding="utf-8"))
    manifest["files"]["../secret.txt"] = {"sha256": "0" * 64, "bytes": 10}
    _saved.rewrite_manifest(folder / "split.json", manifest)
    with pytest.raises(CorruptModelError, match="names the file '../secret.txt', which is not inside"):
        load_split(folder, verify=False)


def test_a_space_file_that_is_a_symlink_out_of_the_folder_is_refused(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    folder = copy_of(folders, "space", tmp_path)
    outside = tmp_path / "vectors.npy"
    os.replace(folder / "vectors.npy", outside)
    (folder / "vectors.npy").symlink_to(outside)
    with pytest.raises(CorruptModelError, match="'vectors.npy', which is not inside"):
        Embeddings.load(folder)


# ---- 11: one enormous line in a small gzip -------------------------------------------------------------


def test_an_enormous_line_is_read_in_bounded_memory_and_cut(tmp_path: Path, monkeypatch) -> None:
    """An 8 M-character line with 64 K-character chunks: memory follows the chunk, not the line.

    (The chunk is made small so the test is quick; the real one is 4 M characters, and the same code
    keeps a 5 GiB line at that.)
    """
    from likewise import readers
    from likewise.readers import InputSpec, iter_text_chunks
    from likewise.readers import text as text_reader

    monkeypatch.setattr(text_reader, "_TEXT_CHUNK_CHARS", 1 << 16)
    n = 2_000_000
    line = " ".join(f"i{j % 1000}" for j in range(n))
    path = tmp_path / "one_line.txt.gz"
    path.write_bytes(gzip.compress((line + "\nlast line\n").encode(), compresslevel=1))
    del line
    lengths: list[int] = []
    firsts: list[str] = []

    def read() -> None:
        for chunk in iter_text_chunks(InputSpec(str(path))):
            lengths.extend(len(s) for s in chunk)
            firsts.extend(s[0] for s in chunk)

    raised, peak = traced_peak(read)
    assert raised is None, repr(raised)
    assert peak < 8 * 2**20  # the line alone is 10 MB of text and 2 M item strings
    cap = getattr(readers, "MAX_SEQUENCE_LENGTH", 10_000)  # getattr: on old code the assertions fail
    assert lengths == [cap] * (n // cap) + [2]
    assert firsts[: n // cap] == [f"i{(k * cap) % 1000}" for k in range(n // cap)] and firsts[-1] == "last"


def test_an_item_without_end_is_an_error_naming_the_line(tmp_path: Path, monkeypatch) -> None:
    from likewise.readers import InputSpec, iter_text_sequences
    from likewise.readers import text as text_reader

    monkeypatch.setattr(text_reader, "_TEXT_CHUNK_CHARS", 1 << 16)
    path = tmp_path / "blob.txt.gz"
    path.write_bytes(gzip.compress(b"a b\n" + b"x" * (1 << 20) + b"\n"))
    with pytest.raises(InputError, match=r"blob.txt.gz line 2: an item longer than 65536 characters"):
        list(iter_text_sequences(InputSpec(str(path))))


def test_long_lines_are_cut_as_word2vec_does_and_training_sees_the_pieces(tmp_path: Path) -> None:
    from likewise import readers
    from likewise.data.corpus import build_corpus
    from likewise.readers import InputSpec

    cap = getattr(readers, "MAX_SEQUENCE_LENGTH", 10_000)  # getattr: on old code the assertion fails
    path = tmp_path / "t.txt"
    path.write_text(" ".join(f"w{j % 50}" for j in range(25_000)) + "\na b\n", encoding="utf-8")
    corpus = build_corpus(InputSpec(str(path)), cache_dir=tmp_path / "cache")
    lengths = np.diff(np.asarray(corpus.offsets)).tolist()
    assert lengths == [cap, cap, 5_000, 2]
