"""Values of no shape the fact finder knows: a compound token, recognised by how it is built.

Every domain brings identifiers of its own (a certificate fingerprint ``3A:4B:…:6D``, a guideline
number ``4.3(a)``, a locale ``ko-KR``): listing each shape is a race the lists lose. What such a
token shares with every identifier is its build: runs of letters and digits joined by punctuation
inside one word, and a mix that prose words do not have: a digit beside a letter (``4B``, ``3(a)``),
or a part all in lower case beside one all in capitals (``ko-KR``), or three capitals parts
joined by dashes (``LEDGER-IOS-VKQ``). :func:`compounds` finds them;
:func:`~aptmem.memory.values.values` takes one where no shape explained the whole token (the
known shapes matched at most pieces of it: ``4B`` as a size, ``4.3`` as a number).

Left out, as they are ways of writing that are no value: a file's place (``Core.kt:214``: a stack
frame or a compiler message, it moves with every edit), and anything with a slash (paths and URLs
have shapes of their own).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["compounds"]

#: Runs of letters and digits joined by ``-_.:+`` or a short parenthesised part, inside one word.
_COMPOUND = re.compile(r"(?<![\w.:/@#(\\-])[A-Za-z0-9]+(?:[-_.:+][A-Za-z0-9]+|\([A-Za-z0-9]{1,4}\))+(?![\w/\\]|[-_.:+(][A-Za-z0-9])",
                       re.ASCII)
#: A file's place: a name with an extension, then a line (and a column).
_LOCATION = re.compile(r"\.[A-Za-z]{1,5}:\d+(?::\d+)?$", re.ASCII)
_PART = re.compile(r"[A-Za-z0-9]+", re.ASCII)
_DIGIT_LETTER = re.compile(r"\d[A-Za-z]|[A-Za-z]\d|\d\([A-Za-z]", re.ASCII)
#: Three capitals parts or more joined by dashes (LEDGER-IOS-VKQ): a code, as prose joins no words so. (Underscores
#: join the words of an environment variable's name, a key.)
_CAPITALS_CODE = re.compile(r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+){2,}", re.ASCII)


def _mixed(token: str) -> bool:
    """A digit beside a letter, a lower-case part beside a capitals part (of two letters or more), or a capitals code."""
    if _DIGIT_LETTER.search(token) or _CAPITALS_CODE.fullmatch(token):
        return True
    parts = _PART.findall(token)
    return any(p.isalpha() and p.islower() for p in parts) and any(len(p) >= 2 and p.isalpha() and p.isupper() for p in parts)


def compounds(sentence: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each compound token of ``sentence`` (see the module's docstring)."""
    for match in _COMPOUND.finditer(sentence):
        token = match.group(0)
        if len(token) < 4 or _LOCATION.search(token) or not _mixed(token):
            continue
        yield match.span()
