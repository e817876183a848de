"""The filler of the pair-programming workload (:mod:`.pairing`): what a coding pair's tools print.

One function per carrier format of a tool output (unified diffs, Makefiles, Dockerfiles,
docker-compose files, Helm values, ``terraform plan``, SQL migrations, GitHub Actions logs,
``pytest`` runs, Markdown tables, a chat thread in English and Chinese), each drawing its text from
the generator's own seeded ``random.Random``. Filler never prints a value of the shapes the
workload plants (no five-digit number, no ``sha256:`` digest, no ``V123__`` migration, no ``Mi``
size of four digits, no handle with digits), so a planted answer is never found by chance.
"""

from __future__ import annotations

import random
from collections.abc import Callable

__all__ = ["COMPONENTS", "FILLERS", "chat_line", "opening", "reply"]

#: the components the pair works on (subjects of most planted kinds, and named all through the filler)
COMPONENTS = ("ledgerd", "quokka-web", "parcel-sync", "inkwell", "tern-gateway", "glowworm", "pinecone-cron",
              "sundial", "abacus-api", "kestrel-proxy", "murmur", "oxbow-etl", "lintel", "driftwood")
_MODULES = ("handlers", "retry", "schema", "cache", "auth", "settings", "queue", "models", "views", "client")
_FUNCS = ("load_batch", "apply_patch", "parse_row", "flush", "reconcile", "build_query", "emit_event", "refresh_token",
          "normalize", "paginate", "merge_config", "drain")
_VARS = ("rows", "payload", "cursor", "deadline", "attempts", "batch", "token", "headers", "offset", "chunk")
_PEOPLE = ("dana", "ravi", "yuki", "tobi", "mara", "chen.li", "zhou", "wen", "ana", "felix")
_EN_CHAT = ("can you rerun that with -x so it stops at the first failure?", "I think the fixture leaks a connection",
            "let's keep the diff small and do the rename in a follow-up", "ship it once CI is green",
            "that mock hides the real bug, drop it", "wait, which branch are you on?", "nit: the docstring is stale",
            "I'll drive for a bit, you read along", "that test was flaky last week too", "rebase first, main moved")
_ZH_CHAT = ("这个 PR 我先看一下，别急着合", "本地能复现吗？", "CI 又挂了，像是缓存的问题", "先把日志贴上来看看",
            "这块逻辑有点绕，加个注释吧", "我觉得可以，等测试跑完", "回滚之前先跟 on-call 说一声", "这个改动影响面有点大")
_REPLY = ("I traced it to {f}: the {v} is consumed twice when the generator is restarted.",
          "The failing case is the empty {v}; {f} assumed at least one element.",
          "I split {f} into two steps so the {v} can be tested without the network.",
          "Reading the diff again, {f} still swallows the timeout; I will raise it instead.",
          "The stack trace points at {f} in the {m} module, so the fixture is fine.",
          "我看了一下，{f} 里的 {v} 没有在重试前重置。")


def _comp(rng: random.Random) -> str:
    return rng.choice(COMPONENTS)


def _clock(rng: random.Random) -> str:
    return f"{rng.randrange(8, 19):02d}:{rng.randrange(60):02d}"


def chat_line(rng: random.Random) -> str:
    """One message of a chat thread: a name, a time, and a line in English or Chinese."""
    said = rng.choice(_EN_CHAT) if rng.random() < 0.6 else rng.choice(_ZH_CHAT)
    return f"**{rng.choice(_PEOPLE)}** {_clock(rng)}  {said}"


def opening(rng: random.Random) -> str:
    """What the user opens a turn with: what to do next, and a line or two of chat."""
    comp, func = _comp(rng), rng.choice(_FUNCS)
    ask = rng.choice((f"OK, next one: {func} in {comp} breaks when the input is empty. Let's pair on it.",
                      f"Can you look at the flaky test around {func} in {comp}? I'll watch.",
                      f"帮我看下 {comp} 的 {func}，昨天合进去之后一直报错。",
                      f"Let's finish the {comp} refactor: {func} should not need the global client."))
    return "\n".join([ask, *(rng.choice(_EN_CHAT + _ZH_CHAT) for _ in range(rng.randrange(0, 3)))])


