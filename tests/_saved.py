"""Small saved folders of every kind likewise reads back (space, retail space, index, corpus, split,
next-token model), for the tests that damage them: tests/test_reliability_read.py and
tests/test_reader_fuzz.py.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from likewise import Embeddings, Vocab


def plain_space(folder: Path, n: int = 12, dim: int = 4) -> Path:
    """A saved space of ``n`` random vectors keyed ``k0``..``k{n-1}``."""
    rng = np.random.default_rng(0)
    keys = [f"k{i}" for i in range(n)]
    Embeddings(rng.normal(size=(n, dim)).astype(np.float32), Vocab(keys, np.arange(n, 0, -1))).save(folder)
    return folder


def retail_space(folder: Path) -> Path:
    """A space trained from an order log: it has a context table and a customer table."""
    from likewise import retail

    rows = [(f"o{o}", f"p{(o * 3 + j) % 12}", f"c{o % 7}") for o in range(120) for j in range(3)]
    log = folder.parent / f"{folder.name}.csv"
    log.write_text("order_id,product_id,customer_id\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows))
    model = retail.train_from_log(
        log, dim=4, epochs=1, min_count=1, deterministic=True, seed=1, progress=False
    )
    model.save(folder)
    return folder


def indexed_space(folder: Path) -> Path:
    """A saved space with an HNSW index in ``folder/index``."""
    from likewise.index import build_index, index_folder

    plain_space(folder, n=40)
    emb = Embeddings.load(folder)
    build_index(emb, threads=1, recall_queries=0).save(index_folder(folder))
    return folder


def corpus(folder: Path) -> Path:
    """A compiled corpus folder (the cache entry of a small text input), moved to ``folder``."""
    from likewise.data.corpus import build_corpus
    from likewise.readers import InputSpec

    text = folder.parent / f"{folder.name}.txt"
    text.write_text("a b c\nb c d\nc d e a\n", encoding="utf-8")
    built = build_corpus(InputSpec(str(text)), cache_dir=folder.parent / f"{folder.name}-cache")
    shutil.move(str(built.path), folder)
    return folder


def split(folder: Path) -> Path:
    """A saved train/test split."""
    from likewise.evaluate import save_split, split_sequences

    seqs = [[f"i{(s + j) % 9}" for j in range(4)] for s in range(30)]
    save_split(split_sequences(seqs, mode="basket", test_fraction=0.3, seed=1), folder)
    return folder


def nexttoken(folder: Path) -> Path:
    """A saved next-token model (needs torch)."""
    from likewise.torch import NextTokenConfig, save_model, train_next

    trained = train_next([["x", "y", "z"]] * 10, NextTokenConfig(dim=2, hidden=4, steps=5, batch_size=8))
    save_model(trained, folder)
    return folder


def manifest_of(folder: Path) -> Path:
    """The manifest file of a saved folder of any kind."""
    return folder / ("split.json" if (folder / "split.json").exists() else "manifest.json")


def rewrite_manifest(path: Path, manifest: Any) -> None:
    path.write_text(json.dumps(manifest), encoding="utf-8")


def refresh_entry(folder: Path, name: str) -> None:
    """Make the manifest's size and checksum of ``name`` match the file again (as another tool would)."""
    from likewise._fileio import file_entry

    mpath = manifest_of(folder)
    manifest = json.loads(mpath.read_text(encoding="utf-8"))
    entry = file_entry(folder / name)
    if "tensors" in manifest:  # a next-token model lists its parameters by name, with only a sha256
        for tensor in manifest["tensors"].values():
            if tensor["file"] == name:
                tensor["sha256"] = entry["sha256"]
                with open(folder / name, "rb") as f:  # the header's shape, true or not
                    np.lib.format.read_magic(f)
                    tensor["shape"] = list(np.lib.format.read_array_header_1_0(f)[0])
    elif "sha256" in manifest and name in manifest["sha256"]:  # corpus arrays: sha256 of the data only
        arr = np.load(folder / name, mmap_mode="r")
        manifest["sha256"][name] = hashlib.sha256(np.ascontiguousarray(arr).data).hexdigest()
    else:
        manifest["files"][name] = entry
    rewrite_manifest(mpath, manifest)


def edit_next_basket(model: Path, to: Path, change: Any) -> Path:
    """A copy of ``model`` whose manifest's next-basket record is ``change(record)`` (in place)."""
    shutil.copytree(model, to)
    path = to / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest["customers"]["config"]["next_basket"])
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return to
