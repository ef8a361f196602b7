"""Readers of text files and transaction logs (being split into modules; see :mod:`likewise.readers.log`)."""

from .log import *  # noqa: F403
from .log import (  # noqa: F401 - used by other modules until they move to public names
    COMPRESSION_SUFFIXES,
    LOG_FORMATS,
    MAX_PARTITIONS,
    __all__,
    _compression,
    _first_line,
    _log,
    _named_files,
    _open_text,
    hash_keys,
    input_format,
    iter_log_batches,
    n_partitions,
)
