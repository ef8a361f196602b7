"""The files of a saved space: a folder of plain arrays and a JSON manifest (no model class here).

Layout (format ``"likewise.embeddings"``, version 1)::

    space/
      vectors.npy     float32 [V, D], little-endian
      counts.npy      int64 [V], little-endian
      keys.json       JSON list of V str, in id order
      manifest.json   {"format", "format_version", "fingerprint", "size", "dim", "dtype", "item_name",
                       "config", "meta", "created", "likewise_version",
                       "files": {name: {"sha256", "bytes"}} for every other file}

and, when the space has them: ``context.npy`` (the output table), the customer table's five files,
the item-item completion model's four ``itemitem_*.npy`` (CSR rows, :mod:`likewise.space.itemitem`; its
penalty in the manifest's ``"itemitem"``), and ``item_types.npy`` (int16 [V], the type of each row of a typed
space; the manifest's ``"types"`` holds ``{"names", "hidden", "file"}``). These optional parts did not
need a new format version: a reader that predates one sees a file listed in ``files`` that it checks and
ignores (a typed space then loads as an untyped one whose keys still read ``type:name``; a space with an
item-item model completes by its affinity), and a space without them is exactly version 1.

Nothing is pickled: arrays are read with ``allow_pickle=False``. A save writes everything into a
temporary folder beside the target, fsyncs it, then renames it into place, so a crash never leaves a
half-written space under the target name. Loading checks the manifest, the size and sha256 of every file
(``verify=True``), and every shape against the manifest, raising
:class:`~likewise.errors.CorruptModelError` with the path, the file and what was expected.

:func:`save` takes any object with the attributes of an :class:`~likewise.space.embeddings.Embeddings`
(``vectors``, ``counts``, ``keys``, ``vocab``, ``fingerprint``, ``config`` (a TrainConfig, a dict or None),
``meta``, ``context``, ``customers``); :func:`read_space` returns the checked parts as a
:class:`SavedSpace`, from which ``Embeddings.load`` builds the space. Writing goes through
:func:`likewise._fileio.atomic_folder`.

Adding a format version: bump ``FORMAT_VERSION``, keep a reader for each older version in ``_READERS``,
and commit a fixture of the new version under ``tests/fixtures/``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .._check import first_nonfinite_row
from .._fileio import (
    MANIFEST,
    atomic_folder,
    file_entry,
    file_sha256,
    finite_json,
    tidy,
    write_npy,
    write_text,
)
from .._readfile import field, inside, read_json, read_npy
from .._targets import check_target
from ..data.vocab import Dropped, Vocab
from ..errors import CorruptModelError, InputError
from ..training.config import TrainConfig
from ..training.report import TrainReport
from .itemitem import ItemItem
from .itemtypes import ItemTypes

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "SUPPORTED_VERSIONS",
    "SavedSpace",
    "check_target",
    "file_sha256",
    "read_manifest",
    "read_space",
    "save",
]

FORMAT = "likewise.embeddings"
MAX_KEYS_BYTES = 1 << 34  # keys.json: a bound far above any real vocabulary (it is read whole)
ITEM_TABLE = "item_table.json"  # the optional item attributes a space was trained with
MAX_ITEM_TABLE_BYTES = 1 << 32
FORMAT_VERSION = 1
SUPPORTED_VERSIONS = (1,)


#: What a word2vec / fastText file is read with, said when one is given where a saved space is expected.
WORD2VEC_HINT = (
    "word2vec / fastText vectors: likewise.data.formats.read_word2vec(path), "
    "or `likewise import PATH -o SPACE` to save them as a space"
)
_VECTOR_SUFFIXES = (".vec", ".bin", ".txt", ".w2v", ".gz", ".bz2")


def save(emb: Any, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Save ``emb`` as a folder at ``path``.

    Parameters
    ----------
    emb : Embeddings
        The space to save (any object with its attributes).
    path : str or path-like
        Target folder; its parent is created if needed.
    overwrite : bool
        Replace an existing saved space at ``path``. A path that exists but is not a saved likewise space
        is never replaced.

    Returns
    -------
    Path
        The folder written.

    Raises
    ------
    InputError
        ``path`` exists and ``overwrite`` is False, or it exists and is not a likewise space, or it holds
        another saved likewise folder; or ``path`` lies inside a saved likewise folder
        (:func:`likewise._targets.check_target`).
    """
    from .._version import __version__

    target = check_target(path, overwrite=overwrite)
    config = emb.config.to_dict() if isinstance(emb.config, TrainConfig) else emb.config
    # before any file is written: a NaN in the meta would make a manifest no strict reader can load
    finite_json({"config": config, "meta": emb.meta}, f"the manifest of {target}")
    with atomic_folder(target) as tmp:
        write_npy(tmp / "vectors.npy", np.ascontiguousarray(emb.vectors, dtype="<f4"))
        write_npy(tmp / "counts.npy", np.ascontiguousarray(emb.counts, dtype="<i8"))
        write_text(tmp / "keys.json", json.dumps(emb.keys, ensure_ascii=False))
        files = {name: file_entry(tmp / name) for name in ("vectors.npy", "counts.npy", "keys.json")}
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "fingerprint": emb.fingerprint,
            "size": len(emb),
            "dim": emb.dim,
            "dtype": "float32",
            "item_name": emb.vocab.what,
            "config": config,
            "meta": emb.meta,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "likewise_version": __version__,
            "files": files,
        }
        if emb.context is not None:  # the optional output table (spaces trained from an order log)
            write_npy(tmp / "context.npy", np.ascontiguousarray(emb.context, dtype="<f4"))
            files["context.npy"] = file_entry(tmp / "context.npy")
            manifest["context"] = "context.npy"
        if emb.customers is not None:  # the optional customer table (likewise.space.customers)
            manifest["customers"] = _write_customers(emb.customers, tmp, files)
        itemitem = getattr(emb, "itemitem", None)
        if itemitem is not None:  # the optional item-item completion model (likewise.space.itemitem)
            names = []
            for stem, arr in itemitem.to_arrays().items():
                name = f"itemitem_{stem}.npy"
                write_npy(tmp / name, np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")))
                files[name] = file_entry(tmp / name)
                names.append(name)
            manifest["itemitem"] = {"lam": itemitem.lam, "files": names}
        types = getattr(emb, "types", None)
        if types is not None:  # the optional type of each row (likewise.space.itemtypes)
            entry = types.to_manifest()
            write_npy(tmp / entry["file"], np.ascontiguousarray(types.codes, dtype="<i2"))
            files[entry["file"]] = file_entry(tmp / entry["file"])
            manifest["types"] = entry
        item_table = getattr(emb, "item_table", None)
        if item_table is not None:  # the optional item attribute table trained with (train --item-attrs)
            write_text(tmp / ITEM_TABLE, json.dumps(item_table, ensure_ascii=False))
            files[ITEM_TABLE] = file_entry(tmp / ITEM_TABLE)
            manifest["item_table"] = ITEM_TABLE
        text = finite_json(manifest, f"the manifest of {target}", indent=2, ensure_ascii=False)
        write_text(tmp / MANIFEST, text + "\n")
    return target


@dataclass
class SavedSpace:
    """The checked contents of a saved space folder, as :func:`read_space` returns them.

    ``verified`` is True when every file's sha256 matched the manifest. Every float table (vectors,
    context, customer vectors) has been checked to be finite either way: a checksum only says the bytes
    are the ones written, not that the writer wrote finite numbers. ``customers`` holds the customer
    table's parts (``vectors``, ``vocab``, ``bought_indptr``, ``bought_ids``, ``fingerprint``,
    ``config``) or is None; ``types`` the type of each row of a typed space, or None. ``config`` is the
    training config read by :meth:`~likewise.training.config.TrainConfig.from_dict` (None when the
    space was not trained by likewise).
    """

    folder: Path
    vectors: np.ndarray
    vocab: Vocab
    config: TrainConfig | None
    meta: dict
    fingerprint: str
    verified: bool
    context: np.ndarray | None = None
    customers: dict[str, Any] | None = None
    types: ItemTypes | None = None
    itemitem: ItemItem | None = None
    item_table: dict[str, Any] | None = None


def read_manifest(path: str | os.PathLike) -> dict[str, Any]:
    """Read and check the manifest of a saved space (format and version only; files are not read).

    A save that was killed between the two renames of its publish is recovered first, and temporaries
    left by writers that are gone are removed (:func:`likewise._fileio.tidy`).

    Raises
    ------
    CorruptModelError
        The folder or its manifest is missing or unparseable, or the format or version is not supported.
    """
    folder = Path(path)
    tidy(folder)  # a save killed mid-publish: put the old folder back, drop what dead writers left
    if not folder.exists():
        hint = f" ({WORD2VEC_HINT})" if folder.suffix.lower() in _VECTOR_SUFFIXES else ""
        raise CorruptModelError(f"no saved likewise space at {str(folder)!r}: the path does not exist{hint}")
    if not folder.is_dir():
        raise CorruptModelError(
            f"{str(folder)!r} is a file; a saved likewise space is a folder containing {MANIFEST} "
            f"({WORD2VEC_HINT})"
        )
    mpath = folder / MANIFEST
    if not os.path.lexists(mpath):
        raise CorruptModelError(f"{str(mpath)!r} is missing: {str(folder)!r} is not a saved likewise space")
    manifest = read_json(mpath, what="a saved likewise space")  # bounded; a FIFO or a deep nest refused
    if not isinstance(manifest, dict):
        raise CorruptModelError(f"{str(mpath)!r} holds a JSON {type(manifest).__name__}, expected an object")
    fmt = manifest.get("format")
    if fmt != FORMAT:
        raise CorruptModelError(f"{str(mpath)!r} has format {fmt!r}; this likewise reads format {FORMAT!r}")
    version = manifest.get("format_version")
    if version not in SUPPORTED_VERSIONS or isinstance(version, bool):
        newer = (
            isinstance(version, int) and not isinstance(version, bool) and version > max(SUPPORTED_VERSIONS)
        )
        hint = " (written by a newer likewise: upgrade likewise to read it)" if newer else ""
        raise CorruptModelError(
            f"{str(mpath)!r} has format_version {version!r}; this likewise reads versions "
            f"{', '.join(map(str, SUPPORTED_VERSIONS))}{hint}"
        )
    return manifest


def _check_file(folder: Path, name: str, entry: Any, verify: bool) -> Path:
    """Existence (always), then size and sha256 (when verifying) of one file listed in the manifest."""
    if name != Path(name).name or name in ("", ".", "..", MANIFEST):
        raise CorruptModelError(
            f"{str(folder / MANIFEST)!r} lists a file named {name!r}, which is not allowed"
        )
    fpath = inside(folder, name, manifest=folder / MANIFEST)  # a symlink out of the folder is refused
    if not fpath.is_file():
        what = "not a regular file" if os.path.lexists(fpath) else "missing"
        raise CorruptModelError(f"{name} is {what} in {str(folder)!r}")
    if not verify:
        return fpath
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("sha256"), str)
        or not isinstance(entry.get("bytes"), int)
    ):
        raise CorruptModelError(f"{str(folder / MANIFEST)!r}: the entry for {name} lacks 'sha256' or 'bytes'")
    size = fpath.stat().st_size
    if size != entry["bytes"]:
        raise CorruptModelError(
            f"{name} in {str(folder)!r} is {size} bytes but the manifest says {entry['bytes']} "
            "(truncated or replaced?)"
        )
    digest = file_sha256(fpath)
    if digest != entry["sha256"]:
        raise CorruptModelError(
            f"{name} in {str(folder)!r} fails its checksum: "
            f"sha256 {digest}, the manifest expects {entry['sha256']}"
        )
    return fpath


