"""Approximate nearest-neighbour search for big catalogues, behind the same queries as exact search.

Read top to bottom:

1. :class:`HnswIndex` -- an HNSW graph (hnswlib, inner product on the unit vectors) over every item of one
   space, tagged with that space's fingerprint, with the recall@10 measured against exact search when it
   was built. Saved beside the model as ``MODEL/index/`` (``hnsw.bin`` + ``manifest.json``), written to a
   temporary folder and renamed into place. The graph file is read on first use, so loading a model
   with an index stays cheap.
2. :func:`build_index` -- builds it from an :class:`~likewise.space.embeddings.Embeddings` and measures
recall.
3. :func:`~likewise.index.ann_top_k` -- what :meth:`Embeddings.similar` and friends reach through the
   space's :class:`~likewise.index.IndexSearcher` when an index is attached and no ``restrict`` is
   given: ask the graph for ``k`` + (number of excluded items) candidates, drop the excluded ones, and
   rescore the rest exactly on the unit vectors, so scores are the same cosines exact search returns
   and ties are broken by id the same way. When the graph cannot answer (``k`` close to the table size)
   it returns ``None`` and the searcher falls back to exact search.

Why hnswlib: ``bench/index_recall.py`` compares hnswlib, faiss (``IndexHNSWFlat``) and usearch with the
same HNSW parameters on 1 M clustered vectors; at equal per-query latency hnswlib had the best recall@10,
it built fastest, and it is the smallest dependency with a one-file save (figures in docs/serve.md).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .._fileio import atomic_folder, file_entry, file_sha256, finite_json, fsync_file, tidy, write_text
from .._readfile import field, read_json
from .._targets import check_target
from ..errors import CorruptModelError, InputError, MissingDependencyError, SpaceMismatchError, shown
from ._graphfile import check_graph
from ._query import Space, check_search, measure_recall

__all__ = [
    "INDEX_DIR",
    "HnswIndex",
    "IndexParams",
    "attach_saved_index",
    "build_index",
    "index_folder",
]

INDEX_DIR = "index"  # the index of MODEL lives in MODEL/index/
FORMAT = "likewise.index"
FORMAT_VERSION = 1
LIBRARY = "hnswlib"
_GRAPH = "hnsw.bin"
_MANIFEST = "manifest.json"


class AttachingSpace(Space, Protocol):
    """A space that takes an index (:meth:`Embeddings.attach_index`): what :func:`attach_saved_index`
    needs."""

    def attach_index(self, index: Any) -> None: ...


def _hnswlib() -> Any:
    try:
        import hnswlib
    except ImportError:
        raise MissingDependencyError("hnswlib", "index", "approximate nearest-neighbour search") from None
    return hnswlib


def index_folder(model: str | os.PathLike) -> Path:
    """Where the index of the model saved at ``model`` lives (``model/index``)."""
    return Path(model) / INDEX_DIR


def check_index_target(folder: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """Raise now if an index could not be saved to ``folder`` (see :meth:`HnswIndex.save`), so a build
    is not wasted: an existing index is replaced only with ``overwrite``, never a folder that is not an
    index or that holds a saved folder, and ``folder`` lies inside no saved folder but as its space's
    own ``index/`` (:func:`likewise._targets.check_target`)."""
    return check_target(folder, overwrite=overwrite, fmt=FORMAT, what="likewise index", own_part=True)


@dataclass(frozen=True)
class IndexParams:
    """HNSW parameters.

    Attributes
    ----------
    m : int
        Links per node (hnswlib ``M``); more links, better recall, more memory.
    ef_construction : int
        Candidate list size while building; more, better graph, slower build.
    ef_search : int
        Candidate list size while searching (raised to ``k`` when a query asks for more).
    seed : int
        Seed of the level assignment, so a build is reproducible on one thread.
    """

    m: int = 16
    ef_construction: int = 200
    ef_search: int = 128
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("m", "ef_construction", "ef_search"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 2:
                raise InputError(f"{name} == {v!r}, must be an int >= 2")


class HnswIndex:
    """An approximate nearest-neighbour index over the unit vectors of one space.

    Not built directly: use :func:`build_index` or :meth:`load`.

    Attributes
    ----------
    fingerprint : str
        Fingerprint of the space the index was built on.
    size, dim : int
        Items and dimensions of that space.
    params : IndexParams
        HNSW parameters.
    info : dict
        What the build measured: ``recall_at_10`` (against exact search), ``recall_queries``,
        ``ms_per_query`` and ``build_seconds``.
    """

    library = LIBRARY

    def __init__(
        self,
        graph: Any,
        *,
        fingerprint: str,
        size: int,
        dim: int,
        params: IndexParams,
        info: dict | None = None,
        source: Path | None = None,
    ) -> None:
        self._graph = graph
        self._source = source  # graph file to read on first use when ``graph`` is None
        self._lock = threading.Lock()
        self.fingerprint = fingerprint
        self.size = int(size)
        self.dim = int(dim)
        self.params = params
        self.info = dict(info or {})

    def __repr__(self) -> str:
        recall = self.info.get("recall_at_10")
        r = f", recall@10={recall:.4f}" if isinstance(recall, float) else ""
        size = f"{self.size} items × {self.dim} dims"
        return f"HnswIndex({self.library}, {size}{r}, fingerprint={self.fingerprint!r})"

    @property
    def loaded(self) -> bool:
        """True once the graph is in memory."""
        return self._graph is not None

    def warm(self) -> None:
        """Read the graph now rather than on the first search (a server does this before serving)."""
        self._get_graph()

    def _get_graph(self) -> Any:
        if self._graph is None:
            with self._lock:
                if self._graph is None:
                    hnswlib = _hnswlib()
                    check_graph(self._source, self.size, self.dim)  # hnswlib trusts the file; a bad id kills
                    g = hnswlib.Index(space="ip", dim=self.dim)
                    try:
                        g.load_index(str(self._source), max_elements=self.size)
                        g.set_ef(self.params.ef_search)
                    except (RuntimeError, OverflowError, MemoryError) as e:  # a damaged graph file
                        raise CorruptModelError(
                            f"cannot read the index graph {str(self._source)!r}: {e}"
                        ) from e
                    if g.get_current_count() != self.size:
                        raise CorruptModelError(
                            f"index graph {str(self._source)!r} holds {g.get_current_count()} items, "
                            f"its manifest says {self.size}"
                        )
                    self._graph = g
        return self._graph

    def search(self, queries: np.ndarray, k: int) -> np.ndarray:
        """:meth:`NeighbourIndex.search`, approximately (recall measured in ``info["recall_at_10"]``).

        Raises
        ------
        RuntimeError
            When the graph cannot return ``k`` results for some query (hnswlib's own error).
        """
        k = check_search(queries, k, self.size, self.dim)
        graph = self._get_graph()
        # hnswlib searches with max(ef, k) candidates, so a large k needs no change of the shared ef
        labels, _ = graph.knn_query(queries, k=k, num_threads=1)
        return labels.astype(np.int64, copy=False)

    # ---- persistence -----------------------------------------------------------------------------------

    def manifest(self) -> dict[str, Any]:
        """The JSON manifest saved with the index."""
        hnswlib = _hnswlib()
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "library": self.library,
            "library_version": getattr(hnswlib, "__version__", None),
            "space": "ip on unit vectors",
            "fingerprint": self.fingerprint,
            "size": self.size,
            "dim": self.dim,
            "params": asdict(self.params),
            **self.info,
        }

    def save(self, folder: str | os.PathLike, *, overwrite: bool = False) -> Path:
        """Write the index to ``folder`` (usually :func:`index_folder` of the model), atomically.

        Everything is written into a temporary folder beside the target, then renamed into place; an
        existing index is replaced only with ``overwrite=True``, and never a folder that is not an index
        or that holds a saved folder (:func:`check_index_target`).
        """
        target = check_index_target(folder, overwrite=overwrite)
        graph = self._get_graph()
        with atomic_folder(target) as tmp:
            graph.save_index(str(tmp / _GRAPH))
            fsync_file(tmp / _GRAPH)  # hnswlib writes it without an fsync (atomic_folder would flush it too)
            manifest = self.manifest()
            manifest["files"] = {_GRAPH: file_entry(tmp / _GRAPH)}
            write_text(tmp / _MANIFEST, finite_json(manifest, "an index manifest", indent=2) + "\n")
        self._source = target / _GRAPH
        return target

    @classmethod
    def load(cls, folder: str | os.PathLike, *, verify: bool = True) -> HnswIndex:
        """Read an index folder's manifest (the graph itself is read on first search).

        Parameters
        ----------
        folder : str or path-like
            A folder written by :meth:`save`.
        verify : bool
            Check the graph file's sha256 against the manifest (its size is always checked).
        """
        folder = Path(folder)
        manifest = read_json(folder / _MANIFEST, what="an index folder")
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise CorruptModelError(f"{str(folder / _MANIFEST)!r} is not a likewise index manifest")
        if manifest.get("format_version") != FORMAT_VERSION or manifest.get("library") != LIBRARY:
            raise CorruptModelError(
                f"index {str(folder)!r} is format version {manifest.get('format_version')!r} built with "
                f"{manifest.get('library')!r}; this likewise reads version {FORMAT_VERSION} ({LIBRARY})"
            )
        mpath = folder / _MANIFEST
        fingerprint = field(manifest, "fingerprint", str, mpath)
        size = field(manifest, "size", int, mpath)
        dim = field(manifest, "dim", int, mpath)
        params = field(manifest, "params", dict, mpath)
        entry = field(field(manifest, "files", dict, mpath), _GRAPH, dict, mpath)
        if size < 1 or dim < 1:
            raise CorruptModelError(f"{str(mpath)!r} says {size} items of {dim} dims; both must be >= 1")
        try:
            params = IndexParams(**params)
        except (TypeError, InputError) as e:
            raise CorruptModelError(f"{str(mpath)!r}: params {shown(params)} are not valid: {e}") from None
        gpath = folder / _GRAPH
        if not gpath.is_file():
            raise CorruptModelError(f"index {str(folder)!r} is missing {_GRAPH}")
        gsize = gpath.stat().st_size
        if gsize != entry.get("bytes"):
            raise CorruptModelError(
                f"{str(gpath)!r} has {gsize} bytes, the manifest says {entry.get('bytes')!r}"
            )
        if size * dim * 4 > gsize:  # each item's float32 vector is in the graph: hnswlib would allocate
            raise CorruptModelError(  # what the manifest claims before reading a byte
                f"{str(mpath)!r} says {size} items of {dim} dims, more than the {gsize} bytes of "
                f"{_GRAPH} can hold"
            )
        if verify and file_sha256(gpath) != entry.get("sha256"):
            raise CorruptModelError(f"{str(gpath)!r} fails its sha256 check: the file is damaged")
        info = {
            k: manifest[k]
            for k in ("recall_at_10", "recall_queries", "ms_per_query", "build_seconds")
            if isinstance(manifest.get(k), int | float) and not isinstance(manifest.get(k), bool)
        }
        return cls(None, fingerprint=fingerprint, size=size, dim=dim, params=params, info=info, source=gpath)


def build_index(
    emb: Space,
    params: IndexParams | None = None,
    *,
    threads: int | None = None,
    recall_queries: int = 1000,
) -> HnswIndex:
    """Build an HNSW index over ``emb`` and measure its recall@10 against exact search.

    Parameters
    ----------
    emb : Embeddings
        The space.
    params : IndexParams, optional
        HNSW parameters (defaults: M=16, ef_construction=200, ef_search=128).
    threads : int, optional
        Build threads (default: all cores). With one thread the build is reproducible.
    recall_queries : int
        Items (drawn with ``params.seed``) queried both ways to measure recall@10; 0 skips it.

    Returns
    -------
    HnswIndex
        Not attached: call ``emb.attach_index(index)`` to route queries through it.
    """
    hnswlib = _hnswlib()
    params = params or IndexParams()
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise InputError(f"threads == {threads!r}, must be an int >= 1 or None")
    normed = np.ascontiguousarray(emb.normed)
    t0 = time.perf_counter()
    g = hnswlib.Index(space="ip", dim=emb.dim)
    g.init_index(
        max_elements=len(emb), M=params.m, ef_construction=params.ef_construction, random_seed=params.seed
    )
    g.add_items(normed, np.arange(len(emb)), num_threads=threads or (os.cpu_count() or 1))
    g.set_ef(params.ef_search)
    index = HnswIndex(
        g,
        fingerprint=emb.fingerprint,
        size=len(emb),
        dim=emb.dim,
        params=params,
        info={"build_seconds": round(time.perf_counter() - t0, 3)},
    )
    if recall_queries:
        recall, ms = measure_recall(emb, index, n_queries=recall_queries, k=10, seed=params.seed)
        index.info.update(recall_at_10=recall, recall_queries=min(recall_queries, len(emb)), ms_per_query=ms)
    return index


def attach_saved_index(
    emb: AttachingSpace, model: str | os.PathLike, *, verify: bool = True
) -> HnswIndex | None:
    """Attach the index saved beside ``model`` to ``emb`` if there is one; returns it (or None).

    An index built on another space (a model saved again without rebuilding its index) is ignored with a
    :class:`UserWarning`: exact search still gives right answers, only slower. A damaged index raises
    :class:`~likewise.errors.CorruptModelError`.
    """
    import warnings

    folder = index_folder(model)
    tidy(folder)
    if not os.path.lexists(folder / _MANIFEST):  # present but not a regular file: load says so
        return None
    try:
        _hnswlib()
    except MissingDependencyError as e:
        warnings.warn(f"ignoring the index in {str(folder)!r}: {e}; queries use exact search", stacklevel=3)
        return None
    index = HnswIndex.load(folder, verify=verify)
    try:
        emb.attach_index(index)
    except (SpaceMismatchError, InputError) as e:
        warnings.warn(
            f"ignoring the index in {str(folder)!r}: {e}; queries use exact search "
            f"(rebuild it with `likewise index {str(model)!r} --overwrite`)",
            UserWarning,
            stacklevel=3,
        )
        return None
    return index
