"""Property tests of every reader (issue 14, item 15): arbitrary bytes give a result or a
:class:`~likewise.errors.LikewiseError`, never another exception, a hang or unbounded memory.

Readers: text (plain, gzip, bz2, zstd; whitespace or a delimiter), CSV/TSV, Parquet and JSON Lines
logs (through ``build_corpus``, which scans, groups and compiles them), word2vec text and binary, and
the manifests and files of every saved folder (space, retail space with context and customers, index,
corpus, split, next-token model). Inputs are arbitrary bytes, and valid files mutated (bytes set,
inserted, deleted, repeated, cut; JSON values replaced or removed, fields given values of another type;
a file's checksum then made to match, so the parser behind the checksum is reached too).

Every call runs under two guards: traced memory (tracemalloc, numpy's buffers included) must stay
under ``MEMORY_BOUND``, and a per-call alarm of ``HANG_SECONDS`` turns a hang into a failure (a guard
only: a call takes milliseconds). A further property checks that the text reader cuts lines exactly as
a whole-file reference does, whatever the chunk size.

The CI budget is small and fixed (``EXAMPLES``, derandomized so every run tries the same inputs); a
longer run (a new random set each time)::

    LIKEWISE_FUZZ_EXAMPLES=2000 python -m pytest tests/test_reader_fuzz.py   # ~20 min on 2 cores
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import os
import shutil
import signal
import tempfile
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import _saved
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from likewise import Embeddings, Vocab, readers
from likewise.errors import LikewiseError
from likewise.readers import InputSpec, iter_text_sequences

MAX_SEQUENCE_LENGTH = getattr(readers, "MAX_SEQUENCE_LENGTH", 10_000)  # getattr: runs on the old code too

# damaged folders rightly warn (an index of another space is ignored, numpy meets an odd header)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

LONG_RUN = "LIKEWISE_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("LIKEWISE_FUZZ_EXAMPLES", "25"))
MEMORY_BOUND = 64 * 2**20
HANG_SECONDS = 60


def fuzz(factor: float = 1.0) -> settings:
    return settings(
        max_examples=max(1, int(EXAMPLES * factor)),
        deadline=None,
        derandomize=not LONG_RUN,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


class Hang(Exception):
    """A reader ran past the hang guard."""


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """Fail on a hang (an alarm) or on traced memory over :data:`MEMORY_BOUND`."""
    alarm = hasattr(signal, "setitimer")
    if alarm:

        def ring(signum: int, frame: Any) -> None:
            raise Hang(f"a reader ran for over {HANG_SECONDS} s")

        old = signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    tracemalloc.start()
    try:
        yield
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    assert peak < MEMORY_BOUND, f"a reader allocated {peak} bytes"


def read_or_refuse(call: Callable[[], Any]) -> Any:
    """``call()``'s result, or None when it raised a LikewiseError; anything else fails the test."""
    with guarded():
        try:
            return call()
        except LikewiseError:
            return None


# ---- strategies ----------------------------------------------------------------------------------------

