"""The files of a next-token model: ``space/`` (an ordinary saved space) + one ``.npy`` per parameter.

Written with :func:`likewise._fileio.atomic_folder`, read back with every checksum verified and nothing
unpickled.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from .._fileio import MANIFEST as _MANIFEST
from ..errors import CorruptModelError, InputError
from .embedding import resolve_device
from .nexttoken import FORMAT, FORMAT_VERSION, NextTokenConfig, NextTokenModel, TrainedNextToken

__all__ = ["check_model_target", "load_model", "save_model"]


def check_model_target(path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Raise now if :func:`save_model` would refuse ``path`` (call it before a long training run)."""
    from ..store import check_target

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
    from .._fileio import atomic_folder, file_sha256, write_npy, write_text
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
        write_text(tmp / _MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return target


def load_model(path: str | os.PathLike, *, device: str | torch.device = "cpu") -> TrainedNextToken:
    """Load a folder written by :func:`save_model`; checksums are verified, nothing is unpickled.

    Raises
    ------
    CorruptModelError
        Missing files, a wrong format, a checksum or shape that does not match the manifest.
    """
    from .._fileio import file_sha256
    from ..embeddings import Embeddings

    folder = Path(path)
    try:
        manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorruptModelError(f"{str(folder)!r} is not a next-token model: no {_MANIFEST}") from None
    except ValueError as e:
        raise CorruptModelError(f"{str(folder / _MANIFEST)!r} is not valid JSON: {e}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise CorruptModelError(f"{str(folder)!r} has format {got!r}, expected {FORMAT!r}")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CorruptModelError(
            f"{str(folder)!r} has format_version {manifest.get('format_version')!r}; "
            f"this likewise reads version {FORMAT_VERSION}"
        )
    try:
        cfg = NextTokenConfig.from_dict(manifest["config"])
        space = Embeddings.load(folder / "space", verify=True)
        vocab = space.vocab
        model = NextTokenModel(len(vocab), cfg)
        if space.dim != cfg.dim:
            raise CorruptModelError(
                f"{str(folder)!r}: space has dim {space.dim} but the config says {cfg.dim}"
            )
        state = {"table.embedding.weight": torch.from_numpy(np.array(space.vectors, dtype=np.float32))}
        for name, entry in manifest["tensors"].items():
            fpath = folder / entry["file"]
            if not fpath.is_file():
                raise CorruptModelError(f"{str(folder)!r}: missing file {entry['file']!r}")
            if file_sha256(fpath) != entry["sha256"]:
                raise CorruptModelError(f"{str(fpath)!r} fails its sha256 checksum")
            arr = np.load(fpath, allow_pickle=False)
            if list(arr.shape) != entry["shape"]:
                raise CorruptModelError(
                    f"{str(fpath)!r} has shape {arr.shape}, manifest says {entry['shape']}"
                )
            state[name] = torch.from_numpy(np.array(arr, dtype=np.float32))
        model.load_state_dict(state, strict=True)
    except (KeyError, TypeError, RuntimeError, InputError) as e:
        raise CorruptModelError(f"{str(folder)!r} does not hold a valid next-token model: {e}") from None
    model.to(resolve_device(device)).eval()
    nan = float("nan")
    return TrainedNextToken(
        model,
        vocab,
        cfg,
        float(manifest["train_loss"]),
        nan if manifest.get("val_loss") is None else float(manifest["val_loss"]),
        history=[{k: (nan if v is None else v) for k, v in h.items()} for h in manifest.get("history", [])],
        meta=manifest.get("meta", {}),
    )
