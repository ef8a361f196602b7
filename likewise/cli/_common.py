"""What every ``likewise`` command shares: the subcommand factory, argument types and output.

A command module defines ``register(commands)`` and adds its subcommands with :meth:`Commands.add`,
which gives each one the shared ``--json`` / ``--debug`` options. This module imports only the standard
library at import time, so building the parser never loads numpy, numba or pyarrow.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from likewise.readers import InputSpec
    from likewise.space.embeddings import Embeddings

__all__ = [
    "Commands",
    "add_cache_dir",
    "emit",
    "emit_fields",
    "fields_table",
    "format_value",
    "input_group",
    "input_spec",
    "k_option",
    "load_space",
    "answers_payload",
    "neighbour_table",
    "titled",
    "positive_int",
    "seed_option",
    "skip_unknown_option",
    "text_table",
    "type_option",
    "types_of",
]


# --- the parser --------------------------------------------------------------------------------------


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """``--help`` shows each option's default, so nobody has to read the code to learn ``-k`` is 10."""

    @staticmethod
    def _shows_default(action: argparse.Action) -> bool:
        d = action.default
        return (
            bool(action.option_strings)
            and d is not None
            and d is not argparse.SUPPRESS
            and not isinstance(d, bool)
        )

    def add_argument(self, action: argparse.Action) -> None:
        if action.help is None and self._shows_default(action):
            action.help = "default: %(default)s"
        super().add_argument(action)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if not self._shows_default(action) or "default" in text:
            return text
        return f"{text} (default: %(default)s)"


# what users of other tools type, and the option likewise calls it
OTHER_NAMES = {"--customer-col": "--user-col", "--product-col": "--item-col", "--topn": "-k", "--top-k": "-k"}


def unknown_options_hint(parser: argparse.ArgumentParser, argv: Sequence[str], extra: Sequence[str]) -> str:
    """A ``(did you mean ...)`` for unrecognized options, from the chosen command's own options."""
    import difflib

    node = parser
    for word in argv:  # down to the (sub)command the words chose
        subs = [a for a in node._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and word in subs[0].choices:
            node = subs[0].choices[word]
    known = [o for a in node._actions for o in a.option_strings]
    hints = []
    for word in extra:
        name = word.split("=", 1)[0]
        if not name.startswith("-"):
            continue
        near = OTHER_NAMES.get(name) or next(iter(difflib.get_close_matches(name, known, 1, 0.6)), None)
        if near and near in known:
            hints.append(f"{name}: did you mean {near}?")
    return f" ({'; '.join(hints)})" if hints else ""


class Commands:
    """The subcommands of one parser, each made with the shared ``--json`` and ``--debug`` options.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        What ``ArgumentParser.add_subparsers`` returned.
    common : argparse.ArgumentParser, optional
        The parent parser with the shared options; made here when not given (a nested group passes its
        own on, so ``likewise datasets retail --json`` works as ``likewise info --json`` does).
    """

    def __init__(self, sub: argparse._SubParsersAction, common: argparse.ArgumentParser | None = None):
        if common is None:
            common = argparse.ArgumentParser(add_help=False)
            common.add_argument("--json", action="store_true", help="print JSON instead of a table")
            common.add_argument("--debug", action="store_true", help="show the traceback on errors")
        self.sub = sub
        self.common = common

    def add(
        self,
        name: str,
        func: Callable[[argparse.Namespace], None],
        help: str,
        description: str | None = None,
    ) -> argparse.ArgumentParser:
        """Add subcommand ``name`` that runs ``func(args)``.

        Parameters
        ----------
        name : str
            The word on the command line.
        func : callable
            Called with the parsed arguments; :func:`likewise.cli.main` turns its errors into exit codes.
        help, description : str
            The line in ``likewise --help`` and the paragraph in ``likewise NAME --help``.

        Returns
        -------
        argparse.ArgumentParser
            The subcommand's parser, for its own arguments.
        """
        p = self.sub.add_parser(
            name,
            parents=[self.common],
            help=help,
            description=description,
            formatter_class=DefaultsHelpFormatter,
        )
        p.set_defaults(func=func)
        return p

    def group(self, name: str, help: str, dest: str, metavar: str) -> Commands:
        """Add subcommand ``name`` that has subcommands of its own (``likewise datasets retail``).

        Returns
        -------
        Commands
            Where the group's subcommands are added; ``args.<dest>`` names the one chosen.
        """
        p = self.sub.add_parser(name, parents=[self.common], help=help, formatter_class=DefaultsHelpFormatter)
        return Commands(p.add_subparsers(dest=dest, required=True, metavar=metavar), self.common)


def positive_int(s: str) -> int:
    """An argument type: an integer >= 1 (argparse reports anything else as a usage error).

    Parameters
    ----------
    s : str
        The text given on the command line.

    Returns
    -------
    int
    """
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not an integer") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} must be >= 1")
    return v


