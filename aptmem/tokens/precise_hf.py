"""The ``precise`` tier through transformers, offline: Mistral's Tekken, or any local tokenizer.

* ``mistral:<name>``: a tokenizer file shipped inside the ``mistral-common`` package (e.g.
  ``tekken_240911``, the default for the bare name ``tekken``), or ``mistral:/path/to/tekken.json``,
  loaded with ``transformers.MistralCommonBackend`` (no network, no PyTorch needed).
* ``hf:<folder or hub name>``: ``transformers.AutoTokenizer.from_pretrained(..., local_files_only=True)``,
  so a hub name works only when it is already in the Hugging Face cache; nothing is downloaded.

``local_files_only`` alone is not enough: huggingface_hub still fetches a registry from the hub
while it builds request headers (seen with huggingface_hub 2.4). So a load runs with the hub's
offline switch on (``huggingface_hub.constants.HF_HUB_OFFLINE``, what ``HF_HUB_OFFLINE=1``
sets), under a lock, and restored afterwards; the tests check that no socket is opened.

transformers is imported on first use only (it takes about a second), never when aptmem is.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aptmem.errors import TokenizerUnavailable

__all__ = ["DEFAULT_TEKKEN", "TransformersEstimator", "load_hf", "load_mistral", "mistral_tokenizer_files"]

DEFAULT_TEKKEN = "tekken_240911"
_INSTALL = "pip install 'transformers>=5,<6' 'mistral-common>=1.8,<2'"


def _import_transformers(name: str) -> Any:
    """Import transformers quietly (it warns that PyTorch is missing: not needed for tokenizers)."""
    unset = "TRANSFORMERS_NO_ADVISORY_WARNINGS" not in os.environ
    if unset:
        os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = "1"
    try:
        import transformers
    except ImportError:
        raise TokenizerUnavailable(name, f"transformers is not installed: {_INSTALL}") from None
    finally:
        if unset:
            os.environ.pop("TRANSFORMERS_NO_ADVISORY_WARNINGS", None)
    return transformers


_offline_lock = threading.Lock()


@contextmanager
def _hub_offline() -> Iterator[None]:
    """Turn huggingface_hub's offline mode on for the duration (see the module docstring)."""
    try:
        from huggingface_hub import constants
    except ImportError:  # no hub library: nothing can go online through it
        yield
        return
    with _offline_lock:
        before = constants.HF_HUB_OFFLINE
        constants.HF_HUB_OFFLINE = True
        try:
            yield
        finally:
            constants.HF_HUB_OFFLINE = before


def mistral_tokenizer_files() -> dict[str, Path]:
    """The Tekken tokenizer files mistral-common ships, by name (empty if it is not installed)."""
    try:
        import mistral_common
    except ImportError:
        return {}
    data = Path(mistral_common.__file__).parent / "data"
    return {p.stem: p for p in sorted(data.glob("tekken*.json"))}


def _mistral_path(name: str, spec: str) -> Path:
    if spec.endswith(".json") or os.sep in spec:
        path = Path(spec).expanduser()
        if not path.is_file():
            raise TokenizerUnavailable(name, f"no tokenizer file at {path}")
        return path
    files = mistral_tokenizer_files()
    if not files:
        raise TokenizerUnavailable(name, f"mistral-common is not installed: {_INSTALL}")
    if spec not in files:
        raise TokenizerUnavailable(name, f"mistral-common ships {', '.join(files)}; name one of those "
                                   "or give the path of a Tekken .json file (mistral:/path/to/tekken.json)")
    return files[spec]


class TransformersEstimator:
    """Exact counts with a transformers tokenizer, special tokens (BOS/EOS) left out."""

    tier = "precise"

    def __init__(self, tokenizer: Any, name: str) -> None:
        self._tokenizer = tokenizer
        self.tokenizer = name
        self.name = name

    def count(self, text: str) -> int:
        """Return the exact number of tokens of ``text``."""
        if not text:
            return 0
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def token_bytes(self) -> list[bytes]:
        """Every token of the vocabulary, decoded alone, as UTF-8 (the medium tier's calibration reads its pieces off them)."""
        return [self._tokenizer.decode([i]).encode("utf-8", "surrogatepass") for i in range(len(self._tokenizer))]

    def __repr__(self) -> str:
        return f"TransformersEstimator({self.name!r})"


def load_mistral(spec: str = DEFAULT_TEKKEN) -> TransformersEstimator:
    """A Mistral tokenizer through ``transformers.MistralCommonBackend``; ``spec`` is a shipped name or a path."""
    name = f"mistral:{spec}"
    path = _mistral_path(name, spec)
    transformers = _import_transformers(name)
    backend = getattr(transformers, "MistralCommonBackend", None)
    if backend is None:
        raise TokenizerUnavailable(name, f"this transformers ({transformers.__version__}) has no "
                                   f"MistralCommonBackend: {_INSTALL}")
    try:
        with _hub_offline():
            tokenizer = backend(tokenizer_path=str(path))
    except ImportError as exc:  # mistral-common missing or too old for this transformers
        raise TokenizerUnavailable(name, f"{exc}; {_INSTALL}") from None
    except (OSError, ValueError) as exc:
        raise TokenizerUnavailable(name, f"{path} is not a Mistral tokenizer file ({exc})") from None
    return TransformersEstimator(tokenizer, name if os.sep not in spec else f"mistral:{path}")


def load_hf(spec: str) -> TransformersEstimator:
    """A tokenizer from a local folder or the local Hugging Face cache; never downloads."""
    name = f"hf:{spec}"
    transformers = _import_transformers(name)
    folder = Path(spec).expanduser()
    # A hub name is "name" or "org/name"; anything else that is not a folder is a missing folder.
    pathlike = spec.startswith((os.sep, ".", "~")) or spec.count("/") > 1
    try:
        with _hub_offline():
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder) if folder.is_dir() else spec,
                                                                   local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        if folder.is_dir():
            how = f"{folder} holds no tokenizer transformers can load ({str(exc).splitlines()[0]})"
        elif pathlike:
            how = f"no folder {folder}"
        else:
            how = (f"it is not in the local Hugging Face cache ({os.environ.get('HF_HOME', '~/.cache/huggingface')}); "
                   f"on a machine with network run: hf download {spec} --include 'tokenizer*' '*.json' '*.model', "
                   "then copy the cache here, or pass the downloaded folder as hf:/path/to/folder")
        raise TokenizerUnavailable(name, how) from None
    return TransformersEstimator(tokenizer, name)
