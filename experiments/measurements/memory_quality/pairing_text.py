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
_TEAMS = ("platform", "payments", "data-eng", "web", "sre", "api-guild")
#: decisions made before the sessions (filler: no option or reason of the planted decisions)
_SETTLED = (("the logging library", "structlog", "it is already in the base image"),
            ("the HTTP client", "httpx", "it speaks HTTP/2 to the gateway"),
            ("the lint setup", "ruff only", "one tool is faster than four"),
            ("the secrets store", "Vault", "security already audits it"),
            ("the task tracker", "Linear", "the design team lives there"))
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


def _grow(rng: random.Random, size: int, head: list[str], part: Callable[[random.Random], list[str]],
          tail: list[str] | None = None) -> str:
    """``head``, then parts drawn until about ``size`` characters, then ``tail``: one output of that size."""
    lines, total = list(head), sum(map(len, head))
    while total < size:
        more = part(rng)
        lines += more
        total += sum(map(len, more)) + len(more)
    return "\n".join([*lines, *(tail or [])])


def _hunk(rng: random.Random) -> list[str]:
    start, func, var = rng.randrange(10, 400), rng.choice(_FUNCS), rng.choice(_VARS)
    return [f"@@ -{start},7 +{start},8 @@ def {func}(self, {var}):", f"     {var} = self._{rng.choice(_VARS)}",
            f"-    if not {var}:", "-        return None", f"+    if {var} is None:",
            f"+        raise ValueError(\"{func}: no {var}\")", f"+    {var} = list({var})",
            f"     return self.{rng.choice(_FUNCS)}({var})"]


def _file_diff(rng: random.Random) -> list[str]:
    path = f"src/{_comp(rng).replace('-', '_')}/{rng.choice(_MODULES)}.py"
    out = [f"diff --git a/{path} b/{path}", f"index {rng.getrandbits(28):07x}..{rng.getrandbits(28):07x} 100644",
           f"--- a/{path}", f"+++ b/{path}"]
    for _ in range(rng.randrange(1, 4)):
        out += _hunk(rng)
    return out


def unified_diff(rng: random.Random, size: int) -> str:
    """A ``git diff`` of Python files, a hunk or a few each."""
    return _grow(rng, size, [], _file_diff)


def makefile(rng: random.Random, size: int) -> str:
    """A Makefile: variables, then phony targets with their recipes."""
    def target(r: random.Random) -> list[str]:
        comp, mod = _comp(r), r.choice(_MODULES)
        return ["", f"test-{mod}:", f"\t$(PY) -m pytest -q tests/test_{mod}.py", "", f"image-{comp}:",
                f"\tdocker build -t {comp}:dev -f services/{comp}/Dockerfile ."]
    return _grow(rng, size, [".PHONY: test lint image", "PY ?= python3", "", "lint:", "\truff check src tests"], target)


def dockerfile(rng: random.Random, size: int) -> str:
    """A two-stage Dockerfile."""
    comp = _comp(rng)
    def step(r: random.Random) -> list[str]:
        return [r.choice(("RUN apt-get update && apt-get install -y --no-install-recommends libpq5 && rm -rf /var/lib/apt/lists/*",
                          f"COPY services/{comp}/{r.choice(_MODULES)} ./src/{r.choice(_MODULES)}",
                          f"ENV {r.choice(_VARS).upper()}_MODE={r.choice(('strict', 'lenient', 'off'))}",
                          "RUN uv sync --frozen --no-dev"))]
    return _grow(rng, size, ["FROM python:3.12-slim AS build", "WORKDIR /src", "COPY pyproject.toml uv.lock ./"], step,
                 ["", "FROM python:3.12-slim", "COPY --from=build /src /app", f"CMD [\"python\", \"-m\", \"{comp.replace('-', '_')}\"]"])


def compose(rng: random.Random, size: int) -> str:
    """A docker-compose file: services, and a database."""
    def service(r: random.Random) -> list[str]:
        comp = _comp(r)
        return [f"  {comp}:", f"    build: ./services/{comp}", "    depends_on: [db]", "    environment:",
                f"      LOG_LEVEL: {r.choice(('info', 'debug', 'warning'))}"]
    return _grow(rng, size, ["services:"], service, ["  db:", "    image: mariadb:11.4", "    ports:", "      - \"3306:3306\""])


def helm_values(rng: random.Random, size: int) -> str:
    """A Helm ``values.yaml``: a block per component."""
    def block(r: random.Random) -> list[str]:
        comp = _comp(r)
        return [f"{comp}:", f"  replicaCount: {r.randrange(1, 6)}", "  image:", f"    repository: ghcr.io/acme/{comp}",
                "    pullPolicy: IfNotPresent", "  resources:", "    requests:", f"      cpu: {r.choice(('100m', '250m', '500m'))}",
                f"      memory: {r.choice(('128Mi', '256Mi', '512Mi'))}", f"  ingress:\n    enabled: {r.choice(('true', 'false'))}"]
    return _grow(rng, size, ["global:", "  imageRegistry: ghcr.io"], block)


