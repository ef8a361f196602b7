"""Native save/load: round trips, the committed format-v1 fixture, and every way a saved space breaks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from likewise._fileio import file_sha256
from likewise.data.vocab import Vocab
from likewise.errors import CorruptModelError, InputError
from likewise.space import store
from likewise.space.embeddings import Embeddings, compute_fingerprint
from likewise.training.config import TrainConfig

FIXTURE_V1 = Path(__file__).parent / "fixtures" / "space_v1"


def make_space(seed: int = 0, n: int = 50, dim: int = 6) -> Embeddings:
    rng = np.random.default_rng(seed)
    keys = [f"k{i}" for i in range(n - 2)] + ["tent", "café ☕"]
    return Embeddings(
        rng.normal(size=(n, dim)).astype(np.float32),
        Vocab(keys, np.arange(n, 0, -1), what="product"),
        config={"dim": dim, "window": 2, "lr": 0.025},
        meta={"parent": None, "note": "ünïcode"},
    )


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Embeddings, Path]:
    emb = make_space()
    path = tmp_path / "space"
    emb.save(path)
    return emb, path


def base_chain(a: np.ndarray) -> list[object]:
    out = []
    while a is not None:
        out.append(a)
        a = getattr(a, "base", None)
    return out


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


# ---- round trip -----------------------------------------------------------------------------------------


def test_round_trip(saved: tuple[Embeddings, Path]) -> None:
    emb, path = saved
    assert sorted(p.name for p in path.iterdir()) == [
        "counts.npy",
        "keys.json",
        "manifest.json",
        "vectors.npy",
    ]
    back = Embeddings.load(path)
    np.testing.assert_array_equal(back.vectors, emb.vectors)
    assert back.vectors.dtype == np.float32
    assert back.vocab == emb.vocab and back.vocab.what == "product"
    assert back.config == emb.config and back.meta == emb.meta
    assert back.fingerprint == emb.fingerprint == compute_fingerprint(back.vectors, back.keys)
    assert back.similar("tent", k=5).keys == emb.similar("tent", k=5).keys


def test_manifest_contents(saved: tuple[Embeddings, Path]) -> None:
    emb, path = saved
    m = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    assert m["format"] == "likewise.embeddings" and m["format_version"] == 1
    assert (m["size"], m["dim"], m["dtype"]) == (50, 6, "float32")
    assert m["fingerprint"] == emb.fingerprint
    assert m["created"].endswith("+00:00") and m["likewise_version"]
    assert set(m["files"]) == {"vectors.npy", "counts.npy", "keys.json"}
    for name, entry in m["files"].items():
        assert entry["sha256"] == file_sha256(path / name)
        assert entry["bytes"] == (path / name).stat().st_size


def test_saved_arrays_hold_no_pickle(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    for npy in path.glob("*.npy"):
        arr = np.load(npy, allow_pickle=False)
        assert arr.dtype != object
    assert json.loads((path / "keys.json").read_text(encoding="utf-8"))[-1] == "café ☕"


def test_mmap_load(saved: tuple[Embeddings, Path]) -> None:
    emb, path = saved
    back = Embeddings.load(path, mmap=True)
    assert any(isinstance(b, np.memmap) for b in base_chain(back.vectors))
    assert not back.vectors.flags.writeable
    np.testing.assert_array_equal(back.vectors, emb.vectors)
    assert back.similar(["tent", "k3"], k=4).keys == emb.similar(["tent", "k3"], k=4).keys


def test_save_creates_parents_and_returns_path(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "space"
    assert store.save(make_space(), target) == target
    assert Embeddings.load(target).fingerprint == make_space().fingerprint


# ---- overwrite ------------------------------------------------------------------------------------------


def test_refuses_to_overwrite_without_flag(saved: tuple[Embeddings, Path]) -> None:
    emb, path = saved
    with pytest.raises(InputError, match="already exists; pass overwrite=True"):
        make_space(seed=1).save(path)
    assert Embeddings.load(path).fingerprint == emb.fingerprint


def test_overwrite_replaces(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    new = make_space(seed=1, n=30, dim=3)
    new.save(path, overwrite=True)
    back = Embeddings.load(path)
    assert back.fingerprint == new.fingerprint and back.dim == 3
    assert sorted(p.name for p in path.parent.iterdir()) == ["space"]  # no temp or old folders left


def test_overwrite_from_own_mmap(saved: tuple[Embeddings, Path]) -> None:
    emb, path = saved
    mapped = Embeddings.load(path, mmap=True)
    mapped.save(path, overwrite=True)
    assert Embeddings.load(path).fingerprint == emb.fingerprint


def test_refuses_to_overwrite_other_things(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"meow")
    with pytest.raises(InputError, match="refusing to overwrite .*not a saved likewise space"):
        make_space().save(folder, overwrite=True)
    assert (folder / "cat.jpg").read_bytes() == b"meow"
    file = tmp_path / "notes.txt"
    file.write_text("keep me")
    with pytest.raises(InputError, match="refusing to overwrite"):
        make_space().save(file, overwrite=True)
    assert file.read_text() == "keep me"


def test_failed_save_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(path: Path, text: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store, "write_text", boom)
    with pytest.raises(OSError, match="disk full"):
        make_space().save(tmp_path / "space")
    assert list(tmp_path.iterdir()) == []


# ---- corruption -----------------------------------------------------------------------------------------


def test_flipped_byte_fails_checksum(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    vec = path / "vectors.npy"
    flip_byte(vec, vec.stat().st_size - 5)
    with pytest.raises(CorruptModelError, match=r"vectors\.npy .* fails its checksum: sha256 [0-9a-f]{64}"):
        Embeddings.load(path)
    with pytest.raises(CorruptModelError, match="vectors.npy"):
        Embeddings.load(path, mmap=True)
    back = Embeddings.load(path, verify=False)  # without verify the (finite) damage goes unnoticed
    assert back.vectors.shape == (50, 6)


def test_truncated_file(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    vec = path / "vectors.npy"
    full = vec.stat().st_size
    vec.write_bytes(vec.read_bytes()[:-40])
    with pytest.raises(
        CorruptModelError, match=rf"vectors\.npy .* is {full - 40} bytes but the manifest says {full}"
    ):
        Embeddings.load(path)
    with pytest.raises(CorruptModelError, match=r"vectors\.npy .* cannot be read"):
        Embeddings.load(path, verify=False)


def test_missing_manifest(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    (path / "manifest.json").unlink()
    with pytest.raises(CorruptModelError, match=r"manifest\.json' is missing") as info:
        Embeddings.load(path)
    assert str(path) in str(info.value)


def test_unparseable_manifest(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    (path / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(CorruptModelError, match="is not valid JSON"):
        Embeddings.load(path)


def edit_manifest(path: Path, **changes: object) -> None:
    mpath = path / "manifest.json"
    m = json.loads(mpath.read_text(encoding="utf-8"))
    m.update(changes)
    mpath.write_text(json.dumps(m), encoding="utf-8")


def test_unknown_version(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    edit_manifest(path, format_version=99)
    with pytest.raises(
        CorruptModelError, match=r"format_version 99; this likewise reads versions 1 .*upgrade"
    ):
        Embeddings.load(path)


def test_unknown_format(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    edit_manifest(path, format="gensim.keyedvectors")
    with pytest.raises(CorruptModelError, match="format 'gensim.keyedvectors'; this likewise reads format"):
        Embeddings.load(path)


def test_shapes_checked_against_manifest(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    edit_manifest(path, size=49)
    with pytest.raises(
        CorruptModelError, match=r"vectors\.npy .* holds float32 \(50, 6\), the manifest says"
    ):
        Embeddings.load(path)


def test_missing_file(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    (path / "keys.json").unlink()
    with pytest.raises(CorruptModelError, match=r"keys\.json is missing"):
        Embeddings.load(path)


def test_file_names_cannot_escape(saved: tuple[Embeddings, Path]) -> None:
    _, path = saved
    m = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    m["files"]["../evil.npy"] = {"sha256": "0" * 64, "bytes": 1}
    (path / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(CorruptModelError, match="lists a file named '../evil.npy'"):
        Embeddings.load(path)


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(CorruptModelError, match="does not exist"):
        Embeddings.load(tmp_path / "nothing")
    (tmp_path / "vectors.npy").write_bytes(b"")
    with pytest.raises(CorruptModelError, match="is a file"):
        Embeddings.load(tmp_path / "vectors.npy")


# ---- the committed format-v1 fixture --------------------------------------------------------------------


def test_load_committed_v1_fixture() -> None:
    emb = Embeddings.load(FIXTURE_V1)
    assert repr(emb) == "Embeddings(15 items × 8 dims, fingerprint='lw1-4cb71a4f4444347bd3d2')"
    # the fingerprint algorithm must not drift: recomputing it gives the saved value
    assert compute_fingerprint(emb.vectors, emb.keys) == emb.fingerprint
    assert emb.keys[:4] == ["tent", "tarp", "pegs", "groundsheet"] and emb.keys[-1] == "map"
    np.testing.assert_array_equal(emb.counts, np.arange(100, 25, -5))
    # the config of version 0.1 (with its "model": "sgns", a key this version does not know) is a TrainConfig
    assert emb.config == TrainConfig(dim=8, window=5, negative=5, epochs=3, seed=20240601)
    np.testing.assert_allclose(emb.vectors[0, :3], [0.7345, 0.8693, -0.3348], atol=1e-6)
    assert emb.similar("tent", k=3).keys == ["tarp", "pegs", "groundsheet"]
    mapped = Embeddings.load(FIXTURE_V1, mmap=True)
    np.testing.assert_array_equal(mapped.vectors, emb.vectors)


def test_fixture_copy_resaves_identically(tmp_path: Path) -> None:
    copy = tmp_path / "v1"
    shutil.copytree(FIXTURE_V1, copy)
    emb = Embeddings.load(copy)
    emb.save(copy, overwrite=True)
    old = json.loads((FIXTURE_V1 / "manifest.json").read_text(encoding="utf-8"))
    new = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    assert new["files"] == old["files"]  # byte-identical arrays and keys
    assert new["fingerprint"] == old["fingerprint"]


def test_overwrite_through_a_symlink_keeps_the_linked_space(saved: tuple[Embeddings, Path]) -> None:
    emb, path = saved
    link = path.parent / "current"
    link.symlink_to(path, target_is_directory=True)
    new = make_space(seed=3)
    new.save(link, overwrite=True)
    assert not link.is_symlink() and Embeddings.load(link).fingerprint == new.fingerprint
    assert Embeddings.load(path).fingerprint == emb.fingerprint  # what the link pointed at is untouched
    assert sorted(p.name for p in path.parent.iterdir()) == ["current", "space"]