def reply(rng: random.Random) -> str:
    """The assistant's reply before what it plants: a few sentences about the code, sometimes a table."""
    parts = [rng.choice(_REPLY).format(f=rng.choice(_FUNCS), v=rng.choice(_VARS), m=rng.choice(_MODULES))
             for _ in range(rng.randrange(2, 6))]
    if rng.random() < 0.3:
        parts.append(markdown_table(rng))
    return "\n\n".join(parts)


def unified_diff(rng: random.Random) -> str:
    """A ``git diff`` of one Python file, with a hunk or two."""
    comp, mod = _comp(rng), rng.choice(_MODULES)
    path = f"src/{comp.replace('-', '_')}/{mod}.py"
    out = [f"diff --git a/{path} b/{path}", f"index {rng.getrandbits(28):07x}..{rng.getrandbits(28):07x} 100644",
           f"--- a/{path}", f"+++ b/{path}"]
    for _ in range(rng.randrange(1, 3)):
        start, func, var = rng.randrange(10, 400), rng.choice(_FUNCS), rng.choice(_VARS)
        out.append(f"@@ -{start},7 +{start},8 @@ def {func}(self, {var}):")
        out += [f"     {var} = self._{rng.choice(_VARS)}", f"-    if not {var}:", f"-        return None",
                f"+    if {var} is None:", f"+        raise ValueError(\"{func}: no {var}\")", f"+    {var} = list({var})",
                f"     return self.{rng.choice(_FUNCS)}({var})"]
    return "\n".join(out)


def makefile(rng: random.Random) -> str:
    """A Makefile with a few phony targets."""
    comp = _comp(rng)
    return "\n".join([".PHONY: test lint image", "PY ?= python3", f"SERVICE := {comp}", "",
                      "test:", "\t$(PY) -m pytest -q -x tests/", "", "lint:", "\truff check src tests", "",
                      "image:", f"\tdocker build -t $(SERVICE):dev -f services/{comp}/Dockerfile ."])


def dockerfile(rng: random.Random) -> str:
    """A two-stage Dockerfile."""
    comp = _comp(rng)
    return "\n".join(["FROM python:3.12-slim AS build", "WORKDIR /src", "COPY pyproject.toml uv.lock ./",
                      "RUN pip install --no-cache-dir uv && uv sync --frozen --no-dev", "COPY src ./src", "",
                      "FROM python:3.12-slim", "COPY --from=build /src /app", f"USER {comp.replace('-', '')}",
                      f"CMD [\"python\", \"-m\", \"{comp.replace('-', '_')}\"]"])


def compose(rng: random.Random) -> str:
    """A docker-compose file with a service or two and a database."""
    lines = ["services:"]
    for comp in rng.sample(COMPONENTS, rng.randrange(1, 3)):
        lines += [f"  {comp}:", f"    build: ./services/{comp}", "    depends_on: [db]",
                  "    environment:", f"      LOG_LEVEL: {rng.choice(('info', 'debug', 'warning'))}"]
    return "\n".join([*lines, "  db:", "    image: postgres:16", "    ports:", "      - \"5432:5432\""])


def helm_values(rng: random.Random) -> str:
    """A Helm ``values.yaml`` fragment."""
    comp = _comp(rng)
    return "\n".join([f"{comp}:", f"  replicaCount: {rng.randrange(1, 6)}", "  image:", f"    repository: ghcr.io/acme/{comp}",
                      "    pullPolicy: IfNotPresent", "  resources:", "    requests:",
                      f"      cpu: {rng.choice(('100m', '250m', '500m'))}", f"      memory: {rng.choice(('128Mi', '256Mi', '512Mi'))}",
                      "  ingress:", f"    enabled: {rng.choice(('true', 'false'))}"])


def terraform_plan(rng: random.Random) -> str:
    """``terraform plan`` output: a resource changed in place and the plan line."""
    comp = _comp(rng).replace("-", "_")
    return "\n".join(["Terraform will perform the following actions:", "",
                      f"  # aws_iam_role.{comp} will be updated in-place", f"  ~ resource \"aws_iam_role\" \"{comp}\" {{",
                      f"      ~ max_session_duration = {rng.randrange(1, 9)}00 -> {rng.randrange(1, 9)}00",
                      "        # (6 unchanged attributes hidden)", "    }", "",
                      f"Plan: 0 to add, {rng.randrange(1, 4)} to change, 0 to destroy."])