def type_option(p: argparse.ArgumentParser, default: str = "every type but attributes") -> None:
    """``--type T`` (repeatable, or ``a,b``): in a typed space, answer with items of these types only
    (``default`` says which when it is not given)."""
    p.add_argument(
        "--type",
        dest="types",
        action="append",
        default=None,
        metavar="TYPE",
        help=f"typed space: only items of this type (repeat, or a,b); default: {default}",
    )


def types_of(args: argparse.Namespace) -> list[str] | None:
    """The types ``--type`` named (None when it was not given).

    Parameters
    ----------
    args : argparse.Namespace

    Returns
    -------
    list of str or None
    """
    raw = getattr(args, "types", None)
    if not raw:
        return None
    return [t.strip() for part in raw for t in part.split(",") if t.strip()]


def input_group(p: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The "input" group with the reader options of every command that reads INPUT files.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.

    Returns
    -------
    argparse._ArgumentGroup
        The group, for the command's own input options.
    """
    g = p.add_argument_group("input")
    g.add_argument(
        "--format",
        default="auto",
        choices=["auto", "text", "csv", "parquet", "jsonl"],
        help="the input's format (auto: from the file name and content)",
    )
    g.add_argument("--delimiter", default=None, help="item separator in text; field separator in CSV")
    g.add_argument(
        "--tokenize",
        default="none",
        choices=["none", "simple"],
        help="text: none (default) keeps items as written, split at whitespace; simple lower-cases and "
        "splits at punctuation, as gensim's simple_preprocess",
    )
    g.add_argument("--basket-col", default=None, help="log column naming the basket / order / session")
    g.add_argument("--item-col", default=None, help="log column naming the item")
    g.add_argument("--order-col", default=None, help="log column ordering items inside a basket")
    g.add_argument(
        "--query",
        default=None,
        metavar="SQL",
        help="read the log by this query; INPUT is then the database: postgresql://user@host/db, "
        "sqlite:///orders.db, a .duckdb file, or duckdb: for DuckDB's SQL over Parquet/CSV files",
    )
    return g


def k_option(p: argparse._ActionsContainer, func: Callable[..., Any], what: str = "answers") -> None:
    """``-k N``: how many answers, its default that of ``func``'s ``k``.

    Parameters
    ----------
    p : argparse parser or group
    func : callable
        The library function the command calls.
    what : str
        What is counted, for ``--help``.
    """
    from likewise._check import default_of

    p.add_argument(
        "-k", type=positive_int, default=default_of(func, "k"), help=f"{what} (default: %(default)s)"
    )


def seed_option(p: argparse._ActionsContainer, func: Callable[..., Any], help: str | None = None) -> None:
    """``--seed S``, its default that of ``func``'s ``seed`` (what the command's library function uses).

    Parameters
    ----------
    p : argparse parser or group
    func : callable
        The library function the command seeds.
    help : str, optional
        What the seed seeds.
    """
    from likewise._check import default_of

    seed = default_of(func, "seed")
    p.add_argument("--seed", type=int, default=seed, help=f"{help or 'random seed'} (default: {seed})")


def skip_unknown_option(p: argparse._ActionsContainer, help: str) -> None:
    """``--skip-unknown``: sets ``args.on_unknown`` to the library's ``"skip"`` (else ``"raise"``).

    Parameters
    ----------
    p : argparse parser or group
    help : str
    """
    p.add_argument(
        "--skip-unknown", dest="on_unknown", action="store_const", const="skip", default="raise", help=help
    )


def add_cache_dir(g: argparse._ActionsContainer) -> None:
    """``--cache-dir``, last in the input group of every command that compiles a corpus."""
    g.add_argument(
        "--cache-dir",
        default=None,
        help="where compiled corpora are cached (default: $LIKEWISE_CACHE, else ~/.cache/likewise/corpora); "
        "$LIKEWISE_CACHE_MAX bounds it (bytes, 500M, 2G; default 2G; least recently used removed)",
    )


def input_spec(args: argparse.Namespace) -> InputSpec:
    """The :class:`~likewise.readers.InputSpec` of ``args.input`` and the options of :func:`input_group`.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments of a command that called :func:`input_group`.

    Returns
    -------
    likewise.readers.InputSpec
    """
    from likewise.errors import InputError
    from likewise.readers import InputSpec

    query = getattr(args, "query", None)
    if query is not None and len(args.input) != 1:
        raise InputError(f"--query runs on one database: give its URI as INPUT, got {len(args.input)}")
    return InputSpec(
        paths=() if query is not None else tuple(args.input),
        sql=query,
        uri=args.input[0] if query is not None else None,
        format=args.format,
        delimiter=args.delimiter,
        basket_col=args.basket_col,
        item_col=args.item_col,
        order_col=args.order_col,
        tokenize=getattr(args, "tokenize", "none"),
    )


def load_space(path: str) -> Embeddings:
    """The saved space at ``path``, memory-mapped (a query reads only the rows it needs).

    Parameters
    ----------
    path : str
        A folder written by ``likewise train`` or :meth:`~likewise.Embeddings.save`.

    Returns
    -------
    likewise.Embeddings
    """
    from likewise.space.embeddings import Embeddings

    return Embeddings.load(path, mmap=True)


# --- output ------------------------------------------------------------------------------------------


def format_value(v: Any) -> str:
    """One table cell: large numbers with thousands separators, floats to four places.

    Parameters
    ----------
    v : Any

    Returns
    -------
    str
    """
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10_000:
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}" if abs(v) < 0.01 and v else f"{v:.4f}"
    return str(v)


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows as an aligned text table (numbers right-aligned).

    Parameters
    ----------
    headers : sequence of str
    rows : sequence of sequences
        One value per header; a column is right-aligned when its first row holds a number.

    Returns
    -------
    str
    """
    cells = [[format_value(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    right = [bool(rows) and isinstance(rows[0][i], int | float) for i in range(len(headers))]

    def line(vals: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(vals, widths, right, strict=True))

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    return "\n".join(s.rstrip() for s in out)


def fields_table(fields: Iterable[tuple[str, Any]]) -> str:
    """(name, value) pairs as the two-column table of a summary.

    Parameters
    ----------
    fields : iterable of (str, Any)
        E.g. ``summary.items()``.

    Returns
    -------
    str
    """
    return text_table(["", "value"], [[k, v] for k, v in fields])


def neighbour_table(
    pairs: Iterable[tuple[str, float]] | Any,
    what: str = "item",
    score: str = "score",
    count: str | None = None,
) -> str:
    """Ranked results as a numbered table: ``#``, ``what``, its display name when the space knows names,
    ``score`` and, with ``count``, each answer's evidence under that header.

    Parameters
    ----------
    pairs : one query's likewise.Neighbours, or an iterable of (str, float)
        Ranked results, best first.
    what, score : str
        The headers of the key and score columns.
    count : str, optional
        The header of a column of each answer's count in training (its ``count`` record field).

    Returns
    -------
    str
    """
    if hasattr(pairs, "records"):  # a Neighbours is not iterable: it refuses tuple unpacking
        recs = pairs.records()
        named = any(r["name"] is not None for r in recs)
        counted = count is not None and any(r["count"] is not None for r in recs)
        if named or counted:
            head = ["#", what, *(["name"] if named else []), score, *([count] if counted else [])]
            rows = [
                [i + 1, r["item"], *([r["name"] or ""] if named else []), r["score"]]
                + ([f"{r['count']:,}" if r["count"] is not None else ""] if counted else [])
                for i, r in enumerate(recs)
            ]
            return text_table(head, rows)
        pairs = pairs.pairs()
    return text_table(["#", what, score], [[i + 1, k, float(s)] for i, (k, s) in enumerate(pairs)])


def titled(emb: Any, written: str, item: Any) -> str:
    """An item as the user wrote it, with its display name after it when the space knows one (and the
    user did not write the name itself): ``840361 (Private EGGS - LARGE 1 DZ)``.

    Parameters
    ----------
    emb : likewise.Embeddings
    written : str
        The item as typed.
    item : str or likewise.Row
        The item as parsed.

    Returns
    -------
    str
    """
    name = emb.name_of(item)
    return written if name is None or name == written else f"{written} ({name})"


def answers_payload(answers: Any, **facts: Any) -> dict[str, Any]:
    """A query's ``--json``: the one envelope the HTTP service answers with too.

    Parameters
    ----------
    answers : iterable of (query, likewise.Neighbours)
        One query's answer each, the query as the user typed it.
    **facts
        What the command fixed for every answer (``method``, ...).

    Returns
    -------
    dict
        :func:`likewise.space.results.envelope`: ``{"answers": [{"query", "results"}], **facts}``.
    """
    from likewise.space.results import envelope

    return envelope(answers, **facts)


def emit(args: argparse.Namespace, payload: Any, text: str) -> None:
    """Print ``payload`` as JSON when ``--json`` was given, else ``text``.

    Parameters
    ----------
    args : argparse.Namespace
    payload : Any
        JSON-serialisable result.
    text : str
        The same result for a person.
    """
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print(text)


def emit_fields(args: argparse.Namespace, summary: dict[str, Any]) -> None:
    """Print ``summary`` as JSON (``--json``) or as a two-column table of its fields.

    Parameters
    ----------
    args : argparse.Namespace
    summary : dict
    """
    emit(args, summary, fields_table(summary.items()))
