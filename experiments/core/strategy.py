"""A storage strategy as one typed spec: what to build, and the facts the harness needs about it.

A strategy is one YAML file in ``configs/strategy/`` (one registry: the Hydra app composes them as
a config group; tests, benchmarks and child processes load the same files here). The YAML
declares everything that differs per strategy, so no harness code names a strategy family:

* ``name``, ``family``, ``durable``: the leading columns of every table (:meth:`StrategySpec.columns`);
* ``store``: ``_target_`` (the store class) and its keyword arguments;
* ``power_loss``, ``tracer``, ``ignore_files``: how the crash measurements see its files;
* ``quadratic_appends``, ``whole_reads``: costs that make the write-cost and memory measurements cap it;
* ``recovery_setting``, ``engine``, ``reference``, ``explain``: smaller facts, documented below;
* ``service`` (optional): a server the store needs, started before its stores are built;
  ``data_in``: where its data lives (files under its root, or a server's files);
* ``not_applicable``: hostile cases that do not apply to it, by category, and why.

:func:`from_node` is the one conversion from a YAML mapping or a composed Hydra node; the spec
is a msgspec Struct, so it crosses process boundaries as JSON, and :func:`build_store` builds its
store in a child process without Hydra.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import msgspec

from aptmem.store import Capabilities, SessionStore

__all__ = ["CONFIG_DIR", "CrashModel", "Explanations", "Service", "ServiceSpec", "StoreSpec", "StrategyConfigError",
           "Skipped", "StrategySpec", "build_store", "capabilities", "from_node", "load_strategy", "services_started",
           "strategy_names", "strategy_specs"]

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"
STRATEGY_DIR = CONFIG_DIR / "strategy"


class StrategyConfigError(ValueError):
    """A strategy config that does not describe a strategy (names the file or node and the reason)."""


class StoreSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How to build a store: the class (``module.Class``, the YAML's ``_target_``) and its keyword arguments."""

    target: str
    settings: dict[str, Any] = {}


class ServiceSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A service a strategy's store needs (a database server): the class that runs it and its arguments."""

    target: str
    settings: dict[str, Any] = {}


