"""The models a server holds, by name, and their atomic replacement while serving.

A :class:`Served` bundles one loaded space with what the HTTP layer precomputes for it (the sorted keys
for prefix search, the 2-D map, the item attributes of :mod:`likewise.service.attrs`).
:class:`Registry` maps names to ``Served`` objects. A reload
builds a complete new ``Served`` off to the side -- loading, normalising, reading the index graph,
computing the map -- and only then replaces the dict entry in one assignment, so a request that already
holds the old object finishes on it and the next one sees the new one: no request ever sees a half-loaded
model.

Loads run on one thread of the registry's own (:meth:`Registry.reload_soon`), whoever asks: a reload
occupies no worker of the server while it waits, so any number of them never starve the queries; a
reload of a folder whose identity (:func:`_stamp`, what the watcher compares) has not changed is a no-op
that returns the served version; and reloads of one model asked while one is queued share it. No
framework import here: this module is plain Python and NumPy.
"""

from __future__ import annotations

import bisect
import re
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, UnknownItemError
from . import projection as proj
from .attrs import ItemAttrs, read_item_attrs
from .respond import coordinates
from .textsearch import TextIndex

__all__ = ["NAME_PATTERN", "ModelSpec", "Registry", "Served", "parse_model_arg"]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

#: Maps kept per model (distinct ``sample`` sizes, least recently used dropped first).
MAP_CACHE = 8

#: Prefix lengths tried when suggesting keys for an unknown one.
PREFIX_TRIES = 64


@dataclass(frozen=True)
class ModelSpec:
    """A model to serve: its URL name, its folder, and an optional item table (names and attributes to show,
    search and colour the map by: :func:`~likewise.service.attrs.read_item_attrs`)."""

    name: str
    path: Path
    labels_path: Path | None = None
    name_col: str | None = None  # the item table's column of display names (default: chosen by its name)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not NAME_PATTERN.match(self.name) or ".." in self.name:
            raise InputError(
                f"model name {self.name!r} is not allowed: use 1-64 letters, digits, '_', '-' or '.', "
                "starting with a letter or digit (a name, not a path)"
            )


def parse_model_arg(arg: str) -> ModelSpec:
    """``NAME=PATH`` or ``PATH`` (the name is then the folder's name) as a :class:`ModelSpec`."""
    if "=" in arg:
        name, _, path = arg.partition("=")
    else:
        path = arg
        # the folder's own name, also for '.', '..' or 'x/..' (whose last part names no folder)
        name = Path(arg.rstrip("/") or "/").resolve().name if arg else ""
        if arg and not name:
            raise InputError(f"{arg!r} names no folder to call the model by: give NAME={arg}")
    if not path:
        raise InputError(f"model argument {arg!r} has no path: give NAME=PATH or PATH")
    return ModelSpec(name, Path(path))


