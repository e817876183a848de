"""What the memory-quality workload plants: kinds of facts, how each is said, and how it is asked.

A :class:`Kind` is one relation (a service's port, a package's pinned version, a project's
owner, ...): how to draw a subject and a value, how a statement of it reads in each carrier
format (``prose``, ``comment`` in code, ``log`` line, ``json`` record), how an update of it
reads, and how it is asked in three wordings: the template (the relation's own words), a
paraphrase without them, and the other language.

Every kind's statements are split in two: ``dev`` phrasings (the ones the strategies were
developed against) and ``heldout`` phrasings, which the default run uses and which no extraction
rule was tuned on. Some kinds exist only in the held-out split.

Values are drawn so that no value of a kind can occur by chance in the filler text (hex ids,
five-digit ports, made-up URLs, names made of two given-name parts); the workload checks it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from experiments.workloads.text import PROJECTS, name_zh

__all__ = ["KINDS", "Kind", "ROLES", "Said", "service"]

ROLES = ("api", "rpc", "worker", "gateway", "indexer", "billing", "auth", "search", "ingest", "notifier", "scheduler")
_WORDS = ("amber", "basalt", "cedar", "delta", "falcon", "garnet", "harbor", "ivory", "jasper", "kelp", "larch",
          "mistral", "nectar", "opal", "pylon", "quill", "rowan", "saffron", "talon", "umber", "vesper", "wren")
_PACKAGES = ("fastapi", "pydantic", "httpx", "sqlalchemy", "celery", "uvicorn", "boto3", "grpcio", "redis-py",
             "alembic", "structlog", "orjson", "tenacity", "aiokafka", "psycopg")
_TICKET_PREFIX = ("OPS", "INC", "PLAT", "SRE", "DATA", "SEC")
#: what a user has preferences about, and the tools they might prefer
_LIKES = {"JavaScript packages": ("pnpm", "yarn", "bun"), "Python formatting": ("ruff format", "yapf", "autopep8"),
          "commit messages": ("Conventional Commits", "gitmoji", "Angular-style headers"),
          "front-end tests": ("vitest", "mocha", "ava"), "container builds": ("buildah", "kaniko", "podman")}
_TOPICS = ("the job queue", "the search index", "the session store", "the metrics rollups", "the audit log",
           "the feature flags", "the blob cache", "the rate limiter")
_OPTIONS = ("SQLite", "DuckDB", "NATS JetStream", "Redis Streams", "RabbitMQ", "Meilisearch", "Tantivy", "LMDB",
            "ClickHouse", "FoundationDB")
_REASONS = ("it needs no separate server", "the whole data set fits in memory", "it keeps ordering per key",
            "ops already runs it in every region", "it is the only one with row-level locks",
            "its license allows embedding", "the benchmark showed the lowest tail latency",
            "it survives a node loss without manual steps", "the team already knows its query language")


def service(rng: random.Random) -> str:
    """A service name: a project and a role (``atlas-rpc``)."""
    return f"{rng.choice(PROJECTS)}-{rng.choice(ROLES)}"


def _project(rng: random.Random) -> str:
    return rng.choice(PROJECTS)


def _package(rng: random.Random) -> str:
    return rng.choice(_PACKAGES)


@dataclass(frozen=True)
class Said:
    """Statement templates of one split, per carrier format; ``{s}`` the subject, ``{v}`` the value."""

    prose: tuple[str, ...] = ()
    comment: tuple[str, ...] = ()
    log: tuple[str, ...] = ()
    #: JSON record templates: key -> value template (an int value template ends in ``:int``)
    json: tuple[dict[str, str], ...] = ()
    #: updates: ``{v}`` the new value, ``{old}`` the one it replaces (prose only)
    update: tuple[str, ...] = ()

    def formats(self) -> list[str]:
        """The carrier formats this split can say the kind in."""
        return [name for name in ("prose", "comment", "log", "json") if getattr(self, name)]


@dataclass(frozen=True)
class Kind:
    """One relation the workload plants (see the module docstring)."""

    name: str
    lang: str  # the language its statements are in: english or chinese
    subject: Callable[[random.Random], str]
    #: a value for a subject
    value: Callable[[random.Random, str], str]
    #: a regular expression any value of this kind matches (abstention is judged with it)
    pattern: str
    dev: Said
    heldout: Said
    #: the question: template, paraphrase (no relation words), other language
    ask: tuple[str, str, str]
    #: asking for the value before the latest update (kinds that are updated)
    ask_before: tuple[str, str, str] | None = None
    #: only in the held-out split
    heldout_only: bool = False
    #: carriers it may come in (preferences only come from the user)
    carriers: tuple[str, ...] = field(default=("user", "assistant", "tool"))
    #: the reason a decision gives (``{why}`` in its templates, and a second part of the answer)
    why: Callable[[random.Random], str] | None = None

    def said(self, split: str) -> Said:
        """The statement templates of ``split`` (dev or heldout)."""
        return self.heldout if split == "heldout" else self.dev


_PORT_RE = r"(?<![\w.:/-])\d{4,5}(?![\w.-])|:\d{4,5}\b"

KINDS: tuple[Kind, ...] = (
    Kind("port", "english", service, lambda r, s: str(r.randrange(20000, 39999)), _PORT_RE,
         dev=Said(prose=("Service {s} listens on port {v}.", "You can reach {s} on port {v} from the VPN."),
                  comment=("# {s}: listen port {v}",), log=("INFO [{s}] listening on 0.0.0.0:{v}",),
                  json=({"service": "{s}", "port": "{v}:int"},),
                  update=("{s} moved to port {v}, so update your tunnels.",)),
         heldout=Said(prose=("Heads up: {s} now answers on {v}, not the default.",
                                                "服务{s}的端口是{v}。"),
                                         comment=("// {s} serves HTTP on port {v}",),
                                         log=("[{s}] bound listener port={v}",),
                                         json=({"name": "{s}", "listen_port": "{v}:int"},),
                                         update=("Port for {s} changed: it was {old}, it is {v} from today.",)),
         ask=("Which port does service {s} listen on?", "How do I connect to {s}? I need the number.", "服务{s}监听哪个端口？"),
         ask_before=("Which port did {s} listen on before the change?", "What number did {s} use earlier?",
                     "{s}之前用的是哪个端口？")),
    Kind("endpoint", "english", service, lambda r, s: f"https://{r.choice(_WORDS)}-{r.randrange(10, 99)}.example.dev/v{r.randrange(1, 5)}/{r.choice(_WORDS)}",
         r"https?://\S+",
         dev=Said(prose=("The API endpoint of {s} is {v}.",), log=("[{s}] serving requests at {v}",),
                  json=({"service": "{s}", "endpoint": "{v}"},),
                  update=("{s} has a new endpoint: {v}.",)),
         heldout=Said(prose=("Point the {s} client at {v} from now on.", "{s}的接口地址是{v}。"),
                      comment=("/* base URL for {s}: {v} */",), json=({"app": "{s}", "base_url": "{v}"},),
                      update=("We migrated {s} off {old}; its calls go to {v} now.",)),
         ask=("What is the API endpoint of {s}?", "Which URL should the client call for {s}?", "{s}的接口地址是什么？"),
         ask_before=("What was the endpoint of {s} before the migration?", "Which URL did {s} use earlier?",
                     "{s}以前的接口地址是什么？")),
    Kind("branch", "english", service, lambda r, s: f"feature/{r.choice(_WORDS)}-{r.choice(_WORDS)}-{r.randrange(100, 999)}",
         r"\b(?:feature|fix|hotfix|release)/\S+",
         dev=Said(prose=("The fix for {s} is on branch {v}.",), comment=("# {s} work lives on branch {v}",),
                  log=("[{s}] Switched to a new branch '{v}'",), json=({"repo": "{s}", "head_ref": "{v}"},),
                  update=("We rebased the {s} work onto branch {v}.",)),
         heldout=Said(prose=("Push your {s} changes to {v}, please.", "{s}的改动都在分支{v}上。"),
                                         log=("remote: {s} -> pushed {v}",),
                                         json=({"project": "{s}", "branch": "{v}"},),
                                         update=("Forget {old}: the {s} work continues on {v}.",)),
         ask=("Which branch has the work for {s}?", "Where should I push the {s} changes?", "{s}的工作分支是哪个？"),
         ask_before=("Which branch did the {s} work use before?", "Where were the {s} changes pushed earlier?",
                     "{s}以前用哪个分支？")),
    Kind("commit", "english", service, lambda r, s: f"{r.getrandbits(48):012x}", r"\b[0-9a-f]{7,40}\b",
         dev=Said(prose=("The last good commit of {s} is {v}.",), log=("[{s}] HEAD is now at {v} (last good build)",),
                  json=({"project": "{s}", "last_good_commit": "{v}"},)),
         heldout=Said(prose=("{s} was still fine at {v}; everything after it is broken.",),
                      comment=("# {s}: roll back to {v} if the canary fails",),
                      json=({"service": "{s}", "known_good_sha": "{v}"},)),
         ask=("What is the last good commit of {s}?", "Which build of {s} should we roll back to?", "{s}最后一个正常的提交是哪个？")),
    Kind("ticket", "english", service, lambda r, s: f"{r.choice(_TICKET_PREFIX)}-{r.randrange(1000, 9999)}",
         r"\b[A-Z]{2,6}-\d{2,6}\b",
         dev=Said(prose=("The {s} outage is tracked in {v}.", "{s}的故障记录在工单{v}里。"),
                  comment=("# TODO({v}): {s} outage follow-up",), json=({"service": "{s}", "incident": "{v}"},)),
         heldout=Said(prose=("I filed {v} for the {s} outage, link it in the postmortem.",),
                      log=("[{s}] incident opened: {v}",), json=({"component": "{s}", "jira": "{v}"},)),
         ask=("Which ticket tracks the {s} outage?", "Where do I read about what broke in {s}?", "{s}故障对应的工单号是多少？")),
    Kind("version_pin", "english", _package, lambda r, s: f"{r.randrange(1, 9)}.{r.randrange(10, 60)}.{r.randrange(0, 20)}",
         r"\b\d+\.\d+\.\d+\b",
         dev=Said(prose=("Pin {s} to {v}; newer releases break the build.",), comment=("# requirements: {s}=={v}",),
                  log=("Successfully installed {s}-{v}",), json=({"package": "{s}", "pinned": "{v}"},),
                  update=("We can move {s} up to {v} now.",)),
         heldout=Said(prose=("{s} {v} is the last release that works for us.",), comment=("{s} = \"=={v}\"  # keep",),
                      json=({"name": "{s}", "constraint": "=={v}"},),
                      update=("Bumped {s} from {old} to {v} after the fix landed upstream.",)),
         ask=("Which version of {s} are we pinned to?", "What {s} release must we stay on?", "{s}要固定在哪个版本？"),
         ask_before=("Which version of {s} were we pinned to before?", "What {s} release did we use earlier?",
                     "{s}之前固定的是哪个版本？")),
    Kind("env", "english", lambda r: f"{r.choice(PROJECTS).upper()}_{r.choice(ROLES).upper()}_DB_URL",
         lambda r, s: f"postgres://db{r.randrange(10, 99)}.internal:5432/{r.choice(_WORDS)}_{r.randrange(100, 999)}",
         r"\w+://\S+",
         dev=Said(prose=("Set {s} to {v} in staging.",), comment=("export {s}={v}",), log=("env: {s}={v}",),
                  update=("{s} must now be {v}.",)),
         heldout=Said(prose=("{s} should point at {v} for the load test.",), json=({"env": "{s}", "value": "{v}"},),
                      update=("Changed {s}: {old} is retired, use {v}.",)),
         ask=("What is {s} set to?", "Where does {s} point?", "{s}的值是什么？"),
         ask_before=("What was {s} set to before?", "Where did {s} point earlier?", "{s}以前的值是什么？")),
    Kind("owner", "chinese", _project, lambda r, s: name_zh(r, given=2), r"[\u4e00-\u9fff]{3}",
         dev=Said(prose=("项目{s}的负责人是{v}。",)),
         heldout=Said(prose=("{s}这个项目由{v}负责，有问题直接找他。",), comment=("# owner: {v} ({s})",)),
         ask=("项目{s}的负责人是谁？", "{s}出问题了应该找谁？", "Who owns project {s}?")),
    Kind("config_path", "chinese", service, lambda r, s: f"/srv/{r.choice(_WORDS)}/etc/{r.choice(_WORDS)}-{r.randrange(100, 999)}.toml",
         r"/\S+\.toml",
         dev=Said(prose=("服务{s}的配置文件在{v}。",), comment=("# {s} 的配置：{v}",)),
         heldout=Said(prose=("{s}启动时读取{v}这个文件。",), log=("[{s}] loaded settings from {v}",)),
         ask=("服务{s}的配置文件在哪里？", "{s}启动时读的是哪个文件？", "Where is the config file of {s}?")),
    Kind("preference", "english", lambda r: r.choice(list(_LIKES)), lambda r, s: r.choice(_LIKES[s]), "",
         dev=Said(prose=("Please always use {v} for {s}.", "{s}请一律用{v}。")),
         heldout=Said(prose=("I prefer {v} when it comes to {s}.", "For {s}, stick with {v}; nothing else, thanks.")),
         ask=("Which tool does the user want for {s}?", "How should I handle {s} the way the user likes?",
              "用户希望{s}用什么工具？"),
         carriers=("user",)),
    Kind("decision", "english", lambda r: r.choice(_TOPICS), lambda r, s: r.choice(_OPTIONS), "",
         dev=Said(prose=("We decided to use {v} for {s} because {why}.", "{s}我们决定采用{v}，因为{why}。")),
         heldout=Said(prose=("Going with {v} for {s}, since {why}.", "After the spike, {v} won for {s}: {why}.")),
         ask=("What did we decide for {s}, and why?", "Which option won for {s} and what was the argument?",
              "{s}最后选了什么方案，为什么？"),
         carriers=("user", "assistant"), why=lambda r: r.choice(_REASONS)),
    Kind("deploy_key", "english", _project, lambda r, s: f"dk_{r.getrandbits(80):020x}", r"\bdk_[0-9a-f]+",
         dev=Said(), heldout=Said(prose=("Use {v} as the deploy key for {s}; the old one is revoked.",),
                                  json=({"project": "{s}", "deploy_key": "{v}"},)),
         ask=("What is the deploy key of {s}?", "Which credential do I give the {s} pipeline?", "{s}的部署密钥是什么？"),
         heldout_only=True),
    Kind("backup_path", "chinese", lambda r: f"{r.choice(PROJECTS)}_db", lambda r, s: f"/backup/{r.choice(_WORDS)}/{r.getrandbits(32):08x}",
         r"/backup/\S+",
         dev=Said(), heldout=Said(prose=("数据库{s}每天备份到{v}。",), log=("[{s}] backup written to {v}",)),
         ask=("数据库{s}的备份在哪里？", "{s}的数据每天存到哪儿？", "Where are the backups of database {s}?"),
         heldout_only=True),
)