class CrashModel(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How the crash measurement simulates a power loss for the strategy.

    ``model``: ``trace`` (its Python-level file-system calls, traced in the writer's process),
    ``sqlite_wal`` (SQLite's documented write-ahead-log rules, with the unsynced ``region``) or
    ``none`` (not simulated, and ``reason`` says why).
    """

    model: Literal["trace", "sqlite_wal", "none"]
    #: sqlite_wal: which frames a power loss may take: the last commit's, or every one since the last checkpoint
    region: Literal["last_commit", "since_checkpoint"] | None = None
    #: one entry a line: a foreign partial line can be spliced in at a line boundary (else at a byte)
    lines: bool = False
    #: how the model works for this strategy (trace: the tracer's own description when empty)
    how: str = ""
    #: none: why a power loss is not simulated
    reason: str = ""
    #: a limit of the model, said beside every case it judged
    caveat: str | None = None

    def __post_init__(self) -> None:
        if self.model == "sqlite_wal" and self.region is None:
            raise ValueError("power_loss.model sqlite_wal needs a region (last_commit or since_checkpoint)")
        if self.model == "none" and not self.reason:
            raise ValueError("power_loss.model none needs a reason (the report says why it is not simulated)")


class Explanations(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Sentences the reports print beside the strategy's results (the facts behind a finding)."""

    #: why the strategy, keeping its promise, still loses data in some crash states
    within_promise: str | None = None
    #: known causes of violations, by ``<violation kind>/<crash state kind>``
    violations: dict[str, str] = {}


class StrategySpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One storage strategy: a label, its family, its promise, how to build it, and its facts."""

    #: label in tables and figures (the YAML file's stem)
    name: str
    #: strategy family: the headline table and the Pareto figure group settings by it
    family: str
    #: the config's promise: acknowledged appends survive a power loss
    durable: bool
    store: StoreSpec
    #: how a power loss is simulated for it (the crash measurement)
    power_loss: CrashModel
    #: how the crash-state explorer sees its file operations: fs_model (Python calls) or strace (system calls)
    tracer: Literal["fs_model", "strace"] = "fs_model"
    #: file-name endings of files that hold no session data (a lock, SQLite's shared-memory index)
    ignore_files: list[str] = []
    #: every append rewrites the whole history: the write-cost measurement replays it only so far
    quadratic_appends: bool = False
    #: every read parses the whole session: the memory measurement measures it only up to a size
    whole_reads: bool = False
    #: the store setting that names the recovery mode the store reads in (null: it has one mode)
    recovery_setting: str | None = None
    #: what it leans on outside this repository, named in the anatomy table (null: nothing)
    engine: str | None = None
    #: the design's write-cost goals are stated for this strategy
    reference: bool = False
    explain: Explanations = Explanations()
    #: a service the store needs running (started before any of its stores is built, stopped after)
    service: ServiceSpec | None = None
    #: where the session data lives: files under the store's root (readable there), or a server's own files
    data_in: Literal["root", "server"] = "root"
    #: hostile cases that do not apply to the strategy, by the case's category, with the reason the report prints
    not_applicable: dict[str, str] = {}

    @property
    def variant(self) -> str:
        """The store's settings as ``key=value;...`` in config order (the tables' ``variant`` column)."""
        return ";".join(f"{k}={v}" for k, v in self.store.settings.items())

    def columns(self) -> dict[str, Any]:
        """The leading columns of a table row about this strategy."""
        return {"strategy": self.name, "family": self.family, "variant": self.variant, "durable": self.durable}

    def default_mode(self, caps: Capabilities) -> str:
        """The recovery mode the store reads in as configured (its only one, or its recovery setting)."""
        if self.recovery_setting is not None:
            return str(self.store.settings[self.recovery_setting])
        return caps.recovery_modes[0]

    def in_mode(self, mode: str) -> StoreSpec:
        """The store spec reading in recovery ``mode`` (the store itself when it has one mode)."""
        if self.recovery_setting is None:
            return self.store
        return msgspec.structs.replace(self.store, settings={**self.store.settings, self.recovery_setting: mode})


def _split_target(node: Mapping[str, Any], what: str, source: str) -> dict[str, Any]:
    """A Hydra ``{_target_: ..., **kwargs}`` mapping as ``{target, settings}``."""
    if not isinstance(node, Mapping) or "_target_" not in node:
        raise StrategyConfigError(f"{source}: {what} needs a _target_ (the class, as module.Class)")
    return {"target": node["_target_"], "settings": {str(k): v for k, v in node.items() if k != "_target_"}}


def from_node(node: Any, source: str = "strategy config") -> StrategySpec:
    """The spec of a strategy config: an OmegaConf node (interpolations resolved) or a plain mapping.

    Raises :class:`StrategyConfigError` naming ``source`` (its file or node) and the field at fault.
    """
    from omegaconf import DictConfig, OmegaConf

    if isinstance(node, DictConfig):
        node = OmegaConf.to_container(node, resolve=True)
    if not isinstance(node, Mapping):
        raise StrategyConfigError(f"{source}: a strategy config is a mapping, not {type(node).__name__}")
    plain = {str(k): v for k, v in node.items()}
    plain["store"] = _split_target(plain.get("store", {}), "store", source)
    if plain.get("service") is not None:
        plain["service"] = _split_target(plain["service"], "service", source)
    try:
        return msgspec.convert(plain, StrategySpec)
    except msgspec.ValidationError as exc:
        raise StrategyConfigError(f"{source}: {exc}") from None


def strategy_names() -> list[str]:
    """The names of every strategy config, sorted."""
    return sorted(p.stem for p in STRATEGY_DIR.glob("*.yaml"))


def load_strategy(name: str) -> StrategySpec:
    """The spec of ``configs/strategy/<name>.yaml`` (what the Hydra app composes, without overrides)."""
    from omegaconf import OmegaConf

    path = STRATEGY_DIR / f"{name}.yaml"
    if not path.is_file():
        raise StrategyConfigError(f"unknown strategy {name!r}; known: {', '.join(strategy_names())}")
    return from_node(OmegaConf.load(path), str(path))


def strategy_specs(strategies: Mapping[str, Any]) -> tuple[StrategySpec, ...]:
    """The specs of a run's composed ``strategy`` node (command-line overrides included), in its order."""
    return tuple(from_node(node, f"strategy {key} (configs/strategy/{key}.yaml)") for key, node in strategies.items())


def _has_nested_target(value: Any) -> bool:
    if isinstance(value, dict):
        return "_target_" in value or any(_has_nested_target(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_nested_target(v) for v in value)
    return False


def import_target(target: str) -> Any:
    """The class (or function) a ``module.Name`` path names, imported."""
    module, _, name = target.rpartition(".")
    return getattr(importlib.import_module(module), name)


def build_store(store: StoreSpec | StrategySpec, root: str | os.PathLike[str], **overrides: Any) -> SessionStore:
    """Instantiate a store under ``root`` from its spec (``overrides`` replace settings).

    Flat settings (every shipped strategy) go straight to the class: importing Hydra in every
    child would add ~0.2 s and ~10 MB to each of hundreds of processes. Settings holding a nested
    ``_target_`` go through Hydra's ``instantiate`` after all.
    """
    spec = store.store if isinstance(store, StrategySpec) else store
    settings = {**spec.settings, **overrides}
    if _has_nested_target(settings):
        from hydra.utils import instantiate

        return instantiate({"_target_": spec.target, **settings}, root=os.fspath(root))
    return import_target(spec.target)(os.fspath(root), **settings)


@functools.cache
def _probe(encoded: bytes) -> Capabilities:
    store = msgspec.json.decode(encoded, type=StoreSpec)
    scratch = tempfile.mkdtemp(prefix="aptmem-probe-")
    try:
        built = build_store(store, scratch)
        caps = built.capabilities
        built.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return caps


def capabilities(spec: StrategySpec) -> Capabilities:
    """The capabilities the strategy's store declares (read once per process from a store in a scratch folder)."""
    return _probe(msgspec.json.encode(spec.store))


class Service(Protocol):
    """A server a strategy's store needs: started before its stores are built, stopped after.

    Every member is mandatory: a crash measurement kills a service the way a crashed machine would
    and starts it again on the same files.
    """

    def start(self, scratch: Path) -> dict[str, Any]:
        """Start the service with its files under ``scratch``; return settings merged into the store's."""
        ...

    def crash(self) -> None:
        """Kill every process of the service at once (SIGKILL), leaving its files as they are."""
        ...

    def restart(self) -> None:
        """Start the service again on the files it had (its own crash recovery runs), with the same settings."""
        ...

    def stop(self) -> None:
        """Stop the service (its files go with the scratch folder)."""
        ...


class Skipped(msgspec.Struct, frozen=True):
    """A strategy left out of a run because a service it needs cannot be had here, and why."""

    strategy: str
    family: str
    reason: str


@contextlib.contextmanager
def services_started(strategies: Sequence[StrategySpec], scratch: str | os.PathLike[str] | None = None, *,
                     skipped: list[Skipped] | None = None, live: dict[str, Service] | None = None
                     ) -> Iterator[tuple[StrategySpec, ...]]:
    """Start every service the strategies declare; yield the specs with the services' settings merged.

    A strategy that declares none is yielded as it is. Strategies declaring the same service (the
    same class and settings) share one instance: one server per run. Services stop in reverse order
    when the block ends, however it ends. With ``skipped`` given, a service that raises
    :class:`~aptmem.errors.ServiceUnavailable` leaves its strategies out of the yielded specs and
    adds them to ``skipped`` with the reason (without it, the error propagates); ``live``, when
    given, is filled with each served strategy's running service, by strategy name.
    """
    from aptmem.errors import ServiceUnavailable

    with contextlib.ExitStack() as stack:
        ready = []
        started: dict[bytes, tuple[Service, dict[str, Any]] | str] = {}
        for spec in strategies:
            if spec.service is None:
                ready.append(spec)
                continue
            key = msgspec.json.encode(spec.service)
            if key not in started:
                service: Service = import_target(spec.service.target)(**spec.service.settings)
                folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"aptmem-service-{spec.name}-",
                                                                               dir=scratch)))
                try:
                    started[key] = (service, service.start(folder))
                    stack.callback(service.stop)
                except ServiceUnavailable as exc:
                    if skipped is None:
                        raise
                    started[key] = str(exc)
            outcome = started[key]
            if isinstance(outcome, str):
                assert skipped is not None
                skipped.append(Skipped(strategy=spec.name, family=spec.family, reason=outcome))
                continue
            service, extra = outcome
            if live is not None:
                live[spec.name] = service
            ready.append(msgspec.structs.replace(
                spec, store=msgspec.structs.replace(spec.store, settings={**spec.store.settings, **extra})))
        yield tuple(ready)