@dataclass
class Served:
    """One loaded model and its precomputed lookups."""

    spec: ModelSpec
    emb: Any  # likewise.Embeddings
    version: int
    loaded_at: float
    stamp: tuple
    attrs: ItemAttrs | None = None
    runner: proj.Runner | None = None  # where its t-SNE job runs (the registry's, shared by all versions)
    text: TextIndex | None = None  # names, values, key substrings and typos for the search box
    _sorted_keys: list[str] = field(default_factory=list, repr=False)
    _sorted_ids: np.ndarray | None = field(default=None, repr=False)
    # maps by sample size, least recently used first: a stream of distinct sizes keeps at most MAP_CACHE
    _maps: OrderedDict[int, tuple[dict, np.ndarray, np.ndarray]] = field(
        default_factory=OrderedDict, repr=False
    )
    _map_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # second projections (t-SNE, UMAP) by name and sample size: computed once, in the background, then kept
    _jobs: OrderedDict[tuple[str, int], proj.Job] = field(default_factory=OrderedDict, repr=False)

    def search(self, query: str, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` items for the search box: keys that start with ``query`` first (``"key"``), then
        names, attribute values, key substrings and, when nothing matched, close (mistyped) words
        (:meth:`~likewise.service.textsearch.TextIndex.find`); each as ``(id, how)``."""
        out = [(i, "key") for i in self.search_prefix(query, limit)]
        if len(out) < limit and self.text is not None and query.strip():
            out += self.text.find(query, limit - len(out), exclude={i for i, _ in out})
        return out[:limit]

    def describe(self, ids: list[int]) -> dict:
        """The attribute fields of an answer about items ``ids`` (nothing without an item table)."""
        a = self.attrs
        if a is None:
            return {"labels": None}
        return {
            "labels": [a.groups[a.colour_column][i] for i in ids] if a.colour_column else None,
            "attributes": a.of(ids),
            # colour groups only where they differ from the values (numeric columns cut into bands)
            "groups": {
                c: [a.groups[c][i] for i in ids] for c in a.colourable if a.groups[c] is not a.values[c]
            },
            "colourable": a.colourable,
            "name_column": a.name_column,
            "colour_column": a.colour_column,
            "numeric": a.numeric,  # quantities, drawn on a gradient; ids are categories
        }

    def search_prefix(self, prefix: str, limit: int) -> list[int]:
        """Ids of up to ``limit`` items whose key starts with ``prefix`` (case-insensitive), most frequent
        first (ids are ordered by descending count)."""
        if self._sorted_ids is None:  # set by Registry when it loads the model
            return []
        p = prefix.casefold()
        lo = bisect.bisect_left(self._sorted_keys, p)
        hi = bisect.bisect_left(self._sorted_keys, p + "\U0010ffff")
        ids = self._sorted_ids[lo:hi]
        if len(ids) > limit:
            ids = np.partition(ids, limit - 1)[:limit]
        return np.sort(ids).tolist()

    def suggestions(self, key: str, n: int = 3) -> list[str]:
        """Close keys for an unknown one: what the search box finds for it (names, typos), else the
        vocabulary's own suggestions, else prefix matches; never an item of a hidden type."""
        keys = self.emb.keys
        found = [keys[i] for i, _ in self.search(key, n)] if len(key) <= PREFIX_TRIES else []
        if found:
            return found
        try:
            self.emb.vocab.id(key)
        except UnknownItemError as e:
            shown = [s for s in e.suggestions if not self.hidden(s)]  # attr: tokens are never suggested
            if shown:
                return shown[:n]
        except Exception:  # noqa: BLE001 -- a suggestion is a courtesy; never fail the error answer on it
            pass
        # the longest known prefix, trying at most PREFIX_TRIES cuts: bounded work for any key length
        for cut in range(min(len(key), PREFIX_TRIES), 0, -1):
            found = self.search_prefix(key[:cut], n)
            if found:
                return [keys[i] for i in found]
        return []

    def hidden(self, key: str) -> bool:
        """Whether ``key`` is an item of a hidden type (an ``attr:`` token): never listed or suggested."""
        types, index = self.emb.types, self.emb.vocab.index
        return types is not None and key in index and types.type_of(index[key]) in types.hidden

    def listed_ids(self) -> np.ndarray:
        """The ids a list may show, most frequent first: every item but those of hidden types."""
        types = self.emb.types
        return np.arange(len(self.emb), dtype=np.int64) if types is None else types.ids(None)

    def map(self, sample: int) -> dict:
        """2-D PCA coordinates of the ``sample`` most frequent items (kept for the last few sizes asked).

        The principal axes are fitted on those items (the unit vectors); :meth:`project` places any other
        item on the same axes, so a neighbour outside the sample can still be shown.
        """
        return self._map(sample)[0]

    def _map(self, sample: int) -> tuple[dict, np.ndarray, np.ndarray]:
        with self._map_lock:
            hit = self._maps.get(sample)
            if hit is not None:
                self._maps.move_to_end(sample)
                return hit
            ids = self.map_ids(sample)
            n = len(ids)
            x = np.asarray(self.emb.normed[ids], dtype=np.float64)
            xy, mean, axes = proj.pca(x)
            all_keys = self.emb.keys
            keys = [all_keys[i] for i in ids.tolist()]
            payload = {
                "status": "ready",
                "projection": "pca",
                "items": keys,
                "x": coordinates(xy[:, 0]),
                "y": coordinates(xy[:, 1]),
                **self.describe(ids.tolist()),
                "sampled": n < len(self.emb),
                "total": len(self.emb),
                **self.typed_fields(ids),
            }
            self._maps[sample] = (payload, mean, axes)
            while len(self._maps) > MAP_CACHE:
                self._maps.popitem(last=False)
            return self._maps[sample]

    def map_ids(self, sample: int) -> np.ndarray:
        """The items on a map of ``sample``: the most frequent (of the types that are not hidden, in a
        typed space), plus every item placed from its attributes (:mod:`likewise.apps.coldstart`)."""
        emb = self.emb
        types = emb.types
        ids = np.arange(len(emb), dtype=np.int64) if types is None else types.ids(None)
        ids = ids[:sample]
        placed = [emb.vocab.index[k] for k in (emb.meta or {}).get("placed") or () if k in emb.vocab.index]
        if placed:
            ids = np.union1d(ids, np.asarray(placed, dtype=np.int64))
        return ids

    def typed_fields(self, ids: np.ndarray) -> dict:
        """The map's ``types`` (the type of each item, None in an untyped space) and ``placed`` (those of
        its items placed from their attributes rather than trained)."""
        emb = self.emb
        placed = set((emb.meta or {}).get("placed") or ())
        keys = emb.keys
        return {
            "types": None if emb.types is None else [emb.types.type_of(i) for i in ids.tolist()],
            "placed": [keys[i] for i in ids.tolist() if keys[i] in placed],
        }

    def project(self, ids: np.ndarray, sample: int, projection: str = "pca") -> np.ndarray:
        """Coordinates [n, 2] of items ``ids`` on the map of ``sample`` items: on PCA's axes, or on a
        finished t-SNE map near their nearest items there (:func:`~likewise.service.projection.place_near`).
        """
        xy = self.place(np.asarray(self.emb.normed[ids], dtype=np.float64), sample, projection)
        if projection == "pca":
            return xy
        map_ids = self.map_ids(sample)
        result = self.projection_job(sample, projection).result
        # an item on the map keeps its own place
        where = {int(i): r for r, i in enumerate(map_ids.tolist())}
        for row, i in enumerate(np.asarray(ids).tolist()):
            if i in where:
                xy[row] = result[where[i]]
        return xy

    def place(self, x: np.ndarray, sample: int, projection: str = "pca") -> np.ndarray:
        """Coordinates [n, 2] of unit vectors ``x`` [n, D] (items' or customers') on the map of ``sample``
        items: on PCA's axes, or near their nearest items on a finished t-SNE map."""
        if projection == "pca":
            _, mean, axes = self._map(sample)
            return (x - mean) @ axes.T
        job = self.projection_job(sample, projection)
        if job.result is None:
            raise InputError(
                f"the {projection} map of {sample} items is not ready yet: ask GET .../map first"
            )
        return proj.place_near(self.emb.normed[self.map_ids(sample)], job.result.copy(), x)

    def projection_job(self, sample: int, projection: str) -> proj.Job:
        """The background job computing the ``projection`` map of ``sample`` items (started on the first
        call, then the same job: each model version computes it once per sample size, on the registry's
        :class:`~likewise.service.projection.Runner`, which keeps one job per model whatever the version)."""
        if self.runner is None:
            raise RuntimeError("a Served made without a projection Runner: Registry makes them with one")
        with self._map_lock:
            job = self._jobs.get((projection, sample))
            if job is not None:
                self._jobs.move_to_end((projection, sample))
                return job
            ids = self.map_ids(sample)
            if len(ids) < 4:
                raise InputError(f"a {projection} map needs at least 4 items, this map has {len(ids)}")
            x = np.asarray(self.emb.normed[ids], dtype=np.float64)
            seed = self.emb.config.seed if self.emb.config is not None else 0
            job = proj.Job(projection, len(ids), total=proj.steps(projection))
            # one job per model and projection: a UMAP job does not cancel the model's t-SNE one
            self.runner.run(
                f"{self.spec.name}/{projection}",
                self.version,
                job,
                lambda report: proj.compute(projection, x, seed=seed, progress=report),
            )
            self._jobs[(projection, sample)] = job
            while len(self._jobs) > MAP_CACHE:
                self._jobs.popitem(last=False)
            return job

    def projected_map(self, sample: int, projection: str) -> tuple[dict, bool]:
        """The map of ``sample`` items in ``projection`` (``"status": "ready"``), and whether it is ready: for
        a t-SNE map still computing (or failed), its job's :meth:`~likewise.service.projection.Job.status`
        instead (``"status": "computing"`` or ``"failed"``)."""
        if projection == "pca":
            return self.map(sample), True
        job = self.projection_job(sample, projection)
        if job.result is None:
            return job.status(), False
        base = self.map(sample)
        xy = job.result
        return {
            **base,
            "status": "ready",
            "projection": projection,
            "x": coordinates(xy[:, 0]),
            "y": coordinates(xy[:, 1]),
            "seconds": job.seconds,
        }, True


def _stamp(spec: ModelSpec) -> tuple:
    """What changes when a new model version (or a new index) is saved at ``spec.path``, or its item table
    (``serve --item-attrs``) is replaced: the identity of the manifests and of the table file."""
    path = spec.path
    out: list[Any] = []
    files = [path / "manifest.json", path / "index" / "manifest.json"]
    for f in files + ([spec.labels_path] if spec.labels_path is not None else []):
        try:
            st = f.stat()
            out.append((st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


class Registry:
    """Models by name; :meth:`reload` swaps one in atomically.

    Parameters
    ----------
    specs : sequence of ModelSpec
        Models to serve (names must be distinct).
    map_sample : int
        Items on the default map.
    projection_workers : int
        t-SNE maps computing at once, over all models (each model has at most one job at a time).
    """

    def __init__(
        self, specs: list[ModelSpec], *, map_sample: int = 3000, projection_workers: int = 1
    ) -> None:
        if not specs:
            raise InputError("no model to serve: give at least one MODEL (NAME=PATH or PATH)")
        names = [s.name for s in specs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InputError(f"model names must be distinct, {dup[0]!r} is given twice")
        self.map_sample = map_sample
        self._specs = {s.name: s for s in specs}
        self._models: dict[str, Served] = {}
        self.projections = proj.Runner(projection_workers)
        # one thread loads, whoever asks; a reload asked while one of its model is queued shares it
        self._loader = ThreadPoolExecutor(1, thread_name_prefix="likewise-load")
        self._queued: dict[str, Future] = {}
        self._queue_lock = threading.Lock()
        for s in specs:
            self._models[s.name] = self._load(s, version=1)

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    def get(self, name: str) -> Served:
        """The current version of model ``name``; unknown names raise :class:`UnknownItemError`."""
        served = self._models.get(name)
        if served is None:
            raise UnknownItemError(name, [n for n in self._specs if n.startswith(name[:1])][:3], what="model")
        return served

    def find(self, name: str) -> Served | None:
        """The current version of model ``name``, or None when no model has that name."""
        return self._models.get(name)

    def _load(self, spec: ModelSpec, version: int) -> Served:
        from ..space.embeddings import Embeddings

        stamp = _stamp(spec)
        emb = Embeddings.load(spec.path, mmap=True)
        emb.normed  # noqa: B018 -- pay the one-off normalisation now, not in the first request
        if emb.index is not None:
            emb.index.warm()  # read the graph now too
        table = emb.customers
        if table is not None and table.history is not None and table.next_basket is not None:
            # next basket's similar-customer arrays, built here once rather than by the first requests
            from ..nextbasket.neighbours import neighbourhood

            neighbourhood(table, len(emb))
        attrs = None
        source = spec.labels_path or emb.item_table  # a file given to serve, else the one trained with
        if source:
            hints = [str((emb.meta or {}).get("attributes", {}).get("item_col") or "")]
            hints += [f"{getattr(emb, 'item_name', None) or 'item'}_id"]
            hints = [h for h in hints if h]
            attrs = read_item_attrs(source, emb.keys, hints=hints, model=spec.name, name_col=spec.name_col)
            if attrs.name_column is not None:  # every answer of this model carries the names
                emb.attach_names(attrs.values[attrs.name_column], column=attrs.name_column)
        folded = [k.casefold() for k in emb.keys]
        listed = range(len(folded)) if emb.types is None else emb.types.ids(None).tolist()
        order = sorted(listed, key=folded.__getitem__)  # hidden tokens (attr:) are never found by prefix
        text = TextIndex(
            emb.keys,
            np.asarray(listed, dtype=np.int64),
            None if attrs is None or attrs.name_column is None else attrs.values[attrs.name_column],
            None if attrs is None else {c: v for c, v in attrs.values.items() if c != attrs.name_column},
        )
        served = Served(
            spec=spec,
            emb=emb,
            version=version,
            loaded_at=time.time(),
            stamp=stamp,
            attrs=attrs,
            runner=self.projections,
            text=text,
            _sorted_keys=[folded[i] for i in order],
            _sorted_ids=np.asarray(order, dtype=np.int64),
        )
        served.map(self.map_sample)
        return served

    def reload_soon(self, name: str) -> Future:
        """A future of :meth:`reload`'s answer, computed on the registry's one loading thread.

        A reload of ``name`` asked while one is queued (not yet started) is that one; one asked while a
        load of it runs is queued behind it (the folder may have changed since that load read it) and
        finds nothing new unless something is. Await it with ``asyncio.wrap_future``: waiting holds no
        thread.
        """
        self.get(name)  # an unknown name is an error now, not in the future
        with self._queue_lock:
            fut = self._queued.get(name)
            if fut is None:
                fut = self._loader.submit(self._reload_now, name)
                self._queued[name] = fut
            return fut

    def _reload_now(self, name: str) -> Served:
        with self._queue_lock:
            self._queued.pop(name, None)  # from now on, a new request queues a new load
        old = self._models[name]
        if _stamp(old.spec) == old.stamp:
            return old  # nothing new on disk: no load, no new version
        new = self._load(old.spec, version=old.version + 1)
        self._models[name] = new  # one assignment: atomic for every reader
        return new

    def reload(self, name: str) -> Served:
        """Load model ``name`` again from its folder and swap it in, if the folder holds something new
        (else the served version); the old one serves until then."""
        return self.reload_soon(name).result()

    def stamp_of(self, name: str) -> tuple:
        """What the folder of model ``name`` holds now (compare with the served version's ``stamp``)."""
        return _stamp(self._specs[name])

    def changed(self) -> list[str]:
        """Names of models whose folder holds a different version than the one served."""
        return [n for n, s in self._models.items() if _stamp(s.spec) != s.stamp]
