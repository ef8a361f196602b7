"""Text input: one sentence / basket / session per line, items separated by whitespace or a delimiter.

Plain, ``.gz``, ``.bz2`` or ``.zst`` files. :func:`iter_text_sequences` yields one ``list[str]`` per
non-blank line; :func:`iter_text_chunks` yields the same lines in lists of a few megabytes so the corpus
builder pays the Python price per line, not per token.

Text input compiles at ~2.1-2.4 M tokens/s (10 M tokens, 500 k lines, 163 k keys: 4.6 s, 357 MiB
peak; ``str.split`` and the per-token dict lookup are ~70% of it).
"""

from __future__ import annotations

import bz2
import gzip
import io
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..errors import InputError
from ._files import InputSpec, compression, named_files, no_data_error, resolve_files

__all__ = [
    "MAX_ITEM_CHARS",
    "MAX_SEQUENCE_LENGTH",
    "iter_text_chunks",
    "iter_text_sequences",
    "simple_tokens",
]

#: A line with more items than this is cut into sequences of this many, as word2vec does (gensim's
#: ``MAX_WORDS_IN_BATCH`` is 10,000; the C tool's ``MAX_SENTENCE_LENGTH`` is 1,000). A log's order
#: of more lines is cut the same way once grouped (``data.corpus_build.CorpusWriter(max_length=)``).
MAX_SEQUENCE_LENGTH = 10_000
#: The longest item accepted: a run this long without a separator is not a line of items.
MAX_ITEM_CHARS = 1 << 16
# characters of text read (and handed out) at a time: ~15 MiB of str objects, enough to pay Python per
# line not per token, small enough to keep the text path's working set low (docs/speed.md)
_TEXT_CHUNK_CHARS = 1 << 20


def _open_text(path: Path) -> IO[str]:
    comp = compression(path)
    if comp == "gzip":
        return gzip.open(path, "rt", encoding="utf-8")
    if comp == "bz2":
        return bz2.open(path, "rt", encoding="utf-8")
    if comp == "zstd":
        import zstandard

        raw = open(path, "rb")  # noqa: SIM115 - closed through the wrapper
        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.TextIOWrapper(io.BufferedReader(reader, 1 << 20), encoding="utf-8")
    return open(path, encoding="utf-8")  # noqa: SIM115


def _split_delimited(line: str, delimiter: str) -> list[str]:
    return [t for t in map(str.strip, line.split(delimiter)) if t]


def _too_long_item(path: Path, line: int) -> InputError:
    return InputError(
        f"{path} line {line}: an item longer than {MAX_ITEM_CHARS} characters (no separator that far); "
        "is this text with one sequence per line?"
    )


class _LineCutter:
    """Splits text, fed a chunk at a time, into sequences of at most :data:`MAX_SEQUENCE_LENGTH` items.

    Memory stays bounded whatever the line lengths: the unfinished end of a line is kept as text only up
    to one chunk; past that its complete items are split off, and full sequences of them handed out,
    before the line ends (so a 5 GiB line in a small gzip costs a chunk, not 5 GiB).
    """

    def __init__(self, path: Path, delimiter: str | None) -> None:
        self.path = path
        self.delimiter = delimiter
        self.tail = ""  # the unfinished end of the current line
        self.head: list[str] = []  # items of the current line split off already (fewer than the cap)
        self.line = 0  # lines ended so far, for messages

    def _items(self, text: str) -> list[str]:
        return text.split() if self.delimiter is None else _split_delimited(text, self.delimiter)

    def _check_items(self, texts: list[str], items: list[list[str]]) -> None:
        """Raise when an item is over :data:`MAX_ITEM_CHARS` (only a line that long can hold one)."""
        if max(map(len, texts), default=0) <= MAX_ITEM_CHARS:
            return
        for i, (text, its) in enumerate(zip(texts, items, strict=True)):
            if len(text) > MAX_ITEM_CHARS and max(map(len, its), default=0) > MAX_ITEM_CHARS:
                raise _too_long_item(self.path, self.line + 1 + i)

    def _cut(self, items: list[str], out: list[list[str]], *, final: bool) -> list[str]:
        """Append full sequences of ``items`` to ``out``; the rest too when ``final``, else return it."""
        cap = MAX_SEQUENCE_LENGTH
        whole = len(items) if final else len(items) - len(items) % cap
        out.extend(items[i : i + cap] for i in range(0, whole, cap))
        return items[whole:]

    def feed(self, chunk: str) -> list[list[str]]:
        """The sequences completed by ``chunk`` (text decoded with universal newlines)."""
        lines = (self.tail + chunk).split("\n")
        self.tail = lines.pop()
        if self.delimiter is None:
            split = [text.split() for text in lines]
        else:
            split = [_split_delimited(text, self.delimiter) for text in lines]
        self._check_items(lines, split)
        if self.head and split:
            split[0], self.head = self.head + split[0], []
        self.line += len(lines)
        if max(map(len, split), default=0) <= MAX_SEQUENCE_LENGTH:  # the usual case: nothing to cut
            out = [items for items in split if items]
        else:
            out = []
            for items in split:
                self._cut(items, out, final=True)
        if len(self.tail) > _TEXT_CHUNK_CHARS:  # a line longer than a chunk: split off its whole items
            self._split_off()
            self.head = self._cut(self.head, out, final=False)
        return out

    def _split_off(self) -> None:
        """Move the items of :attr:`tail` that are surely whole to :attr:`head`."""
        text = self.tail
        if self.delimiter is None:
            # the last run of non-whitespace may go on in the next chunk: keep it as text
            items = text.split()
            keep = "" if text[-1].isspace() else items.pop()
        else:
            cut = text.rfind(self.delimiter)
            keep = text[cut + len(self.delimiter) :] if cut >= 0 else text
            items = _split_delimited(text[:cut], self.delimiter) if cut >= 0 else []
        if len(keep) > MAX_ITEM_CHARS or max(map(len, items), default=0) > MAX_ITEM_CHARS:
            raise _too_long_item(self.path, self.line + 1)
        self.head.extend(items)
        self.tail = keep

    def close(self) -> list[list[str]]:
        """The sequences of the last line (one without a final newline)."""
        out: list[list[str]] = []
        items = self._items(self.tail)
        self._check_items([self.tail], [items])
        self._cut(self.head + items, out, final=True)
        self.head, self.tail = [], ""
        return out


