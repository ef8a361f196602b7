"""2-D maps of an embedding space. PCA is plain NumPy; drawing needs matplotlib (``likewise[plot]``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from .errors import InputError, MissingDependencyError

__all__ = ["pca_coords", "plot_map"]


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
        Name -> label; each label gets a colour and a legend entry.
    annotate : sequence of str or int, optional
        Names to write beside their dots, or the first N rows; default: all when n <= 60.
    title : str
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("matplotlib", "plot", "drawing maps") from None
    path = Path(path)
    if path.suffix.lower() not in (".png", ".svg"):
        raise InputError(f"map file {str(path)!r} must end in .png or .svg")
    coords = np.asarray(coords)
    if coords.ndim != 2 or coords.shape[1] < 2 or len(coords) != len(names):
        raise InputError(f"coords shape {coords.shape} does not match {len(names)} names with 2 columns")
    fig, ax = plt.subplots(figsize=(7, 6), dpi=110)
    if labels:
        groups = sorted({labels.get(n, "?") for n in names})
        cmap = plt.get_cmap("tab10" if len(groups) <= 10 else "tab20")
        for gi, g in enumerate(groups):
            m = np.array([labels.get(n, "?") == g for n in names])
            ax.scatter(coords[m, 0], coords[m, 1], s=36, color=cmap(gi % cmap.N), label=g, alpha=0.85)
        ax.legend(loc="best", fontsize=8, frameon=False)
    else:
        ax.scatter(coords[:, 0], coords[:, 1], s=20, alpha=0.8)
    if annotate is None:
        annotate = len(names) if len(names) <= 60 else 0
    show = set(names[:annotate]) if isinstance(annotate, int) else set(annotate)
    for (x, y), n in zip(coords[:, :2], names, strict=True):
        if n in show:
            ax.annotate(n, (x, y), textcoords="offset points", xytext=(4, 3), fontsize=8)
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(path)
    return path