def terraform_plan(rng: random.Random, size: int) -> str:
    """``terraform plan`` output: resources changed in place, and the plan line."""
    def change(r: random.Random) -> list[str]:
        comp = _comp(r).replace("-", "_")
        return [f"  # aws_iam_role.{comp} will be updated in-place", f"  ~ resource \"aws_iam_role\" \"{comp}\" {{",
                f"      ~ max_session_duration = {r.randrange(1, 9)}00 -> {r.randrange(1, 9)}00",
                "        # (6 unchanged attributes hidden)", "    }", ""]
    return _grow(rng, size, ["Terraform will perform the following actions:", ""], change,
                 [f"Plan: 0 to add, {rng.randrange(1, 9)} to change, 0 to destroy."])


def sql_migration(rng: random.Random, size: int) -> str:
    """An SQL migration that adds columns and indexes."""
    def statement(r: random.Random) -> list[str]:
        table, col = r.choice(("orders", "invoices", "jobs", "events", "accounts")), r.choice(_VARS)
        return [f"ALTER TABLE {table} ADD COLUMN {col}_at timestamptz;",
                f"CREATE INDEX CONCURRENTLY idx_{table}_{col} ON {table} ({col}_at);"]
    return _grow(rng, size, ["-- migrate:up"], statement, ["", "-- migrate:down", "-- irreversible: restore from backup"])


def actions_log(rng: random.Random, size: int) -> str:
    """A GitHub Actions job log: a group per step, with its output."""
    stamp = f"2024-11-{rng.randrange(10, 28)}T{rng.randrange(10, 23)}:{rng.randrange(10, 59)}"
    def step(r: random.Random) -> list[str]:
        at = f"{stamp}:{r.randrange(10, 59)}.{r.randrange(1000, 9999)}Z"
        run = r.choice(("actions/checkout@v4", "actions/setup-python@v5", "pip install -e .[test]", "make lint", "make test"))
        return [f"{at} ##[group]Run {run}", f"{at} shell: /usr/bin/bash -e {{0}}",
                f"{at} {r.choice(_EN_CHAT) if r.random() < 0.2 else 'ok'}", f"{at} ##[endgroup]"]
    return _grow(rng, size, [f"{stamp}:01.1000Z Requested labels: ubuntu-latest"], step)


def pytest_run(rng: random.Random, size: int) -> str:
    """A ``pytest`` run: the header, a progress line per file and the summary."""
    def progress(r: random.Random) -> list[str]:
        return [f"tests/test_{r.choice(_MODULES)}.py {'.' * r.randrange(3, 40)}"]
    return _grow(rng, size, ["============================= test session starts ==============================",
                             "platform linux -- Python 3.12.7, pytest-8.3.3, pluggy-1.5.0",
                             f"rootdir: /work/{_comp(rng).replace('-', '_')}", f"collected {rng.randrange(20, 900)} items", ""],
                 progress, [f"======================== {rng.randrange(20, 900)} passed in {rng.randrange(1, 60)}.{rng.randrange(10, 99)}s"])


def markdown_table(rng: random.Random, size: int = 0) -> str:
    """A Markdown table: a component and a figure per row."""
    def row(r: random.Random) -> list[str]:
        return [f"| {_comp(r)} | {r.randrange(5, 99)} | {r.choice(('ok', 'slow', 'flaky'))} |"]
    return _grow(rng, max(size, rng.randrange(60, 200)), ["| component | tests | state |", "| --- | --- | --- |"], row)


def codeowners(rng: random.Random, size: int) -> str:
    """A CODEOWNERS file: a path and a team per line."""
    def line(r: random.Random) -> list[str]:
        return [f"/services/{_comp(r)}/{r.choice(_MODULES)}/  @acme/{r.choice(_TEAMS)}"]
    return _grow(rng, size, ["# Each line is a path and the teams that must approve a change to it."], line)


def decision_log(rng: random.Random, size: int) -> str:
    """A Markdown table of design decisions already made (none of them asked about)."""
    def row(r: random.Random) -> list[str]:
        question, choice, why = r.choice(_SETTLED)
        return [f"| {question} | {choice} | {why} |"]
    return _grow(rng, size, ["| question | choice | why |", "| --- | --- | --- |"], row)


def chat_thread(rng: random.Random, size: int) -> str:
    """A chat thread: messages, English and Chinese mixed."""
    return _grow(rng, min(size, 1_500), [], lambda r: [chat_line(r)])


#: format -> (tool name, its arguments, its output of about a given size), one per carrier format of a tool output
FILLERS: dict[str, tuple[str, Callable[[random.Random], dict[str, object]], Callable[[random.Random, int], str]]] = {
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
    "codeowners": ("read_file", lambda r: {"path": ".github/CODEOWNERS"}, codeowners),
    "adr": ("read_file", lambda r: {"path": "docs/decisions.md"}, decision_log),
    "chat": ("chat_history", lambda r: {"channel": "#pairing", "limit": 20}, chat_thread),
}
