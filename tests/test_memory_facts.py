"""Facts found by their value in any carrier; statements of prose, comments, logs and JSON; slots and updates."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.entries import ToolResult, User
from aptmem.memory.facts import facts_of, facts_of_entry, same_slot, snippet, update_target, word_frequency
from aptmem.memory.lexical import Ranker, rank
from aptmem.memory.statements import Statement, statements


def _values(text: str, by_user: bool = False) -> set[str]:
    return {f.value for s in statements(text) for f in facts_of(s, by_user=by_user)}


@pytest.mark.parametrize(("text", "value"), [
    ("Service atlas-rpc listens on port 31234.", "31234"),  # no "states a value" verb
    ("项目atlas的负责人是王伟芳。", "王伟芳"),  # a Chinese name: no digit, no path
    ('{"status":"ok","items":[{"n":1,"sha":"a1"},{"n":2,"sha":"b2"},{"n":3,"sha":"c3"},{"n":4,"sha":"d4"},'
     '{"service":"atlas-rpc","port":31234}]}', "31234"),  # a field inside minified JSON
    ('{"items":[{"note":"The deploy key for project atlas is dk_0a1b2c3d4e5f60718293."}]}', "dk_0a1b2c3d4e5f60718293"),
    ("2024-05-29T12:00:01.123Z INFO  [atlas-rpc] listening on 0.0.0.0:31234", "0.0.0.0:31234"),
    ("def f():\n    # atlas-rpc: listen port 31234\n    return 1", "31234"),  # a code comment
    ("服务atlas-api的配置文件在/srv/atlas/etc/main-123.toml。", "/srv/atlas/etc/main-123.toml"),  # a path right after CJK
    ("Pin fastapi to 0.110.2; newer releases break the build.", "0.110.2"),
    ("The owner of billing-api is Grace Hopper.", "Grace Hopper"),
    ("I filed OPS-4821 for the billing-api outage.", "OPS-4821"),
])
def test_a_fact_is_found_by_its_value_whatever_carries_it(text: str, value: str) -> None:
    assert value in _values(text)


def test_preferences_and_decisions_are_kept_whole() -> None:
    preference = _values("Please always use pnpm for JavaScript packages.", by_user=True)
    assert preference == {"Please always use pnpm for JavaScript packages."}
    decision = _values("the job queue我们决定采用NATS JetStream，因为it keeps ordering per key。")
    assert any("NATS JetStream" in v and "ordering per key" in v for v in decision)


@pytest.mark.parametrize("text", [
    "The log says the cache timed out after 2345 ms while reading the buffer.",  # a measurement
    "There are 1234 call sites of load_session in the code base.",
    "测试显示缓存层大约每123次调用就丢失了一次最后一行。",
    "def load(path: str, limit: int = 4096) -> list[str]:",  # code, not a statement
    "src/app.py:120: return session.read(4096)",  # a grep hit
    "https://docs.example.org/a/b",  # a bare value says nothing about anything
])
def test_no_fact_where_nothing_is_stated(text: str) -> None:
    assert not _values(text)


def test_lines_of_one_template_repeated_through_an_output_rank_below_a_lone_statement() -> None:
    bulk = "\n".join(f"npm WARN deprecated pkg{i}@{i}.2.0: use other{i} instead" for i in range(6))
    entry = ToolResult(ts=1, id="r", call_id="c", content=bulk + "\natlas-rpc: bound listener port=31234")
    facts = {f.value: f.salience for f in facts_of_entry(entry)}
    assert facts["31234"] > max(v for k, v in facts.items() if "@" in k)


def _fact(text: str):  # type: ignore[no-untyped-def]
    found = facts_of(Statement(text, "prose"), by_user=False)
    assert found, text
    return found[0]


def test_an_update_supersedes_its_own_slot_and_not_a_near_miss_or_another_one() -> None:
    old = _fact("You can reach willow-scheduler on port 29354 from the VPN.")
    near = _fact("You can reach willow-api on port 29399 from the VPN.")
    moved = _fact("willow-scheduler moved to port 33492, so update your tunnels.")
    frequency = word_frequency([old, near, moved])
    assert update_target(moved, [old, near], frequency) == 0
    assert not same_slot(near, _fact("You can reach willow-scheduler on port 29355 from the VPN."))
    first = _fact("For the export cleanup I filed BUG-67561.")
    another = _fact("For the export cleanup I filed BUG-90938 as well.")
    assert not same_slot(first, another) and update_target(another, [first], word_frequency([first, another])) is None


def test_a_snippet_keeps_the_value_and_names_the_subject() -> None:
    fact = _fact("After a long week of flaky deploys and two rollbacks, we finally settled that service atlas-rpc "
                 "listens on port 31234 in every region from now on.")
    short = snippet(fact)
    assert "31234" in short and "atlas-rpc" in short and len(short) < len(fact.text)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=400))
def test_every_fact_found_holds_its_value_in_its_text(text: str) -> None:
    for fact in facts_of_entry(User(ts=1, content=text)):
        assert fact.value in fact.text or fact.shape in ("preference", "decision")


def test_keyword_ranking_finds_english_and_chinese_and_prefers_the_newer_on_a_tie() -> None:
    texts = ["Service atlas-rpc listens on port 31234.", "服务atlas-api的端口是20001。", "nothing here",
             "Service atlas-rpc listens on port 31234."]
    assert rank("Which port does atlas-rpc listen on?", texts)[:2] == [3, 0]
    assert rank("atlas-api的端口", texts)[0] == 1
    with Ranker(texts) as ranker:
        assert ranker.rank("") == [] and ranker.rank("zzz") == []


@pytest.mark.parametrize(("line", "value"), [('fastapi = "==1.2.3"  # keep', "1.2.3"),
                                             ("export ATLAS_DB_URL=postgres://db1.internal:5432/atlas", "postgres://db1.internal:5432/atlas")])
def test_a_setting_line_of_a_config_file_is_a_statement(line: str, value: str) -> None:
    assert value in _values(line)


@pytest.mark.parametrize(("text", "value"), [
    # Cue forms written from general usage (not the workload's templates).
    ("The payments repo is maintained by Lena Park.", "Lena Park"),
    ("payments服务由孙立新维护。", "孙立新"),
    ("Going forward, only use ruff for linting.", "Going forward, only use ruff for linting."),
    ("We went with Temporal for the workflows: retries come for free.",
     "We went with Temporal for the workflows: retries come for free."),
])
def test_general_cue_forms_of_names_preferences_and_decisions_are_found(text: str, value: str) -> None:
    assert value in _values(text, by_user=True)


def test_an_update_that_names_the_old_value_supersedes_exactly_the_fact_holding_it() -> None:
    from aptmem.memory.kv_dict import merge_facts

    said = ['psycopg = "==7.45.12"  # keep', "uvicorn 4.11.5 is the last release that works for us.",
            "Bumped psycopg from 7.45.12 to 2.29.13 after the fix landed upstream.",
            "Bumped uvicorn from 4.11.5 to 5.56.14 after the fix landed upstream."]
    records: list = []
    for ts, text in enumerate(said):
        records = merge_facts(records, [msgspec.structs.replace(f, ts=ts)
                                        for s in statements(text) for f in facts_of(s, by_user=True)], 100)
    by_value = {r.value: [b.value for b in r.before] for r in records}
    assert by_value == {"2.29.13": ["7.45.12"], "5.56.14": ["4.11.5"]}, by_value
    moved = _fact("Bumped httpx from 1.2.3 to 1.3.0 after the fix landed upstream.")
    assert moved.replaces == "1.2.3"
    assert update_target(moved, [_fact("uvicorn 4.11.5 is the last release that works for us.")], {}) is None


@pytest.mark.parametrize(("text", "value", "about"), [
    # a Markdown table row under a header: each cell about the first, named by its column
    ("| Host | Maintainer | Notes |\n|---|---|---|\n| cobalt-db | Edsger Dijkstra | weekly |", "Edsger Dijkstra", "cobalt-db"),
    ("| svc | contact |\n| :--- | ---: |\n| marlin | Ada Byron |", "Ada Byron", "marlin"),
    # a setting under an INI/TOML section or a YAML block key is about it; its literal is its value
    ("[cache.marlin]\neviction = \"lru-approx\"\n", "lru-approx", "cache.marlin"),
    ("workers:\n  marlin-sync:\n    queue: sync-lowprio\n", "sync-lowprio", "marlin-sync"),
    # a git log entry binds its hash to its message
    ("commit 7d1e0c9b2a44\nAuthor: bot <b@x.invalid>\n\n    marlin: drop the legacy codec", "7d1e0c9b2a44", ""),
    # a log line's key=value, a command-line flag, a channel, a cloud region, a role before its verb
    ("2024-01-02T03:04:05Z INFO marlin-api ready shard_key=tenant-hash-v2", "tenant-hash-v2", ""),
    ("The marlin build is only green with --skip-flaky-net on the runners.", "--skip-flaky-net", ""),
    ("Page the marlin team in #marlin-oncall when the queue backs up.", "#marlin-oncall", ""),
    ("We keep the marlin replicas in ap-southeast-2 for latency.", "ap-southeast-2", ""),
    ("Grace Murray will lead the marlin rewrite next quarter.", "Grace Murray", ""),
])
def test_facts_are_found_in_the_shapes_structured_output_takes(text: str, value: str, about: str) -> None:
    found = [f for s in statements(text) for f in facts_of(s, by_user=False) if f.value == value]
    assert found, f"{value!r} not found in {text!r}"
    if about:
        assert about in found[0].subject


def test_a_value_after_from_is_current_unless_a_new_value_of_its_kind_stands_beside_it() -> None:
    assert "/srv/marlin/etc/main.toml" in _values("marlin-api: loaded settings from /srv/marlin/etc/main.toml")
    moved = _values("We moved the port of marlin-api from 31234 to 40001.")
    assert "40001" in moved and "31234" not in moved


def test_a_long_json_listing_gives_its_rarest_fields_first() -> None:
    # 80 records carry a prose note (80 statements, past the cap of 64 before the lone ticket field is reached)
    rows = ",".join(f'{{"path":"src/f{i}.py","size":{1000 + i}' + (f',"note":"The build of module m{i} got slower this week."}}'
                                                                 if i < 80 else "}") for i in range(400))
    text = f'{{"items":[{rows},{{"component":"marlin-api","ticket":"OPS-4242"}}]}}'
    assert "OPS-4242" in _values(text)


def test_a_place_in_a_file_is_no_fact() -> None:
    # a traceback frame's line number moves with every edit: the file may be worth keeping, its line is not
    found = _values('  File "pkg/core/state_tokens.py", line 1914, in load_record')
    assert "1914" not in found and "pkg/core/state_tokens.py" in found


@pytest.mark.parametrize(("text", "value", "shape"), [
    ("FROM python:3.12-slim AS build", "python:3.12-slim", "image"),
    ("    schedule: \"15 3 * * 1\"", "15 3 * * 1", "cron"),
    ("For billing the writer endpoint is pg-billing-4.db2.internal; replicas are read-only.", "pg-billing-4.db2.internal", "ident"),
    ("Consumers of orders must read orders.events.v4 from today.", "orders.events.v4", "ident"),
    ("We pin the search clients to API v2beta3 until the window ends.", "v2beta3", "version"),
    ("Throttle search at 4500 requests per minute per tenant.", "4500 requests per minute", "amount"),  # bound by "at": a setting
    ("Alice Moreau is the DRI for the billing cutover.", "Alice Moreau", "name"),
])
def test_values_of_common_shapes_are_found(text: str, value: str, shape: str) -> None:
    found = {(f.value, f.shape) for s in statements(text) for f in facts_of(s, by_user=False)}
    assert (value, shape) in found, found


def test_a_measured_quantity_and_a_bare_decimal_are_no_setting() -> None:
    assert "4500" not in _values("The batch took 4500 seconds on the runners.")
    assert not any(f.shape == "version" for s in statements("p95 was 94.0 after it") for f in facts_of(s, by_user=False))
    assert "8%" not in _values("willow-search的错误率在过去一小时里是8%。")


@pytest.mark.parametrize(("text", "new", "old"), [
    ("search memory limit: 2000 → 2500", "2500", "2000"),
    ("Clients of search move to API v4beta1; v3beta2 is deprecated.", "v4beta1", "v3beta2"),
    ("Raise the search limit to 7500 per minute (was 4500).", "7500", "4500"),
])
def test_an_arrow_or_a_deprecation_marks_the_old_value(text: str, new: str, old: str) -> None:
    facts = [f for s in statements(text) for f in facts_of(s, by_user=True)]
    assert [(f.value, f.replaces, f.update) for f in facts] == [(new, old, True)]


def test_a_logfmt_pair_that_names_the_service_is_its_subject_not_a_value() -> None:
    line = "ts=2024-06-03T08:14:55Z level=info service=orders topic=orders.events.v4 acks=all"
    facts = [f for s in statements(line) for f in facts_of(s, by_user=False)]
    assert "orders" not in {f.value for f in facts}
    assert any(f.value == "orders.events.v4" and "orders" in f.subject for f in facts)


def test_a_csv_row_under_its_header_says_each_cell_of_its_first() -> None:
    text = "service,signal,count,p95_ms\nmeadow,hot key,237,94.0\ncluster,primary,port,replicas\nbeacon,pg-beacon-7.db3.internal,5432,2"
    said = [s.text for s in statements(text)]
    assert "beacon primary: pg-beacon-7.db3.internal" in said and "beacon port: 5432" in said
    assert "meadow count: 237" in said and not any(t.startswith("cluster") for t in said)


def test_a_row_of_a_long_listing_ranks_below_one_of_a_short_one() -> None:
    def salience(rows: int) -> float:
        lines = [f"{i:012x}abc nginx:{i % 20 + 1}.{i % 9}-slim \"/entrypoint.sh\" Up 3 hours web_{i}" for i in range(rows)]
        facts = list(facts_of_entry(ToolResult(ts=1, id="r", call_id="c", name="bash", content="\n".join(lines)), max_facts=1000))
        return max(f.salience for f in facts if f.shape == "image")
    assert salience(100) < salience(6) < salience(3)
