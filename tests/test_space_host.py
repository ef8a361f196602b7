"""The mixins of ``Embeddings`` and their host, checked from the source (likewise.space.host).

A mixin uses of ``self`` only what it defines itself or what :class:`~likewise.space.host.SpaceHost`
lists, and those only by public names; ``SpaceHost`` lists exactly what the mixins use, and
``Embeddings`` has all of it. A private name (``self._x``) is used only by the one class that defines it:
a mixin declares its own state at class level, the host stores its own in its methods.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np
import pytest

from likewise.errors import InputError
from likewise.space.embeddings import Embeddings
from likewise.space.host import SpaceHost

MIXINS = [c for c in Embeddings.__mro__[1:] if c is not object]
HOST_MEMBERS = {
    name
    for name in vars(SpaceHost)
    if not name.startswith("_") or name == "__len__"
    if name not in ("_is_protocol", "_is_runtime_protocol")
}


def _class_tree(cls: type) -> ast.ClassDef:
    node = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    assert isinstance(node, ast.ClassDef)
    return node


def _declared(node: ast.ClassDef) -> set[str]:
    """Names a class defines at class level: methods, properties, annotated or assigned attributes."""
    names: set[str] = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign):
            names.update(t.id for t in item.targets if isinstance(t, ast.Name))
    return names


def _stored(node: ast.ClassDef) -> set[str]:
    """Attributes a class's methods assign on ``self``."""
    return {
        n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute)
        and isinstance(n.ctx, ast.Store)
        and isinstance(n.value, ast.Name)
        and n.value.id == "self"
    }


def _used(node: ast.ClassDef) -> dict[str, int]:
    """Every ``self.x`` / ``cls.x`` a class uses (read, write or call), with its first line; ``len(self)``
    counts as ``__len__``."""
    used: dict[str, int] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"):
            used.setdefault(n.attr, n.lineno)
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id == "len"
            and n.args
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id == "self"
        ):
            used.setdefault("__len__", n.lineno)
    return used


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_trespass(classes: dict[str, ast.ClassDef], host: str) -> list[str]:
    """``Class.name`` for each private attribute a class uses that another class defines (or that it
    never defines: a mixin's state must be declared at class level; the host's may be stored)."""
    owners: dict[str, set[str]] = {}
    for name, node in classes.items():
        own = _declared(node) | (_stored(node) if name == host else set())
        for attr in own:
            if _private(attr):
                owners.setdefault(attr, set()).add(name)
    bad = []
    for name, node in classes.items():
        for attr, line in _used(node).items():
            if _private(attr) and owners.get(attr) != {name}:
                bad.append(f"{name}.{attr} (line {line}; defined by {sorted(owners.get(attr, ()))})")
    return bad


def _trees() -> dict[str, ast.ClassDef]:
    return {c.__name__: _class_tree(c) for c in (Embeddings, *MIXINS)}


def test_no_class_reaches_into_another_ones_private_names() -> None:
    bad = private_trespass(_trees(), "Embeddings")
    assert not bad, "private names used outside the class that defines them:\n" + "\n".join(bad)


def test_a_mixin_uses_of_its_host_only_what_space_host_lists() -> None:
    outside: list[str] = []
    needed: set[str] = set()
    for cls in MIXINS:
        node = _class_tree(cls)
        own = _declared(node)
        for attr, line in _used(node).items():
            if attr in own:
                continue
            needed.add(attr)
            if attr not in HOST_MEMBERS:
                outside.append(f"{cls.__name__}.{attr} (line {line})")
    assert not outside, "mixins use names SpaceHost does not list:\n" + "\n".join(outside)
    unused = HOST_MEMBERS - needed
    assert not unused, f"SpaceHost lists names no mixin uses: {sorted(unused)}"


def test_embeddings_is_a_space_host() -> None:
    missing = [name for name in sorted(HOST_MEMBERS) if not hasattr(Embeddings, name)]
    assert not missing, f"Embeddings lacks SpaceHost members: {missing}"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("class A:\n    def f(self):\n        return self._g()\nclass B:\n    def _g(self): ...\n", ["A._g"]),
        ("class A:\n    def f(self):\n        self._x = 1\n", ["A._x"]),  # a mixin's state is declared
        ("class A:\n    _x = None\n    def f(self):\n        return self._x\n", []),
        ("class H:\n    def f(self):\n        self._v = 1\n        return self._v\n", []),  # the host stores
    ],
)
def test_the_guard_sees_what_it_guards(source: str, found: list[str]) -> None:
    tree = ast.parse(source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    got = [b.split(" ")[0] for b in private_trespass(classes, "H")]
    assert got == found


def _space() -> Embeddings:
    from likewise.data.vocab import Vocab

    rng = np.random.default_rng(0)
    vocab = Vocab.from_counts({"a": 5, "b": 4, "c": 3, "d": 2})
    return Embeddings(rng.normal(size=(4, 3)).astype(np.float32), vocab)


def test_replace_vocab_takes_only_the_same_items() -> None:
    from likewise.data.vocab import Vocab

    emb = _space()
    aliased = emb.vocab.with_aliases({"alpha": 0}, {})
    emb.replace_vocab(aliased)
    assert emb.id_of("alpha") == 0 and emb.vocab is aliased
    for other in (
        Vocab.from_counts({"a": 5, "b": 4, "c": 3, "x": 2}),
        Vocab.from_counts({"a": 9, "b": 4}),
        "a",
    ):
        with pytest.raises(InputError, match="replace_vocab takes a Vocab"):
            emb.replace_vocab(other)  # type: ignore[arg-type]


def test_the_affinity_table_follows_the_context_table() -> None:
    """BasketQueries caches its table per context table: attaching another one is seen without the host
    resetting the mixin's cache."""
    emb = _space()
    emb.attach_context(np.ones((4, 3), dtype=np.float32))
    first = emb.affinity_table
    assert emb.affinity_table is first  # cached
    emb.attach_context(np.full((4, 3), 2.0, dtype=np.float32))
    np.testing.assert_array_equal(emb.affinity_table[:, :3], 2.0)