def _load_npy(fpath: Path, mmap: bool) -> np.ndarray:
    return read_npy(fpath, mmap=mmap)  # the header is checked against the file's size before allocating


def _load_keys(fpath: Path) -> Any:
    return read_json(fpath, what="a saved likewise space", max_bytes=MAX_KEYS_BYTES)


def _check_finite(table: np.ndarray, fpath: Path, keys: list[str]) -> None:
    """Refuse a table holding NaN or infinity (written by another tool, or edited with its checksum)."""
    i = first_nonfinite_row(table)
    if i is not None:
        raise CorruptModelError(
            f"{fpath.name} in {str(fpath.parent)!r}: row {i} ({keys[i]!r}) holds NaN or infinity; "
            "a saved space must be finite"
        )


def _read_v1(folder: Path, manifest: dict, mmap: bool, verify: bool) -> SavedSpace:
    mpath = folder / MANIFEST
    size = field(manifest, "size", int, mpath)
    dim = field(manifest, "dim", int, mpath)
    fingerprint = field(manifest, "fingerprint", str, mpath)
    files = field(manifest, "files", dict, mpath)
    for name in ("config", "meta"):
        if manifest.get(name) is not None:
            field(manifest, name, dict, mpath)
    if manifest.get("dtype") != "float32":
        raise CorruptModelError(
            f"{str(folder / MANIFEST)!r}: dtype {manifest.get('dtype')!r} is not supported "
            "(expected 'float32')"
        )
    for name in ("vectors.npy", "counts.npy", "keys.json"):
        if name not in files:
            raise CorruptModelError(f"{str(folder / MANIFEST)!r} does not list {name}")
    paths = {name: _check_file(folder, name, entry, verify) for name, entry in files.items()}

    vectors = _load_npy(paths["vectors.npy"], mmap)
    if vectors.dtype != np.float32 or vectors.shape != (size, dim):
        raise CorruptModelError(
            f"vectors.npy in {str(folder)!r} holds {vectors.dtype} {vectors.shape}, "
            f"the manifest says float32 {(size, dim)}"
        )
    counts = _load_npy(paths["counts.npy"], False)
    if counts.dtype != np.int64 or counts.shape != (size,):
        raise CorruptModelError(
            f"counts.npy in {str(folder)!r} holds {counts.dtype} {counts.shape}, "
            f"the manifest says int64 {(size,)}"
        )
    keys = _load_keys(paths["keys.json"])
    if not isinstance(keys, list) or len(keys) != size or not all(isinstance(k, str) for k in keys):
        got = f"{len(keys)} entries" if isinstance(keys, list) else type(keys).__name__
        raise CorruptModelError(
            f"keys.json in {str(folder)!r} must be a list of {size} str (the manifest's size), got {got}"
        )
    try:
        vocab = Vocab(keys, counts, what=str(manifest.get("item_name") or "item"))
    except InputError as e:
        raise CorruptModelError(f"keys.json in {str(folder)!r}: {e}") from None
    _check_finite(vectors, paths["vectors.npy"], keys)  # once, at load: queries and `serve` assume it
    meta = manifest.get("meta") or {}
    if meta.get("dropped"):  # what min_count / max_items removed: lets a miss say why
        try:
            vocab = vocab.with_dropped(Dropped.from_dict(meta["dropped"]))
        except InputError as e:
            raise CorruptModelError(f"{str(folder / MANIFEST)!r}: {e}") from None
    config = None
    if manifest.get("config"):  # {} or null: a space likewise did not train (imported vectors)
        try:
            config = TrainConfig.from_dict(manifest["config"])
        except InputError as e:
            raise CorruptModelError(f"{str(folder / MANIFEST)!r}: {e}") from None
    try:
        TrainReport.from_dict(meta, config)  # a damaged record is refused here, not at its first query
    except CorruptModelError as e:
        raise CorruptModelError(f"{str(folder / MANIFEST)!r}: {e}") from None
    out = SavedSpace(folder, vectors, vocab, config, meta, fingerprint, verify)
    if "context" in manifest:
        if "context.npy" not in paths:
            raise CorruptModelError(f"{str(folder / MANIFEST)!r} names a context table but does not list it")
        context = _load_npy(paths["context.npy"], mmap)
        if context.dtype != np.float32 or context.shape != (size, dim):
            raise CorruptModelError(
                f"context.npy in {str(folder)!r} holds {context.dtype} {context.shape}, "
                f"expected float32 {(size, dim)}"
            )
        _check_finite(context, paths["context.npy"], keys)
        out.context = context
    if "customers" in manifest:
        out.customers = _read_customers(folder, manifest, paths, mmap)
    if "types" in manifest:
        out.types = _read_types(folder, manifest["types"], paths, size)
    if "itemitem" in manifest:
        out.itemitem = _read_itemitem(folder, manifest["itemitem"], paths, size, mmap)
    if "item_table" in manifest:
        out.item_table = _read_item_table(folder, paths)
    return out


