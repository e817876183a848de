"""A strict validator of request bodies against the ``openai`` and ``anthropic`` SDKs' own TypedDicts.

The SDKs describe a request body as nested TypedDicts. pydantic's TypeAdapter over them ignores
unknown keys and validates ``Iterable`` fields only when they are iterated, so this walks the
SDK's type hints itself and is strict everywhere: every required key present, no key the type
does not declare, every value of its declared type (``bool`` is not an ``int``), a union
satisfied by one of its members, every element of a list checked. Offline: nothing is sent.
"""

from __future__ import annotations

import collections.abc
import reprlib
import types
import typing
from typing import Any

import typing_extensions

__all__ = ["SchemaError", "anthropic_request", "check", "openai_request"]


class SchemaError(AssertionError):
    """A value does not fit the SDK's type; the message names where and why."""


_WRAPPERS = {"Required", "NotRequired", "ReadOnly", "Annotated"}
_LISTS = (list, collections.abc.Iterable, collections.abc.Sequence, collections.abc.Collection)
_MAPS = (dict, collections.abc.Mapping)


_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 40
_short = _repr.repr  # failed union members are tried often: keep their messages cheap


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


def _hints(tp: Any) -> dict[str, Any]:
    cache = _hints.__dict__.setdefault("cache", {})
    if tp not in cache:
        cache[tp] = typing.get_type_hints(tp, include_extras=True)
    return cache[tp]


def check(value: Any, tp: Any, where: str = "body") -> None:
    """Raise :class:`SchemaError` unless ``value`` fits the type ``tp`` exactly."""
    origin = typing.get_origin(tp)
    if origin is not None and getattr(origin, "_name", getattr(origin, "__name__", "")) in _WRAPPERS:
        return check(value, typing.get_args(tp)[0], where)
    if origin is typing.Annotated or origin is typing_extensions.Annotated:
        return check(value, typing.get_args(tp)[0], where)
    if tp is Any or tp is object:
        return None
    if tp is type(None) or tp is None:
        if value is not None:
            raise SchemaError(f"{where}: {_short(value)} is not null")
        return None
    if typing_extensions.is_typeddict(tp):
        return _check_typeddict(value, tp, where)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for member in typing.get_args(tp):
            try:
                check(value, member, where)
                return None
            except SchemaError as exc:
                errors.append(str(exc))
        raise SchemaError(f"{where}: fits none of {_name(tp)}: " + " | ".join(errors[:4]))
    if origin in (typing.Literal, typing_extensions.Literal):
        if not any(value == v and type(value) is type(v) for v in typing.get_args(tp)):
            raise SchemaError(f"{where}: {_short(value)} is not one of {_short(typing.get_args(tp))}")
        return None
    if origin in _LISTS:
        if not isinstance(value, list):
            raise SchemaError(f"{where}: {type(value).__name__} is not a list")
        (item,) = typing.get_args(tp) or (Any,)
        for i, element in enumerate(value):
            check(element, item, f"{where}[{i}]")
        return None
    if origin in _MAPS:
        if not isinstance(value, dict):
            raise SchemaError(f"{where}: {type(value).__name__} is not an object")
        key_type, value_type = typing.get_args(tp) or (str, Any)
        for key, element in value.items():
            check(key, key_type, f"{where} key")
            check(element, value_type, f"{where}[{key!r}]")
        return None
    if tp in (str, int, float, bool):
        ok = isinstance(value, tp) and not (tp is not bool and isinstance(value, bool))
        if tp is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            raise SchemaError(f"{where}: {_short(value)} is not a {tp.__name__}")
        return None
    raise SchemaError(f"{where}: the validator does not know the type {tp!r}")


def _wrapper(hint: Any) -> str:
    origin = typing.get_origin(hint)
    return getattr(origin, "_name", "") if origin is not None else ""


def _required(tp: Any) -> set[str]:
    """The keys a TypedDict requires, from its hints (the SDKs write ``Required[...]`` in string
    annotations, which ``__required_keys__`` does not see under ``from __future__ import annotations``)."""
    hints = _hints(tp)
    if getattr(tp, "__total__", True):
        return {k for k, h in hints.items() if _wrapper(h) != "NotRequired"}
    return {k for k, h in hints.items() if _wrapper(h) == "Required"}


def _check_typeddict(value: Any, tp: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise SchemaError(f"{where}: {type(value).__name__} is not a {_name(tp)} object")
    hints = _hints(tp)
    extra = sorted(set(value) - set(hints))
    if extra:
        raise SchemaError(f"{where}: {_name(tp)} has no field {extra[0]!r}")
    missing = sorted(_required(tp) - set(value))
    if missing:
        raise SchemaError(f"{where}: {_name(tp)} needs {missing[0]!r}")
    for key, element in value.items():
        check(element, hints[key], f"{where}.{key}")


def openai_request(body: dict[str, Any], model: str = "gpt-4o") -> None:
    """Check ``{"messages": [...]}`` as a chat completions request body (non-streaming)."""
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    check({"model": model, **body}, CompletionCreateParamsNonStreaming, "openai")


def anthropic_request(body: dict[str, Any], model: str = "claude-sonnet-4-5", max_tokens: int = 1024) -> None:
    """Check ``{"system": ..., "messages": [...]}`` as a Messages request body (non-streaming)."""
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    check({"model": model, "max_tokens": max_tokens, **body}, MessageCreateParamsNonStreaming, "anthropic")
