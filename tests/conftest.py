"""Shared fixtures: every storage strategy declared in ``configs/strategy/``, built fresh per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from aptmem.errors import ServiceUnavailable
from aptmem.store import SessionStore
from experiments.core.strategy import build_store, load_strategy, strategy_names

STRATEGIES = strategy_names()


class StoreFactory:
    """Builds stores of one strategy on one root, and closes every one it built at teardown.

    Calling it again gives a new store on the same root: that is how tests reopen a store.
    """

    def __init__(self, name: str, root: Path) -> None:
        self.name = name
        self.root = root
        self._built: list[SessionStore] = []

    def __call__(self, **overrides: object) -> SessionStore:
        """Build a store of this strategy on ``self.root`` (config values may be overridden).

        A strategy whose server cannot be had here (no PostgreSQL binaries) skips the test, saying why.
        """
        try:
            store = build_store(load_strategy(self.name), self.root, **overrides)
        except Exception as exc:
            skip_if_unavailable(exc)
            raise
        self._built.append(store)
        return store

    def close_all(self) -> None:
        """Close every store built here, newest first (closing twice is allowed)."""
        while self._built:
            self._built.pop().close()


@pytest.fixture(params=STRATEGIES, ids=STRATEGIES)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A :class:`StoreFactory` for each strategy config, rooted at ``tmp_path / "root"``."""
    factory = StoreFactory(request.param, tmp_path / "root")
    yield factory
    factory.close_all()


@pytest.fixture
def store(store_factory: StoreFactory) -> SessionStore:
    """One open store of the strategy under test."""
    return store_factory()



def skip_if_unavailable(exc: BaseException) -> None:
    """Skip the test when ``exc`` (or what Hydra's instantiate wrapped in it) is a missing service."""
    while exc is not None:
        if isinstance(exc, ServiceUnavailable):
            pytest.skip(str(exc))
        exc = exc.__cause__  # type: ignore[assignment]


def require_available(strategy: str, root: Path) -> None:
    """Skip the test when the strategy's server cannot be had here (build one store and close it)."""
    try:
        build_store(load_strategy(strategy), root).close()
    except Exception as exc:
        skip_if_unavailable(exc)
        raise
