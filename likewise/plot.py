"""Pictures of a space: the PCA map, the training loss, the dimension sweep.

PCA is plain NumPy; drawing needs matplotlib (``likewise[plot]``), imported only when a picture is drawn.
Every picture is PNG or SVG by its file suffix, written to a temporary file and renamed, never inside a
saved likewise folder (an existing picture is replaced: ``likewise plot`` asks for ``--overwrite``).
Sizes: PNG is ``figsize * dpi`` pixels (the map 770 x 660, the curves 880 x 440 at the default dpi 110);
SVG gives the same size in points (``figsize * 72``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._fileio import atomic_file
from ._groups import OTHER_COLOUR, PALETTE, is_other, top_groups
from ._targets import check_outside_saved
from .errors import InputError, MissingDependencyError

DPI = 110


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("matplotlib", "plot", "drawing pictures") from None
    return plt


def _check_path(path: str | Path) -> Path:
    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg"):
        raise InputError(f"picture file {str(path)!r} must end in .png or .svg")
    check_outside_saved(path, "a picture to")  # never inside a saved space or index, whoever draws it
    return path


def _save(fig: Any, path: Path) -> Path:
    """Save atomically (temporary file beside it, then rename) and close the figure."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fmt = path.suffix.lower()[1:]
    try:
        with atomic_file(path, "wb") as f:  # an exclusive, unguessable temporary, fsynced, renamed
            # fixed metadata so two runs give the same SVG bytes
            fig.savefig(f, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    finally:
        plt.close(fig)
    return path


__all__ = ["pca_coords", "plot_loss", "plot_map", "plot_space", "plot_sweep"]


def pca_coords(vectors: np.ndarray, n_components: int = 2, normalize: bool = True) -> np.ndarray:
    """Project rows onto their first principal components.

    Parameters
    ----------
    vectors : ndarray, shape (n, d)
    n_components : int
    normalize : bool
        Scale rows to unit length first, so the map shows cosine structure, not frequency.

    Returns
    -------
    ndarray, shape (n, n_components), float32
        Signs are fixed so the largest-magnitude loading of each component is positive (stable maps).
    """
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise InputError(f"vectors must be a non-empty 2-D array, got shape {x.shape}")
    if normalize:
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        x = x / np.where(norms > 0, norms, 1.0)
    x = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    comps = vt[:n_components]
    signs = np.sign(comps[np.arange(len(comps)), np.abs(comps).argmax(axis=1)])
    coords = x @ (comps * signs[:, None]).T
    if coords.shape[1] < n_components:  # fewer dims than components: pad with zeros
        coords = np.pad(coords, ((0, 0), (0, n_components - coords.shape[1])))
    return coords.astype(np.float32)


def plot_map(
    coords: np.ndarray,
    names: Sequence[str],
    path: str | Path,
    labels: Mapping[str, str] | None = None,
    annotate: Sequence[str] | int | None = None,
    title: str = "",
) -> Path:
    """Draw a 2-D map as PNG or SVG (by the file suffix), written atomically.

    Parameters
    ----------
    coords : ndarray, shape (n, 2)
    names : sequence of str
        One name per row.
    path : path
        Output file; ``.png`` or ``.svg``.
    labels : mapping, optional
        Name -> label; each label gets a colour and a legend entry (up to 40 labels; with more, the 39
        most common and "other (N values)", as in the explorer: :mod:`likewise._groups`).
    annotate : sequence of str or int, optional
        Names to write beside their dots, or the first N rows; default: all when n <= 60.
    title : str
    """
    plt = _pyplot()
    path = _check_path(path)
    coords = np.asarray(coords)
    if coords.ndim != 2 or coords.shape[1] < 2 or len(coords) != len(names):
        raise InputError(f"coords shape {coords.shape} does not match {len(names)} names with 2 columns")
    fig, ax = plt.subplots(figsize=(7, 6), dpi=DPI)
    if labels:
        # the explorer's rule: up to MAX_GROUPS colours, the rest of many labels "other (N values)" in grey
        shown = np.array(top_groups([labels.get(n, "?") for n in names]), dtype=object)
        present = set(shown.tolist())
        groups = sorted(g for g in present if not is_other(g)) + sorted(g for g in present if is_other(g))
        for gi, g in enumerate(groups):
            m = shown == g
            colour = OTHER_COLOUR if is_other(g) else PALETTE[gi % len(PALETTE)]
            ax.scatter(coords[m, 0], coords[m, 1], s=36, color=colour, label=g, alpha=0.85)
        if len(groups) <= 10:
            ax.legend(loc="best", fontsize=8, frameon=False)
        else:  # beside the map, where it hides nothing: one column up to 20 labels, two up to 40
            ax.legend(
                loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=6, frameon=False,
                ncol=1 if len(groups) <= 20 else 2, handletextpad=0.2, columnspacing=0.8,
            )  # fmt: skip
    else:
        ax.scatter(coords[:, 0], coords[:, 1], s=20, alpha=0.8)
    if annotate is None:
        annotate = len(names) if len(names) <= 60 else 0
    show = set(names[:annotate]) if isinstance(annotate, int) else set(annotate)
    texts = [
        ax.text(x, y, n, fontsize=8)
        for (x, y), n in zip(coords[:, :2].tolist(), names, strict=True)
        if n in show
    ]
    _spread_labels(ax, texts)
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    if title:
        ax.set_title(title)
    return _save(fig, path)


def _spread_labels(ax: Any, texts: list[Any]) -> None:
    """Move labels apart so none overlaps another (adjustText, part of the ``plot`` extra).

    Without adjustText the labels stay beside their points, offset a little up and right.
    """
    if not texts:
        return
    try:
        from adjustText import adjust_text
    except ImportError:
        for t in texts:
            (x, y), label = t.get_position(), t.get_text()
            t.remove()
            ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=8)
        return
    adjust_text(texts, ax=ax, arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "0.5"})


