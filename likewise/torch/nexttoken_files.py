"""The files of a next-token model: ``space/`` (an ordinary saved space) + one ``.npy`` per parameter.

Written with :func:`likewise._fileio.atomic_folder`, read back with every checksum verified and nothing
unpickled.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from .._check import first_nonfinite_row
from .._fileio import MANIFEST as _MANIFEST
from .._fileio import file_sha256
from .._readfile import field, inside, read_json, read_npy
from ..errors import CorruptModelError, InputError, shown
from .embedding import resolve_device
from .nexttoken import FORMAT, FORMAT_VERSION, NextTokenConfig, NextTokenModel, TrainedNextToken

__all__ = ["check_model_target", "load_model", "save_model"]


def check_model_target(path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Raise now if :func:`save_model` would refuse ``path`` (call it before a long training run)."""
    from ..space.store import check_target

    return check_target(path, overwrite=overwrite, fmt=FORMAT, what="saved next-token model")


def save_model(trained: TrainedNextToken, path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Save as a folder of plain files; written beside the target and renamed into place.

    Layout::

        MODEL/
          space/           the input table: a normal likewise space (vectors, counts, keys, manifest)
          <param>.npy      every other parameter, float32
          manifest.json    format, version, config, losses, history, meta, sha256 of each .npy

    Returns
    -------
    Path
        The folder written.
    """
    from .._fileio import atomic_folder, finite_json, write_npy, write_text
    from .._version import __version__

    target = check_model_target(path, overwrite=overwrite)
    with atomic_folder(target) as tmp:
        trained.to_embeddings().save(tmp / "space")
        tensors = {}
        for name, p in trained.model.state_dict().items():
            if name == "table.embedding.weight":
                continue  # it is space/vectors.npy
            fname = f"{name}.npy"
            write_npy(tmp / fname, np.ascontiguousarray(p.detach().to("cpu", torch.float32).numpy(), "<f4"))
            tensors[name] = {"file": fname, "shape": list(p.shape), "sha256": file_sha256(tmp / fname)}
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "config": asdict(trained.config),
            "vocab_size": len(trained.vocab),
            "train_loss": trained.train_loss,
            "val_loss": None if math.isnan(trained.val_loss) else trained.val_loss,
            "history": [
                {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in h.items()}
                for h in trained.history
            ],
            "meta": trained.meta,
            "tensors": tensors,
            "likewise_version": __version__,
        }
        write_text(
            tmp / _MANIFEST,
            finite_json(manifest, f"the manifest of {target}", indent=2, ensure_ascii=False) + "\n",
        )
    return target


def load_model(path: str | os.PathLike, *, device: str | torch.device = "cpu") -> TrainedNextToken:
    """Load a folder written by :func:`save_model`; checksums are verified, nothing is unpickled.

    Every file the manifest names must lie inside the folder; the parameter shapes the config implies are
    compared with the files before any parameter is allocated, and every parameter must be finite.

    Raises
    ------
    CorruptModelError
        Missing files, a wrong format, a path outside the folder, a checksum, shape or value that does
        not match the manifest; the message names the file.
    """
    from ..space.embeddings import Embeddings

    folder = Path(path)
    mpath = folder / _MANIFEST
    manifest = read_json(mpath, what="a next-token model")  # bounded, never blocks on a FIFO
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise CorruptModelError(f"{str(folder)!r} has format {got!r}, expected {FORMAT!r}")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CorruptModelError(
            f"{str(folder)!r} has format_version {manifest.get('format_version')!r}; "
            f"this likewise reads version {FORMAT_VERSION}"
        )
    try:
        cfg = NextTokenConfig.from_dict(field(manifest, "config", dict, mpath))
    except (TypeError, InputError) as e:
        raise CorruptModelError(f"{str(mpath)!r}: the config is not valid: {e}") from None
    space = Embeddings.load(folder / "space", verify=True)
    if space.dim != cfg.dim:
        raise CorruptModelError(f"{str(folder)!r}: space has dim {space.dim} but the config says {cfg.dim}")
    arrays = _read_tensors(folder, mpath, field(manifest, "tensors", dict, mpath))
    with torch.device("meta"):  # shapes only: a config that lies about sizes allocates nothing
        expected = {k: tuple(v.shape) for k, v in NextTokenModel(len(space.vocab), cfg).state_dict().items()}
    arrays["table.embedding.weight"] = np.asarray(space.vectors)
    if set(arrays) != set(expected):
        raise CorruptModelError(
            f"{str(mpath)!r} lists the parameters {sorted(arrays)!r}; the config implies {sorted(expected)!r}"
        )
    for name, arr in arrays.items():
        if arr.shape != expected[name]:
            raise CorruptModelError(
                f"{str(mpath)!r}: parameter {name!r} has shape {arr.shape}, "
                f"the config implies {expected[name]}"
            )
    model = NextTokenModel(len(space.vocab), cfg)
    model.load_state_dict({k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in arrays.items()})
    model.to(resolve_device(device)).eval()
    nan = float("nan")
    losses = {}
    for name in ("train_loss", "val_loss"):
        value = manifest.get(name)
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            raise CorruptModelError(f"{str(mpath)!r}: {name} is {shown(value)}, expected a number or null")
        losses[name] = nan if value is None else float(value)
    history = manifest.get("history", [])
    if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
        raise CorruptModelError(f"{str(mpath)!r}: history must be a list of objects")
    meta = manifest.get("meta", {})
    if not isinstance(meta, dict):
        raise CorruptModelError(f"{str(mpath)!r}: meta must be an object")
    return TrainedNextToken(
        model,
        space.vocab,
        cfg,
        losses["train_loss"],
        losses["val_loss"],
        history=[{k: (nan if v is None else v) for k, v in h.items()} for h in history],
        meta=meta,
    )


def _read_tensors(folder: Path, mpath: Path, tensors: dict) -> dict[str, np.ndarray]:
    """The parameter files the manifest lists, each inside ``folder``, checksummed, float32 and finite."""
    out = {}
    for name, entry in tensors.items():
        fname = field(entry, "file", str, mpath)
        fpath = inside(folder, fname, manifest=mpath)  # "../x.npy", an absolute path, a symlink out: refused
        if not fpath.is_file():
            raise CorruptModelError(f"{str(folder)!r}: missing file {fname!r}")
        if file_sha256(fpath) != entry.get("sha256"):
            raise CorruptModelError(f"{str(fpath)!r} fails its sha256 checksum")
        arr = read_npy(fpath)
        if arr.dtype != np.float32 or list(arr.shape) != entry.get("shape"):
            raise CorruptModelError(
                f"{str(fpath)!r} holds {arr.dtype} {arr.shape}, "
                f"the manifest says float32 {entry.get('shape')}"
            )
        flat = arr.reshape(arr.shape[0], -1) if arr.ndim and arr.size else arr.reshape(-1, 1)
        bad = first_nonfinite_row(flat)
        if bad is not None:
            raise CorruptModelError(f"{str(fpath)!r}: row {bad} of {name!r} holds NaN or infinity")
        out[name] = arr
    return out