INTERESTING = [
    b"\n",
    b"\r\n",
    b"\r",
    b"\x00",
    b",",
    b"\t",
    b'"',
    b"\xff",
    b"\xc3",
    b"[" * 300,
    b"{" * 300,
    b"1e999",
    b"NaN",
    b"-1",
    b"99999999999999999999",
    b" " * 64,
    b"\x93NUMPY",
    b"PAR1",
]


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` with a few random edits: bytes set, inserted, deleted, repeated, or the end cut."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["set", "insert", "delete", "repeat", "cut"]))
        pos = draw(st.integers(0, len(data)))
        if op == "set" and data:
            data[min(pos, len(data) - 1)] = draw(st.integers(0, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from(INTERESTING) | st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 32))]
        elif op == "repeat":
            data[pos:pos] = data[pos : pos + draw(st.integers(1, 32))] * draw(st.integers(1, 40))
        else:
            del data[pos:]
    return bytes(data)


def bytes_like(seed: bytes) -> st.SearchStrategy[bytes]:
    """Arbitrary bytes, or ``seed`` mutated (which gets past magic numbers and headers)."""
    return st.binary(max_size=512) | mutated(seed) | mutated(seed)


def pack(data: bytes, suffix: str) -> bytes:
    if suffix.endswith(".gz"):
        return gzip.compress(data, mtime=0)
    if suffix.endswith(".bz2"):
        return bz2.compress(data)
    if suffix.endswith(".zst"):
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    return data


# ---- text ----------------------------------------------------------------------------------------------

TEXT_SEED = "a b c\nb c d\n\ntent stove, lamp\n日本 ü\r\nlast".encode()


@st.composite
def text_file(draw: st.DrawFn) -> tuple[str, bytes]:
    """A file name's suffix and its bytes: raw bytes, bytes packed, or packed and then damaged."""
    suffix = draw(st.sampled_from([".txt", ".txt.gz", ".txt.bz2", ".txt.zst"]))
    data = draw(bytes_like(TEXT_SEED))
    how = draw(st.sampled_from(["raw", "packed", "damaged"]))
    if how == "raw":  # for a compressed suffix: not a container at all
        return suffix, data
    if how == "packed":
        return suffix, pack(data, suffix)
    # damaged: a longer stream (so the edits land in compressed blocks, not only in the header)
    return suffix, draw(mutated(pack(data * 64, suffix)))


@fuzz(3)
@given(file=text_file(), delimiter=st.sampled_from([None, ",", "||"]))
def test_text_gives_sequences_or_an_input_error(file: tuple[str, bytes], delimiter: Any) -> None:
    suffix, data = file
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"in{suffix}"
        path.write_bytes(data)
        out = read_or_refuse(lambda: list(iter_text_sequences(InputSpec(str(path), delimiter=delimiter))))
    if out is not None:
        assert out and all(0 < len(s) <= MAX_SEQUENCE_LENGTH for s in out)
        assert all(isinstance(k, str) and k and k == k.strip() for s in out for k in s)


def reference_sequences(text: str, delimiter: str | None, cap: int) -> list[list[str]]:
    """What reading the whole file at once gives: universal newlines, split, cut every ``cap`` items."""
    out = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        items = line.split() if delimiter is None else [t.strip() for t in line.split(delimiter) if t.strip()]
        out.extend(items[i : i + cap] for i in range(0, len(items), cap))
    return out


@fuzz(3)
@given(
    text=st.text(st.sampled_from(list("ab|, \t\r\n\x0bé")), max_size=120),
    delimiter=st.sampled_from([None, ",", "||", "a|"]),
    chunk=st.integers(1, 9),
    cap=st.integers(1, 4),
)
def test_text_is_cut_as_the_whole_file_reference_whatever_the_chunks(
    text: str, delimiter: Any, chunk: int, cap: int
) -> None:
    from likewise.readers import text as text_reader

    want = reference_sequences(text, delimiter, cap)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "in.txt"
        path.write_bytes(text.encode())
        with (
            mock.patch.object(text_reader, "_TEXT_CHUNK_CHARS", chunk),
            mock.patch.object(text_reader, "MAX_SEQUENCE_LENGTH", cap),
        ):
            got = read_or_refuse(lambda: list(iter_text_sequences(InputSpec(str(path), delimiter=delimiter))))
    assert got == (want or None)  # None: an input with no item is an InputError


# ---- logs: CSV / TSV, JSON Lines, Parquet --------------------------------------------------------------

CSV_SEED = b'b,i,t\no1,p1,1\no1,p2,2\n"o,2",p1,3\no2,"p""3",4\n'
JSONL_SEED = b'{"b": "o1", "i": "p1", "t": 1}\n{"b": "o1", "i": "p2", "t": 2}\n{"b": 2, "i": "p1", "t": 3}\n'


def parquet_seed(kind: str) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if kind == "strings":
        table = pa.table({"b": ["o1", "o1", "o2"], "i": ["p1", "p2", "p1"], "t": [1, 2, 3]})
    else:
        table = pa.table({"b": [1, 1, 2], "i": [1.5, 2.5, 1.5], "t": pa.array([3, 1, 2], pa.timestamp("s"))})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


CELL = st.text(st.sampled_from(list('ab1,"\n \t\r')), max_size=4)
ROWS = st.lists(st.tuples(CELL, CELL, CELL), max_size=6)


def csv_of(rows: list[tuple[str, str, str]], sep: str) -> bytes:
    return ("b,i,t\n".replace(",", sep) + "".join(sep.join(r) + "\n" for r in rows)).encode()


def build_log(path: Path, ordered: bool) -> Any:
    from likewise.data.corpus import build_corpus

    spec = InputSpec(str(path), basket_col="b", item_col="i", order_col="t" if ordered else None)
    return build_corpus(spec, cache_dir=path.parent / "cache")


@fuzz(2)
@given(
    data=bytes_like(CSV_SEED) | ROWS.map(lambda r: csv_of(r, ",")),
    suffix=st.sampled_from([".csv", ".csv.gz"]),
    ordered=st.booleans(),
)
def test_csv_gives_a_corpus_or_an_input_error(data: bytes, suffix: str, ordered: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"log{suffix}"
        path.write_bytes(pack(data, suffix))
        read_or_refuse(lambda: build_log(path, ordered))


@fuzz(1)
@given(
    data=bytes_like(CSV_SEED.replace(b",", b"\t")) | ROWS.map(lambda r: csv_of(r, "\t")),
    ordered=st.booleans(),
)
def test_tsv_gives_a_corpus_or_an_input_error(data: bytes, ordered: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.tsv"
        path.write_bytes(data)
        read_or_refuse(lambda: build_log(path, ordered))


JSON_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=6)
    | st.sampled_from(["", "../x.npy", "/etc/passwd", "manifest.json", "float32", "likewise.embeddings"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
JSONL_RECORDS = st.lists(
    st.dictionaries(st.sampled_from(["b", "i", "t", "x"]), JSON_VALUE, max_size=4) | JSON_VALUE, max_size=5
).map(lambda rows: "".join(json.dumps(r) + "\n" for r in rows).encode())


@fuzz(2)
@given(data=bytes_like(JSONL_SEED) | JSONL_RECORDS, ordered=st.booleans())
def test_jsonl_gives_a_corpus_or_an_input_error(data: bytes, ordered: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.jsonl"
        path.write_bytes(data)
        read_or_refuse(lambda: build_log(path, ordered))


@fuzz(2)
@given(data=bytes_like(parquet_seed("strings")) | mutated(parquet_seed("typed")), ordered=st.booleans())
def test_parquet_gives_a_corpus_or_an_input_error(data: bytes, ordered: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.parquet"
        path.write_bytes(data)
        read_or_refuse(lambda: build_log(path, ordered))


# ---- word2vec text and binary --------------------------------------------------------------------------


def word2vec_seed(binary: bool) -> bytes:
    from likewise.data.formats import write_word2vec

    emb = Embeddings(
        np.arange(12, dtype=np.float32).reshape(4, 3) / 7, Vocab(["a", "b", "日本", "d"], [4, 3, 2, 1])
    )
    with tempfile.TemporaryDirectory() as tmp:
        return write_word2vec(emb, Path(tmp) / "v", binary=binary).read_bytes()


def with_header(seed: bytes) -> st.SearchStrategy[bytes]:
    """``seed`` (a word2vec file) with its "V D" header replaced by any two integers."""
    body = seed.split(b"\n", 1)[1]
    sizes = st.integers(-3, 10**13) | st.integers(0, 10)
    return st.tuples(sizes, sizes).map(lambda vd: f"{vd[0]} {vd[1]}\n".encode() + body)


@fuzz(3)
@given(
    data=bytes_like(word2vec_seed(False))
    | mutated(word2vec_seed(True))
    | with_header(word2vec_seed(False))
    | with_header(word2vec_seed(True)),
    binary=st.sampled_from([None, False, True]),
    limit=st.sampled_from([None, 2]),
)
def test_word2vec_gives_a_space_or_an_error(data: bytes, binary: Any, limit: Any) -> None:
    from likewise.data.formats import read_word2vec

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.bin"
        path.write_bytes(data)
        emb = read_or_refuse(
            lambda: read_word2vec(path, binary=binary, limit=limit, unicode_errors="replace")
        )
    if emb is not None:
        assert np.isfinite(emb.vectors).all() and len(emb.keys) == len(emb.vectors)


# ---- manifests and the files they list -----------------------------------------------------------------

KINDS = ["space", "retail", "index", "corpus", "split", "nexttoken"]


@pytest.fixture
def pristine(saved_folders: dict[str, Path]) -> dict[str, Path]:
    """One pristine saved folder of each kind (tests/conftest.py); each example works on a copy."""
    return saved_folders


def load(kind: str, folder: Path) -> Any:
    """Read ``folder`` as a user would, and use what was read once."""
    if kind in ("space", "retail", "index"):
        emb = Embeddings.load(folder)
        if emb.index is not None:
            emb.index.warm()
        return emb.similar(emb.keys[0], k=3) if len(emb) else emb
    if kind == "corpus":
        from likewise.data.corpus import Corpus

        return Corpus.open(folder, verify=True)
    if kind == "split":
        from likewise.evaluate import load_split

        return load_split(folder)
    from likewise.torch import load_model, predict_next

    model = load_model(folder)
    return predict_next(model, [model.vocab.keys[-1]], k=1)


@st.composite
def json_edit(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one node replaced by any JSON value, or one object key removed."""
    if isinstance(value, dict) and value and draw(st.integers(0, 3)):
        key = draw(st.sampled_from(sorted(value)))
        out = dict(value)
        if draw(st.integers(0, 4)) == 0:
            del out[key]
        else:
            out[key] = draw(json_edit(value[key]))
        return out
    if isinstance(value, list) and value and draw(st.integers(0, 3)):
        i = draw(st.integers(0, len(value) - 1))
        return [*value[:i], draw(json_edit(value[i])), *value[i + 1 :]]
    return draw(JSON_VALUE)


SWAPS = [None, True, 0, -1, 1.5, 10**12, "", "x", "../x.npy", [], [1], {}, {"a": 1}, float("nan")]


@st.composite
def field_swap(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one field (at any depth of objects) given a value of another type."""
    if isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        inner = value[key]
        deeper = isinstance(inner, dict) and inner and draw(st.booleans())
        return {**value, key: draw(field_swap(inner)) if deeper else draw(st.sampled_from(SWAPS))}
    return draw(st.sampled_from(SWAPS))


def manifests(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if p.name in ("manifest.json", "split.json"))


def listed_files(folder: Path) -> list[Path]:
    """Every file but the manifests: arrays, keys, the graph, the split's text files."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p not in manifests(folder))


def refresh(path: Path) -> None:
    """Make the manifest that lists ``path`` agree with its new bytes (size, checksum, shape)."""
    with contextlib.suppress(Exception):  # the file may no longer parse as what it was; that is the point
        _saved.refresh_entry(path.parent, path.name)


@pytest.mark.parametrize("kind", KINDS)
def test_manifest_edits_give_a_result_or_a_likewise_error(pristine: dict[str, Path], kind: str) -> None:
    if kind not in pristine:
        pytest.skip("torch is not installed")

    @fuzz(1.5)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(shutil.copytree(pristine[kind], Path(tmp) / kind))
            mpath = data.draw(st.sampled_from(manifests(folder)))
            original = json.loads(mpath.read_text(encoding="utf-8"))
            how = data.draw(st.sampled_from(["edit", "edit", "swap", "bytes"]))
            if how == "bytes":
                edited = data.draw(bytes_like(mpath.read_bytes()))
            else:
                edit = json_edit(original) if how == "edit" else field_swap(original)
                edited = json.dumps(data.draw(edit), allow_nan=True).encode()
            mpath.write_bytes(edited)
            read_or_refuse(lambda: load(kind, folder))

    run()


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_files_with_matching_checksums_give_a_result_or_a_likewise_error(
    pristine: dict[str, Path], kind: str
) -> None:
    if kind not in pristine:
        pytest.skip("torch is not installed")

    @fuzz(1.5)
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(shutil.copytree(pristine[kind], Path(tmp) / kind))
            path = data.draw(st.sampled_from(listed_files(folder)))
            raw = path.read_bytes()
            if path.suffix == ".npy" and data.draw(st.booleans()):  # most of the edits in the header
                head, tail = raw[:128], raw[128:]
                raw = data.draw(mutated(head)) + tail
            else:
                raw = data.draw(bytes_like(raw))
            path.write_bytes(raw)
            if data.draw(st.integers(0, 3)):
                refresh(path)
            read_or_refuse(lambda: load(kind, folder))

    run()


# free-form objects a reader stores without reading inside (a space's config and meta, a model's history)
FREE_FORM = {"meta", "history", "config", "input", "description", "dropped_keys"}


def field_paths(value: Any, free: set[str], depth: int = 2) -> list[tuple[str, ...]]:
    """The key paths of the objects in ``value``, down to ``depth`` levels, not inside ``free`` keys."""
    if not isinstance(value, dict) or depth == 0:
        return []
    out = []
    for key, inner in value.items():
        out.append((key,))
        if key not in free:
            out.extend((key, *rest) for rest in field_paths(inner, free, depth - 1))
    return out


def replaced(value: dict, path: tuple[str, ...], new: Any) -> dict:
    """A copy of ``value`` with the field at ``path`` set to ``new`` (removed when ``new`` is REMOVE)."""
    out = dict(value)
    if len(path) > 1:
        out[path[0]] = replaced(value[path[0]], path[1:], new)
    elif new is REMOVE:
        del out[path[0]]
    else:
        out[path[0]] = new
    return out


class _Remove:
    def __repr__(self) -> str:
        return "<removed>"


REMOVE = _Remove()


@pytest.mark.parametrize("kind", KINDS)
def test_every_manifest_field_removed_or_of_every_wrong_type(
    pristine: dict[str, Path], kind: str, tmp_path
) -> None:
    """Not random: each field, two levels deep, removed and given each value of :data:`SWAPS` in turn."""
    if kind not in pristine:
        pytest.skip("torch is not installed")
    folder = Path(shutil.copytree(pristine[kind], tmp_path / kind))
    own = {"index": "index/manifest.json", "split": "split.json"}.get(kind, "manifest.json")
    for mpath in [folder / own]:  # the space inside an index or a next-token model is tested as "space"
        original = json.loads(mpath.read_text(encoding="utf-8"))
        free = FREE_FORM - {"config"} if kind == "nexttoken" else FREE_FORM  # its config is read
        for path in field_paths(original, free):
            for new in [REMOVE, *SWAPS] if len(path) == 1 else [REMOVE, None, "x", -1, [1], {}]:
                mpath.write_text(json.dumps(replaced(original, path, new)), encoding="utf-8")
                try:
                    read_or_refuse(lambda: load(kind, folder))
                except BaseException as e:
                    raise AssertionError(f"{mpath.name}: {'.'.join(path)} = {new!r}: {e!r}") from e
        mpath.write_text(json.dumps(original), encoding="utf-8")


# ---- what the fuzzers found, kept as plain tests ---------------------------------------------------------


def test_a_jsonl_row_that_is_null_is_an_input_error_not_a_crash(tmp_path: Path) -> None:
    """pyarrow's JSON reader dies (SIGSEGV) on a block starting with a ``null`` row: run it in a child."""
    import subprocess
    import sys

    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"b": "o1", "i": "p1"}\n' * 3 + b"  null \r\n" + b'{"b": "o2", "i": "p2"}\n')
    code = (
        "import sys\n"
        "from likewise.data.corpus import build_corpus\n"
        "from likewise.errors import InputError\n"
        "from likewise.readers import InputSpec\n"
        "try:\n"
        "    build_corpus(InputSpec(sys.argv[1], basket_col='b', item_col='i'), cache_dir=sys.argv[2])\n"
        "except InputError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"the reader died with status {done.returncode}: {done.stderr[-2000:]}"
    assert done.stdout.strip() == f"{path} line 4 is null; each line of JSON Lines must be an object"


def test_parquet_text_that_is_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    """Parquet does not check its string columns; before, ``to_pylist`` raised UnicodeDecodeError."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from likewise.data.corpus import build_corpus

    items = pa.array([b"p1", b"\x80\xff", b"p2"], pa.binary()).view(pa.string())
    pq.write_table(pa.table({"b": ["o1", "o1", "o2"], "i": items}), tmp_path / "log.parquet")
    with pytest.raises(
        LikewiseError, match=r"'i' values in .*log.parquet at data rows 1 to 3 are not all UTF-8"
    ):
        build_corpus(
            InputSpec(str(tmp_path / "log.parquet"), basket_col="b", item_col="i"), cache_dir=tmp_path / "c"
        )


def test_a_csv_header_that_is_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    from likewise.data.corpus import build_corpus

    (tmp_path / "log.csv").write_bytes(b"\x80,i\no1,p1\n")
    with pytest.raises(LikewiseError, match=r"cannot read .*log.csv as CSV"):
        build_corpus(
            InputSpec(str(tmp_path / "log.csv"), basket_col="b", item_col="i"), cache_dir=tmp_path / "c"
        )


def test_an_index_graph_with_a_neighbour_out_of_range_is_refused(
    saved_folders: dict[str, Path], tmp_path
) -> None:
    """hnswlib follows the ids in its file: before, a search on this graph killed the process (SIGSEGV).

    The checksum is made to match, as another tool writing the file would; run in a child process.
    """
    import struct
    import subprocess
    import sys

    folder = Path(shutil.copytree(saved_folders["index"], tmp_path / "index"))
    graph = folder / "index" / "hnsw.bin"
    raw = bytearray(graph.read_bytes())
    count, per_element = struct.unpack_from("<QQ", raw, 16)
    for i in range(count):  # every neighbour of every element points far past the end
        at = 96 + i * per_element
        n = struct.unpack_from("<H", raw, at)[0]
        struct.pack_into(f"<{n}I", raw, at + 4, *([2_000_000_000] * n))
    graph.write_bytes(bytes(raw))
    _saved.refresh_entry(folder / "index", "hnsw.bin")
    code = (
        "import sys\n"
        "from likewise import Embeddings\n"
        "from likewise.errors import CorruptModelError\n"
        "try:\n"
        "    emb = Embeddings.load(sys.argv[1])\n"
        "    print(emb.similar('k0', k=3).keys)\n"
        "except CorruptModelError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"the search died with status {done.returncode}: {done.stderr[-2000:]}"
    assert "is not a valid hnswlib graph" in done.stdout and "neighbour list out of range" in done.stdout


# --- attribute tables (issue 34): every Arrow type a Parquet file can hold ---------------------------

_ATTR_KINDS = st.sampled_from(["list", "struct", "binary", "float_nan", "huge", "unicode", "empty", "int"])


def _attr_column(kind: str, n: int, draw):
    import pyarrow as pa

    text = st.text(min_size=0, max_size=40)
    rows = {"min_size": n, "max_size": n}
    if kind == "list":
        return pa.array(draw(st.lists(st.one_of(st.none(), st.lists(text, max_size=5)), **rows)))
    if kind == "struct":
        return pa.array([{"x": draw(st.integers(0, 9))} for _ in range(n)])
    if kind == "binary":
        return pa.array(draw(st.lists(st.binary(max_size=20), **rows)), pa.binary())
    if kind == "float_nan":
        return pa.array(draw(st.lists(st.one_of(st.floats(), st.none()), **rows)), pa.float64())
    if kind == "huge":
        return pa.array(["w " * draw(st.integers(0, 30_000)) for _ in range(n)])
    if kind == "unicode":
        return pa.array(draw(st.lists(st.one_of(st.none(), text), **rows)), pa.string())
    if kind == "empty":
        return pa.array([None] * n, pa.string())
    return pa.array(draw(st.lists(st.integers(-(2**62), 2**62), **rows)), pa.int64())


@fuzz(0.6)
@given(data=st.data())
def test_attribute_tables_read_or_fail_clearly(data, tmp_path_factory):
    """Any attribute table reads into capped tokens, or fails with one InputError; nothing else."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from likewise.errors import InputError
    from likewise.readers.attrs import MAX_ITEM_TOKENS, MAX_VALUE_CHARS, read_item_attributes

    n = data.draw(st.integers(1, 6))
    kinds = data.draw(st.lists(_ATTR_KINDS, min_size=1, max_size=4))
    table = {"item": pa.array([f"i{j}" for j in range(n)])}
    for c, kind in enumerate(kinds):
        table[f"c{c}_{kind}"] = _attr_column(kind, n, data.draw)
    path = tmp_path_factory.mktemp("attrs") / "a.parquet"
    pq.write_table(pa.table(table), path)
    with guarded():
        try:
            got = read_item_attributes(path)
        except InputError as e:
            assert "\n" not in str(e) and str(path) in str(e)
            return
    assert len(got.keys) == n
    for tokens in got.tokens:
        assert len(tokens) <= MAX_ITEM_TOKENS
        assert all(len(t.split("=", 1)[1]) <= MAX_VALUE_CHARS for t in tokens)


# --- label, seed, analogy and word-pair files (issues 32 and 34) ------------------------------------------

LABELS_SEED = "# labels\ntent\toutdoor\nkettle\tkitchen\n\n日本\tplace\n#x\ty\n".encode()
LABEL_TABLE_SEED = b'item,label\ntent,outdoor\n"ket,tle",kitchen\nmug,\n'
SEEDS_SEED = b"customer_id\nC1\nC2\n\n# note\nC3\r\n"


def keyed_parquet(data: st.DataObject, key_name: str, width: int) -> bytes:
    """A Parquet file whose key column and other columns are of any kind the attribute fuzzer draws."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = data.draw(st.integers(0, 5))
    kinds = data.draw(st.lists(_ATTR_KINDS | st.just("keys"), min_size=width, max_size=width + 1))
    keys = st.one_of(st.none(), st.text(max_size=8), st.sampled_from(["", "a\nb", "x" * 70_000]))
    columns = {}
    for c, kind in enumerate(kinds):
        if kind == "keys":
            columns[f"c{c}"] = pa.array(data.draw(st.lists(keys, min_size=n, max_size=n)), pa.string())
        else:
            columns[f"c{c}"] = _attr_column(kind, n, data.draw)
    names = list(columns)
    names[0] = key_name
    sink = io.BytesIO()
    pq.write_table(pa.table(list(columns.values()), names=names), sink)
    return sink.getvalue()


def keyed_file(data: st.DataObject, seeds: list[bytes], key_name: str, width: int) -> tuple[str, bytes]:
    """A file name's suffix (any: the format is told by content) and its bytes."""
    suffix = data.draw(st.sampled_from([".tsv", ".csv", ".txt", ".parquet", ".jsonl", ".dat", ".tsv.gz"]))
    how = data.draw(st.sampled_from(["bytes", "bytes", "parquet"]))
    if how == "parquet":
        raw = keyed_parquet(data, key_name, width)
        return suffix, data.draw(st.just(raw) | mutated(raw))
    raw = data.draw(st.sampled_from(seeds))
    return suffix, pack(data.draw(bytes_like(raw)), suffix)


def one_line_error(call: Callable[[], Any], path: Path) -> Any:
    """``call()``'s result; or, when it raised an InputError, None after checking the message is one line
    naming the file. Anything else fails the test."""
    from likewise.errors import InputError

    with guarded():
        try:
            return call()
        except InputError as e:
            assert "\n" not in str(e) and str(path) in str(e), str(e)
            return None


@fuzz(2)
@given(data=st.data(), column=st.sampled_from([None, "c1", "label"]))
def test_label_files_read_or_fail_clearly(data: st.DataObject, column: Any) -> None:
    from likewise.evaluate import read_labels

    suffix, raw = keyed_file(data, [LABELS_SEED, LABEL_TABLE_SEED], "item", 2)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"labels{suffix}"
        path.write_bytes(raw)
        got = one_line_error(lambda: read_labels(path, label_col=column), path)
    if got is not None:
        assert got and all(isinstance(k, str) and k and "\n" not in k and "\r" not in k for k in got)
        assert all(isinstance(v, str) and v for v in got.values())


@fuzz(2)
@given(data=st.data(), column=st.sampled_from([None, "customer_id", "c1"]))
def test_seed_files_read_or_fail_clearly(data: st.DataObject, column: Any) -> None:
    from likewise.cli.retail import read_seeds

    suffix, raw = keyed_file(data, [SEEDS_SEED, b"name,cust\nann,C1\nbob,C2\n"], "customer_id", 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"seeds{suffix}"
        path.write_bytes(raw)
        got = one_line_error(lambda: read_seeds(str(path), column), path)
    if got is not None:
        assert all(isinstance(k, str) and k and "\n" not in k and "\r" not in k for k in got)
        assert all(len(k) <= readers.MAX_ITEM_CHARS for k in got)


WORDS = ["athens", "greece", "baghdad", "iraq", "boy", "girl", "brother", "sister", "日本", "Athens"]
ANALOGY_SEED = (
    ": capital-common-countries\nathens greece baghdad iraq\nAthens Greece Baghdad Iraq\n"
    ": family\nboy girl brother sister\nboy girl 日本 unknown\n\n"
).encode()
PAIRS_SEED = "# word pairs\nathens\tgreece\t7.5\nboy\tgirl\t6\n日本\tboy\tnan\nboy\tsister\t1e999\n".encode()


# whole questions of known and unknown words, sections, and lines of the wrong length
QUESTION_LINES = st.lists(
    st.lists(st.sampled_from([*WORDS, "unknown", ":", ": s", "\t", "\r"]), max_size=6).map(" ".join),
    max_size=8,
).map(lambda lines: "\n".join(lines).encode())


def word_space() -> Embeddings:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((len(WORDS), 4)).astype(np.float32)
    return Embeddings(vectors, Vocab(WORDS, list(range(len(WORDS), 0, -1))))


@fuzz(2)
@given(
    data=bytes_like(ANALOGY_SEED) | QUESTION_LINES,
    method=st.sampled_from(["add", "mul"]),
    restrict=st.sampled_from([None, 1, 3, 300_000]),
    case_insensitive=st.booleans(),
    dummy4unknown=st.booleans(),
)
def test_analogy_files_give_a_result_or_an_input_error(
    data: bytes, method: str, restrict: Any, case_insensitive: bool, dummy4unknown: bool
) -> None:
    from likewise.evaluate import evaluate_analogies

    emb = word_space()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "questions-words.txt"
        path.write_bytes(data)
        got = one_line_error(
            lambda: evaluate_analogies(
                emb,
                path,
                method=method,  # type: ignore[arg-type]
                restrict=restrict,
                case_insensitive=case_insensitive,
                dummy4unknown=dummy4unknown,
            ),
            path,
        )
    if got is not None:
        assert 0 <= got["total"]["correct"] <= got["total"]["total"] and 0 <= got["oov_ratio"] <= 1


@fuzz(1)
@given(data=bytes_like(PAIRS_SEED), restrict=st.sampled_from([None, 2]), dummy4unknown=st.booleans())
def test_word_pair_files_give_a_result_or_an_input_error(
    data: bytes, restrict: Any, dummy4unknown: bool
) -> None:
    from likewise.evaluate import evaluate_pairs

    emb = word_space()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pairs.tsv"
        path.write_bytes(data)
        got = one_line_error(
            lambda: evaluate_pairs(emb, path, restrict=restrict, dummy4unknown=dummy4unknown), path
        )
    if got is not None:
        assert got["pairs"] >= 1 and 0 <= got["oov_ratio"] <= 1