def _read_item_table(folder: Path, paths: dict[str, Path]) -> dict[str, Any]:
    """The item attribute table (``item_table.json``: the item column and equal-length columns)."""
    if ITEM_TABLE not in paths:
        raise CorruptModelError(f"{str(folder / MANIFEST)!r} names an item table but does not list it")
    table = read_json(paths[ITEM_TABLE], what="a likewise item table", max_bytes=MAX_ITEM_TABLE_BYTES)
    columns = table.get("columns") if isinstance(table, dict) else None
    ok = isinstance(columns, dict) and isinstance(table.get("item_col"), str) and table["item_col"] in columns
    lengths = {len(v) for v in columns.values() if isinstance(v, list)} if ok else set()
    if not ok or len(lengths) != 1 or not all(isinstance(v, list) for v in columns.values()):
        raise CorruptModelError(
            f"{ITEM_TABLE} in {str(folder)!r} must hold an item_col and columns of equal length, one of them "
            "the item column"
        )
    return table


def _read_itemitem(folder: Path, entry: Any, paths: dict[str, Path], size: int, mmap: bool) -> ItemItem:
    """The item-item completion model (four ``itemitem_*.npy`` files, its penalty in the manifest)."""
    where = str(folder / MANIFEST)
    lam = entry.get("lam") if isinstance(entry, dict) else None
    arrays = {}
    for stem in ("items", "indptr", "cols", "data"):
        name = f"itemitem_{stem}.npy"
        if name not in paths:
            raise CorruptModelError(f"{where!r} names an item-item model but does not list {name}")
        arrays[stem] = _load_npy(paths[name], mmap)
    if not isinstance(lam, int | float) or isinstance(lam, bool):
        raise CorruptModelError(f"{where!r}: the item-item model's lam must be a number, got {lam!r}")
    return ItemItem.from_arrays(arrays, size, float(lam), where)