def sql_migration(rng: random.Random) -> str:
    """An SQL migration that adds a column and an index."""
    table, col = rng.choice(("orders", "invoices", "jobs", "events", "accounts")), rng.choice(_VARS)
    return "\n".join(["-- migrate:up", f"ALTER TABLE {table} ADD COLUMN {col}_at timestamptz;",
                      f"CREATE INDEX CONCURRENTLY idx_{table}_{col} ON {table} ({col}_at);", "",
                      "-- migrate:down", f"DROP INDEX idx_{table}_{col};", f"ALTER TABLE {table} DROP COLUMN {col}_at;"])


def actions_log(rng: random.Random) -> str:
    """A GitHub Actions job log: groups, steps and their times."""
    stamp = f"2024-11-{rng.randrange(10, 28)}T{rng.randrange(10, 23)}:{rng.randrange(10, 59)}"
    steps = ("actions/checkout@v4", "actions/setup-python@v5", "pip install -e .[test]", "make lint", "make test")
    out = []
    for second, step in enumerate(steps):
        out += [f"{stamp}:{second * 7 + 10}.{rng.randrange(1000, 9999)}Z ##[group]Run {step}",
                f"{stamp}:{second * 7 + 11}.{rng.randrange(1000, 9999)}Z ##[endgroup]"]
    return "\n".join(out)


def pytest_run(rng: random.Random) -> str:
    """A ``pytest`` run: the header, progress lines and the summary."""
    comp = _comp(rng).replace("-", "_")
    files = [f"tests/test_{rng.choice(_MODULES)}.py {'.' * rng.randrange(3, 30)}" for _ in range(rng.randrange(3, 9))]
    return "\n".join(["============================= test session starts ==============================",
                      "platform linux -- Python 3.12.7, pytest-8.3.3, pluggy-1.5.0", f"rootdir: /work/{comp}",
                      f"collected {rng.randrange(20, 300)} items", "", *files,
                      f"======================== {rng.randrange(20, 300)} passed in {rng.randrange(1, 60)}.{rng.randrange(10, 99)}s ========================"])


def markdown_table(rng: random.Random) -> str:
    """A Markdown table of a few components and a figure each."""
    rows = [f"| {comp} | {rng.randrange(5, 99)} | {rng.choice(('ok', 'slow', 'flaky'))} |"
            for comp in rng.sample(COMPONENTS, rng.randrange(2, 5))]
    return "\n".join(["| component | tests | state |", "| --- | --- | --- |", *rows])


def chat_thread(rng: random.Random) -> str:
    """A chat thread: a few messages, English and Chinese mixed."""
    return "\n".join(chat_line(rng) for _ in range(rng.randrange(3, 8)))


#: format -> (tool name, its arguments, its output), one per carrier format of a tool output
FILLERS: dict[str, tuple[str, Callable[[random.Random], dict[str, object]], Callable[[random.Random], str]]] = {
    "diff": ("bash", lambda r: {"command": "git diff HEAD~1"}, unified_diff),
    "make": ("read_file", lambda r: {"path": "Makefile"}, makefile),
    "dockerfile": ("read_file", lambda r: {"path": f"services/{_comp(r)}/Dockerfile"}, dockerfile),
    "compose": ("read_file", lambda r: {"path": "docker-compose.yml"}, compose),
    "helm": ("read_file", lambda r: {"path": "deploy/chart/values.yaml"}, helm_values),
    "terraform": ("bash", lambda r: {"command": "terraform plan -no-color"}, terraform_plan),
    "sql": ("read_file", lambda r: {"path": f"db/migrations/{r.randrange(100, 999)}_change.sql"}, sql_migration),
    "ci_log": ("bash", lambda r: {"command": "gh run view --log-failed"}, actions_log),
    "pytest": ("bash", lambda r: {"command": "python -m pytest -q"}, pytest_run),
    "table": ("read_file", lambda r: {"path": "docs/status.md"}, markdown_table),
    "chat": ("chat_history", lambda r: {"channel": "#pairing", "limit": 20}, chat_thread),
}