def plot_space(
    emb: Any,
    path: str | Path,
    *,
    labels: Mapping[str, str] | None = None,
    annotate: Sequence[str] | int = 15,
    max_points: int = 2000,
    seed: int = 0,
    title: str | None = None,
) -> Path:
    """The PCA map of a space, sampled when large.

    Parameters
    ----------
    emb : Embeddings
    path : path
        ``.png`` or ``.svg``.
    labels : mapping, optional
        Item -> label (colour). With labels, only labelled items are drawn.
    annotate : sequence of str or int
        Items to name on the map, or the N most frequent (ids are by descending count).
    max_points : int
        Draw at most this many items: a seeded random sample, always keeping the annotated ones. PCA is
        fitted on the drawn items.
    seed : int
    title : str, optional
        Default: what was drawn.
    """
    if max_points < 2:
        raise InputError(f"max_points == {max_points!r}, must be >= 2")
    ids = np.arange(len(emb))
    if labels is not None:
        ids = np.array([i for i, k in enumerate(emb.keys) if k in labels], dtype=np.int64)
        if len(ids) == 0:
            raise InputError("no item of the space has a label: nothing to draw")
    if isinstance(annotate, int):
        shown = ids[:annotate]
    else:
        shown = np.array([emb.vocab.id(a) for a in annotate], dtype=np.int64)
    if len(ids) > max_points:
        rng = np.random.default_rng(seed)
        rest = np.setdiff1d(ids, shown)
        pick = rng.choice(rest, size=max(0, max_points - len(shown)), replace=False)
        ids = np.union1d(pick, shown)
    names = [emb.keys[i] for i in ids.tolist()]
    if title is None:
        title = f"PCA of {emb.dim}-d vectors: {len(ids):,} of {len(emb):,} items"
    return plot_map(
        pca_coords(np.asarray(emb.vectors)[ids]),
        names,
        path,
        labels=labels,
        annotate=[emb.keys[i] for i in shown.tolist()],
        title=title,
    )


def plot_loss(history: Sequence[Mapping[str, Any]], path: str | Path, title: str = "") -> Path:
    """Training loss per epoch (``emb.meta["history"]``) as a line chart."""
    if not history:
        raise InputError("history is empty: the space has no training history to draw")
    plt = _pyplot()
    path = _check_path(path)
    epochs = [int(h.get("epoch", i + 1)) for i, h in enumerate(history)]
    loss = [float(h["loss"]) for h in history]
    fig, ax = plt.subplots(figsize=(8, 4), dpi=DPI)
    ax.plot(epochs, loss, marker="o")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean SGNS loss per pair")
    ax.set_xticks(epochs if len(epochs) <= 20 else ax.get_xticks())
    ax.grid(alpha=0.3)
    ax.set_title(title or "training loss")
    return _save(fig, path)


def plot_sweep(
    rows: Sequence[Mapping[str, Any]],
    path: str | Path,
    *,
    baselines: Mapping[str, float] | None = None,
    k: int = 10,
    title: str = "",
) -> Path:
    """Held-out loss and HR@k against the dimension (the output of ``likewise sweep-dim``).

    Parameters
    ----------
    rows : sequence of mapping
        One per dimension: ``{"dim", "heldout_loss", "hr"}``.
    baselines : mapping, optional
        Baseline name -> HR@k, drawn as horizontal lines on the HR panel.
    """
    if not rows:
        raise InputError("rows is empty: nothing to draw")
    plt = _pyplot()
    path = _check_path(path)
    dims = [int(r["dim"]) for r in rows]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8, 4), dpi=DPI)
    a1.plot(dims, [float(r["heldout_loss"]) for r in rows], marker="o", color="tab:red")
    a1.set_ylabel("held-out rank loss, 1 - AUC (lower is better)")
    a2.plot(dims, [float(r["hr"]) for r in rows], marker="o", label="model")
    for i, (name, v) in enumerate((baselines or {}).items()):
        a2.axhline(v, linestyle="--", color=plt.get_cmap("tab10")(i + 1), label=name)
    a2.set_ylabel(f"HR@{k} on held-out items (higher is better)")
    a2.legend(fontsize=8, framealpha=0.9)  # an opaque box: the baseline lines may run behind it
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(dims)
        ax.set_xticklabels([str(d) for d in dims])
        ax.set_xlabel("dimension")
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    return _save(fig, path)