# Every character that is not a letter or a digit (Unicode-aware), line ends apart: tokenize="simple"
# turns each into a space, so the text splits at them. The map is per character, so applying it to each
# chunk is applying it to the whole text, and lines stay lines.
_NOT_WORD = re.compile(r"[^\w\n]|_")


def simple_tokens(text: str) -> str:
    """``text`` lower-cased with every character that is not a letter, a digit or a line end made a
    space: what ``tokenize="simple"`` splits at whitespace (``"Users, users."`` -> ``"users  users "``)."""
    return _NOT_WORD.sub(" ", text.lower())


def _file_chunks(
    fh: IO[str], path: Path, delimiter: str | None, tokenize: str = "none"
) -> Iterator[list[list[str]]]:
    cutter = _LineCutter(path, delimiter)
    while chunk := fh.read(_TEXT_CHUNK_CHARS):
        if tokenize == "simple":
            chunk = simple_tokens(chunk)
        if out := cutter.feed(chunk):
            yield out
    if out := cutter.close():
        yield out


def iter_text_chunks(spec: InputSpec, files: list[Path] | None = None) -> Iterator[list[list[str]]]:
    """Yield the non-blank lines of text input, split into items, a few MB of text at a time.

    A line of more than :data:`MAX_SEQUENCE_LENGTH` items is cut into sequences of that many (the last
    one shorter), as word2vec does; text is read in bounded chunks, so one enormous line costs bounded
    memory.

    Parameters
    ----------
    spec : InputSpec
        The input; ``spec.delimiter`` separates items (None = whitespace; with a delimiter the
        whitespace around each item is removed and empty items are skipped); ``spec.tokenize="simple"``
        lower-cases the text and splits it at everything that is not a letter or a digit
        (:func:`simple_tokens`).
    files : list of Path, optional
        The resolved files (default: ``resolve_files(spec)``).

    Yields
    ------
    list of list of str
        Consecutive sequences, each a non-empty list of at most :data:`MAX_SEQUENCE_LENGTH` item keys.

    Raises
    ------
    InputError
        A file is unreadable or not UTF-8; an item is longer than :data:`MAX_ITEM_CHARS` characters; a
        file named in ``spec.paths`` holds no non-blank line (an empty file found in a folder is
        skipped); or the whole input holds no non-blank line.
    """
    files = resolve_files(spec) if files is None else files
    named = named_files(spec)
    total = 0
    for path in files:
        n_lines = 0
        try:
            with _open_text(path) as fh:
                for split in _file_chunks(fh, path, spec.delimiter, spec.tokenize):
                    n_lines += len(split)
                    yield split
        except UnicodeDecodeError as e:
            raise InputError(f"{path} is not UTF-8 text ({e.reason}); is it a csv/parquet/jsonl log?") from e
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(f"cannot read {path} as text: {e}") from e
        except Exception as e:  # zstandard.ZstdError and friends
            if type(e).__module__.startswith("zstandard"):
                raise InputError(f"cannot read {path} as zstd-compressed text: {e}") from e
            raise
        if n_lines == 0 and path.resolve() in named:
            raise InputError(f"{path} is empty: it has no non-blank line")
        total += n_lines
    if total == 0:
        raise no_data_error(spec, len(files), "a non-blank line")


def iter_text_sequences(spec: InputSpec) -> Iterator[list[str]]:
    """Yield one list of item keys per non-blank line of text input.

    Parameters
    ----------
    spec : InputSpec
        Text files and/or folders; ``.gz``, ``.bz2`` and ``.zst`` are decompressed on the fly.

    Yields
    ------
    list of str
        The items of one line, in order.
    """
    for chunk in iter_text_chunks(spec):
        yield from chunk
