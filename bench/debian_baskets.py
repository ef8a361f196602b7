"""Real baskets nobody here wrote: Debian's package lists, as two labelled basket data sets.

``apt-get update`` leaves the archive's ``Packages`` list under ``/var/lib/apt/lists``; every package
there names what it depends on and what it recommends, and most carry debtags. Two data sets follow:

* ``debian-deps`` -- one basket per package: the packages it Depends / Pre-Depends / Recommends on (the
  first of each ``a | b`` alternative, versions and architecture qualifiers dropped, only names that are
  packages of the list). A long-tailed catalogue (libc6 is in 39 % of the baskets, most packages in one
  or two) and baskets of 1 to several hundred items. Label: the item's archive section (``libs``,
  ``python``, ``games``, ...).
* ``debian-tags`` -- one basket per tagged package: its debtags (``role::program``,
  ``implemented-in::python``, ``use::gameplaying``, ...). A small catalogue (about 600 tags) in many
  short baskets. Label: the tag's facet (the part before ``::``).

The lists change only with Debian's point releases; :func:`source_digest` names the file's content so a
report says which one it used. Nothing here is downloaded: without the list (no ``apt-get update`` on
this machine) :func:`debian_sets` raises ``FileNotFoundError`` saying so.
"""

from __future__ import annotations

import glob
import hashlib
import re
import subprocess
from collections.abc import Iterator
from functools import lru_cache

__all__ = ["debian_sets", "packages_file", "source_digest"]

_NAME = re.compile(r"^([a-z0-9][a-z0-9+.-]+)")
_HELPER = "/usr/lib/apt/apt-helper"  # apt's own tool reads the compressed lists (lz4, xz, gz)


def packages_file() -> str:
    """The main archive's ``Packages`` list of this machine (not the security or updates lists)."""
    found = [
        f
        for f in sorted(glob.glob("/var/lib/apt/lists/*_dists_*_main_binary-*_Packages*"))
        if "security" not in f and "-updates_" not in f
    ]
    if not found:
        raise FileNotFoundError(
            "no Debian Packages list under /var/lib/apt/lists: run `apt-get update` (as root) first"
        )
    return found[0]


def _text(path: str) -> str:
    if path.endswith("Packages"):
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    out = subprocess.run([_HELPER, "cat-file", path], capture_output=True, check=True)
    return out.stdout.decode("utf-8", errors="replace")


def _records(text: str) -> Iterator[dict[str, str]]:
    for block in text.split("\n\n"):
        rec: dict[str, str] = {}
        last = None
        for line in block.split("\n"):
            if line[:1] in (" ", "\t") and last:
                rec[last] += " " + line.strip()
            elif ":" in line:
                key, value = line.split(":", 1)
                rec[key] = value.strip()
                last = key
        if "Package" in rec:
            yield rec


def _names(field: str) -> list[str]:
    out = []
    for alternatives in field.split(","):
        m = _NAME.match(alternatives.split("|")[0].strip())
        if m:
            out.append(m.group(1))
    return out


def source_digest() -> str:
    """The first 12 hex digits of the SHA-256 of the list's decompressed text."""
    return hashlib.sha256(_text(packages_file()).encode("utf-8")).hexdigest()[:12]


@lru_cache(maxsize=1)
def debian_sets() -> dict[str, tuple[list[list[str]], dict[str, dict[str, str]]]]:
    """``{"debian-deps": (baskets, labels), "debian-tags": (baskets, labels)}`` from this machine's list.

    ``labels`` is ``{level: {item: label}}`` (level ``section`` for deps, ``facet`` for tags).
    """
    recs = list(_records(_text(packages_file())))
    section = {r["Package"]: r.get("Section", "unknown").split("/")[-1] for r in recs}
    deps, tags = [], []
    for r in recs:
        fields = ",".join(r.get(k, "") for k in ("Pre-Depends", "Depends", "Recommends"))
        basket = list(dict.fromkeys(n for n in _names(fields) if n in section and n != r["Package"]))
        if basket:
            deps.append(basket)
        tagged = list(dict.fromkeys(t.strip() for t in r.get("Tag", "").split(",") if t.strip()))
        if tagged:
            tags.append(tagged)
    used = {x for b in deps for x in b}
    facets = {t: t.split("::")[0] for b in tags for t in b}
    return {
        "debian-deps": (deps, {"section": {k: section[k] for k in used}}),
        "debian-tags": (tags, {"facet": facets}),
    }


if __name__ == "__main__":
    for name, (baskets, labels) in debian_sets().items():
        items = {x for b in baskets for x in b}
        level, lab = next(iter(labels.items()))
        print(f"{name}: {len(baskets):,} baskets, {len(items):,} items, {len(set(lab.values()))} {level}s")
    print("source", packages_file(), source_digest())