def _read_types(folder: Path, entry: Any, paths: dict[str, Path], size: int) -> ItemTypes:
    """The type of each row (``item_types.npy``, int16, with the names in the manifest)."""
    mpath = folder / MANIFEST
    name = entry.get("file") if isinstance(entry, dict) else None
    if not isinstance(name, str) or name not in paths:
        raise CorruptModelError(f"{str(mpath)!r} names item types but does not list their file")
    codes = _load_npy(paths[name], False)
    if codes.dtype != np.int16 or codes.shape != (size,):
        raise CorruptModelError(
            f"{name} in {str(folder)!r} holds {codes.dtype} {codes.shape}, expected int16 {(size,)}"
        )
    try:
        return ItemTypes.from_manifest(entry, codes)
    except InputError as e:
        raise CorruptModelError(f"the item types in {str(folder)!r}: {e}") from None


# The optional customer table (likewise.space.customers.CustomerTable): customer vectors in this space, their
# keys, and what each customer bought (CSR: indptr + product ids). Listed in "files" like the other arrays.
_CUSTOMER_FILES = (
    "customer_vectors.npy",
    "customer_counts.npy",
    "customer_keys.json",
    "customer_bought_indptr.npy",
    "customer_bought_ids.npy",
)


#: The customer table's orders (sorted uint64 hashes of the order ids it was built from).
ORDERS_FILE = "customer_orders.npy"


def _write_customers(table: Any, tmp: Path, files: dict[str, Any]) -> dict[str, Any]:
    write_npy(tmp / "customer_vectors.npy", np.ascontiguousarray(table.vectors, dtype="<f4"))
    write_npy(tmp / "customer_counts.npy", np.ascontiguousarray(table.vocab.counts, dtype="<i8"))
    write_text(tmp / "customer_keys.json", json.dumps(table.keys, ensure_ascii=False))
    write_npy(tmp / "customer_bought_indptr.npy", np.ascontiguousarray(table.bought_indptr, dtype="<i8"))
    write_npy(tmp / "customer_bought_ids.npy", np.ascontiguousarray(table.bought_ids, dtype="<i4"))
    names = list(_CUSTOMER_FILES)
    if table.history is not None:  # the purchase history (likewise.nextbasket.history), when it has one
        for field_name, arr in table.history.items():
            name = f"customer_history_{field_name}.npy"
            write_npy(tmp / name, np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")))
            names.append(name)
    orders = getattr(table, "orders", None)
    if orders is not None:  # the hashes of the orders it was built from (an update refuses repeats)
        write_npy(tmp / ORDERS_FILE, np.ascontiguousarray(orders, dtype="<u8"))
        names.append(ORDERS_FILE)
    for name in names:
        files[name] = file_entry(tmp / name)
    return {
        "size": len(table),
        "fingerprint": table.fingerprint,
        "config": table.saved_config,
        "history": table.history is not None,
        "orders": orders is not None,
    }


def _read_customers(folder: Path, manifest: dict, paths: dict[str, Path], mmap: bool) -> dict[str, Any]:
    info = manifest["customers"]
    missing = [n for n in _CUSTOMER_FILES if n not in paths]
    if not isinstance(info, dict) or missing:
        raise CorruptModelError(
            f"{str(folder / MANIFEST)!r} names a customer table but does not list {', '.join(missing)}"
        )
    mpath = folder / MANIFEST
    size = field(info, "size", int, mpath)
    if info.get("config") is not None:
        field(info, "config", dict, mpath)
    vectors = _load_npy(paths["customer_vectors.npy"], mmap)
    counts = _load_npy(paths["customer_counts.npy"], False)
    indptr = _load_npy(paths["customer_bought_indptr.npy"], False)
    bought = _load_npy(paths["customer_bought_ids.npy"], mmap)
    keys = _load_keys(paths["customer_keys.json"])
    dim = manifest.get("dim")
    if (
        vectors.dtype != np.float32
        or vectors.shape != (size, dim)
        or not isinstance(keys, list)
        or len(keys) != size
        or counts.shape != (size,)
        or bought.dtype != np.int32
        or (len(bought) and (bought.min() < 0 or bought.max() >= manifest.get("size", 0)))
    ):
        raise CorruptModelError(
            f"the customer table in {str(folder)!r} disagrees with the manifest (expected {size} customers "
            f"x {dim} float32 and product ids below {manifest.get('size')})"
        )
    try:
        vocab = Vocab(keys, counts, what="customer")
    except InputError as e:
        raise CorruptModelError(f"the customer table in {str(folder)!r}: {e}") from None
    _check_finite(vectors, paths["customer_vectors.npy"], vocab.keys)
    history = None
    if info.get("history"):  # written from 2026-12 on; older tables have none and still load
        from ..nextbasket.history import HISTORY_FIELDS

        gone = [f for f in HISTORY_FIELDS if f"customer_history_{f}.npy" not in paths]
        if gone:
            raise CorruptModelError(
                f"{str(mpath)!r} says the customer table has a purchase history but does not list "
                + ", ".join(f"customer_history_{f}.npy" for f in gone)
            )
        history = {f: _load_npy(paths[f"customer_history_{f}.npy"], False) for f in HISTORY_FIELDS}
        for f, dtype in HISTORY_FIELDS.items():
            if history[f].dtype != dtype:
                raise CorruptModelError(
                    f"customer_history_{f}.npy in {str(folder)!r} is {history[f].dtype}, expected "
                    f"{np.dtype(dtype)}"
                )
    orders = None
    if info.get("orders"):  # written from 2026-12 on; a table without them loads, and an update says so
        if ORDERS_FILE not in paths:
            raise CorruptModelError(
                f"{str(mpath)!r} says the customer table keeps its orders but does not list {ORDERS_FILE}"
            )
        orders = _load_npy(paths[ORDERS_FILE], False)
        if orders.dtype != np.uint64 or orders.ndim != 1 or np.any(orders[1:] <= orders[:-1]):
            raise CorruptModelError(
                f"{ORDERS_FILE} in {str(folder)!r} is not a sorted set of uint64 order hashes"
            )
    return {
        "vectors": vectors,
        "vocab": vocab,
        "bought_indptr": indptr,
        "bought_ids": bought,
        "fingerprint": str(info.get("fingerprint")),
        "config": info.get("config") or {},
        "history": history,
        "orders": orders,
    }


_READERS = {1: _read_v1}


def read_space(path: str | os.PathLike, *, mmap: bool = False, verify: bool = True) -> SavedSpace:
    """Read and check a folder written by :func:`save` (``Embeddings.load`` builds the space from it).

    Parameters
    ----------
    path : str or path-like
        The folder.
    mmap : bool
        Memory-map ``vectors.npy`` (and the other large arrays) read-only instead of reading them.
    verify : bool
        Check each file's size and sha256 against the manifest (reads every file once). Shapes and dtypes
        are always checked.

    Returns
    -------
    SavedSpace

    Raises
    ------
    CorruptModelError
        Missing or unparseable manifest, unsupported format or version, a missing, truncated or corrupt
        file, or shapes that disagree with the manifest.
    """
    folder = Path(path)
    manifest = read_manifest(folder)
    return _READERS[manifest["format_version"]](folder, manifest, mmap, verify)
