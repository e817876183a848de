"""Every value shape and statement form the fact finder's docstring names, each on examples of its own
(written from config, log and listing formats, not from any memory-quality workload), and updates by key."""

from __future__ import annotations

import pytest

from aptmem.entries import ToolResult
from aptmem.memory.facts import Fact, facts_of, facts_of_entry, same_slot
from aptmem.memory.statements import statements

# (case, text, a value that must be found exactly)
_SHAPES = [
 # identifiers
 ("id-digit", "The migration to apply next is 20240511_0930_add_invoices.", "20240511_0930_add_invoices"),
 ("id-mixed", "Deployment name: WebFrontendV2", "WebFrontendV2"),
 ("id-dots", "Artifacts go to the bucket acme.prod.assets from now on.", "acme.prod.assets"),
 ("id-slash", "The Stripe secret is stored under secret/data/payments/stripe in Vault.", "secret/data/payments/stripe"),
 ("id-uuid", "The tenant id for Northwind is 3f2b8c1e-9a4d-4e2b-8f1a-2c3d4e5f6a7b.", "3f2b8c1e-9a4d-4e2b-8f1a-2c3d4e5f6a7b"),
 ("id-arn", "The deploy role is arn:aws:iam::123456789012:role/deploy-ci.", "arn:aws:iam::123456789012:role/deploy-ci"),
 ("id-account", "Our AWS account for staging is 210987654321.", "210987654321"),
 ("id-snake", "The feature flag we use is checkout_v2_enabled.", "checkout_v2_enabled"),
 # quantities with units
 ("q-k8s-mem", "The worker's memory limit is 2944Mi.", "2944Mi"),
 ("q-k8s-cpu", "resources.requests.cpu: 750m", "750m"),
 ("q-dur", "The request timeout for the gateway is 45s.", "45s"),
 ("q-dur-ms", "Set the retry backoff to 1500ms for the uploader.", "1500ms"),
 ("q-size", "The max upload size on the proxy is 25MB.", "25MB"),
 ("q-rate", "The rate limit for the public API is 600 req/min.", "600 req/min"),
 ("q-pct", "The error budget for checkout is 0.5%.", "0.5%"),
 ("q-pct2", "Canary traffic share: 12.5%", "12.5%"),
 ("q-ttl", "retention: 30d", "30d"),
 # paths urls
 ("p-home", "The settings file is ~/.config/acme/settings.toml.", "~/.config/acme/settings.toml"),
 ("p-win", r"The build writes to C:\build\out\app.msi on the runner.", r"C:\build\out\app.msi"),
 ("u-ssh", "The mirror remote is git@gitlab.acme.dev:platform/infra.git.", "git@gitlab.acme.dev:platform/infra.git"),
 ("u-plain", "Docs live at https://wiki.acme.dev/ops/runbooks/ledger.", "https://wiki.acme.dev/ops/runbooks/ledger"),
 # versions ranges
 ("v-range", "The engines field requires node >=18.17.0 <21.", ">=18.17.0 <21"),
 ("v-caret", 'In package.json react is pinned at "^18.2.0".', "^18.2.0"),
 ("v-go", "go.mod says go 1.22 for the cli module.", "1.22"),
 ("v-calver", "We ship release 2024.06.1 of the agent today.", "2024.06.1"),
 # hashes
 ("h-sha256", "The image digest is sha256:9b2f0c7d4e1a3b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c.", "sha256:9b2f0c7d4e1a3b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c"),
 ("h-short", "The fix landed in commit 4f9c2e1.", "4f9c2e1"),
 # hosts ports
 ("hp-host", "The primary database is db-primary.internal:5432.", "db-primary.internal:5432"),
 ("hp-local", "The dev server listens on localhost:8080.", "localhost:8080"),
 ("hp-port4", "The metrics exporter uses port 9464.", "9464"),
 # emails
 ("e-mail", "Send the pager alerts to oncall-payments@acme.dev.", "oncall-payments@acme.dev"),
 # dates
 ("d-iso", "The certificate expires on 2025-03-14.", "2025-03-14"),
 ("d-time", "The freeze starts at 18:00 UTC on Friday.", "18:00 UTC"),
 ("d-month", "The cutover is scheduled for March 14, 2025.", "March 14, 2025"),
 ("d-offset", "last_run: 2024-06-03T08:14:55+02:00", "2024-06-03T08:14:55+02:00"),
 # enums in key positions
 ("en-yaml", "log_level: debug", "debug"),
 ("en-strategy", "strategy: RollingUpdate", "RollingUpdate"),
 ("en-env", "LOG_FORMAT=json", "LOG_FORMAT=json"),
 # statement forms
 ("f-toml", "[database]\nhost = \"pg-main\"\nport = 5433", "5433"),
 ("f-ini", "[server]\nworkers=12", "12"),
 ("f-yaml", "ledger:\n  replicas: 5\n  image: ledger:3.2.1", "5"),
 ("f-env", "export API_BASE_URL=https://api.staging.acme.dev", "https://api.staging.acme.dev"),
 ("f-table", "| service | port |\n|---|---|\n| ledger | 7001 |\n| orders | 7002 |", "7001"),
 ("f-aligned", "NAME        READY   STATUS    RESTARTS   AGE\nledger-7d9f   1/1     Running   0          3d\norders-5c2a   1/1     Running   2          5h", "ledger-7d9f"),
 ("f-flag", "Run the importer with --batch-size 250 for ledger.", "250"),
 ("f-flag-eq", "Start it with --region=eu-west-3.", "eu-west-3"),
 ("f-logfmt", 'level=info msg="listening" service=ledger addr=:8443', ":8443"),
 ("f-now", "The ledger's pool size is now 40.", "40"),
 ("f-moved", "We moved the ledger database to pg-ledger-2.", "pg-ledger-2"),
 ("f-arrow", "ledger replicas: 3 -> 5", "5"),
 ("f-nokey", "ledger talks to postgres on 6543.", "6543"),
 ("f-zh", "ledger的超时时间改为90秒。", "90秒"),
 ("en-prose", "The consistency level for the ledger is quorum.", "quorum"),
 ("en-now", "The ledger's log level is now debug.", "debug"),
 ("en-set", "Set the cache eviction policy for orders to lru.", "lru"),
 ("f-bullet", "Notes from the call:\n- ledger port: 7443\n- orders port: 7444", "7443"),
 ("f-spaced-key", "Max connections: 250", "250"),
 ("f-dockerfile", "FROM node:20.11-bookworm AS build\nWORKDIR /app\nEXPOSE 8443", "8443"),
 ("f-markdown", "The **ledger** pool now listens on `10.4.2.17:6432`.", "10.4.2.17:6432"),
]


@pytest.mark.parametrize(("case", "text", "value"), _SHAPES, ids=[c[0] for c in _SHAPES])
def test_each_shape_and_form_gives_its_value(case: str, text: str, value: str) -> None:
    found = [(f.value, f.shape) for f in facts_of_entry(ToolResult(ts=1, id="r", call_id="c", content=text))]
    assert any(v == value for v, _ in found), (case, found)


@pytest.mark.parametrize(("text", "value"), [
    ("The nightly job took 45s on the runner.", "45s"),  # reported
    ("p99 latency was 480ms during the spike.", "480ms"),
    ("The error rate is 8% this hour.", "8%"),
    ("It retried 3 times before it gave up.", "3"),
    ("Step 2 of the plan is the rollout.", "2"),
    ("The build is green.", "green"),  # a state, not a setting
    ("The deploy is running.", "running"),
])
def test_a_reported_quantity_or_a_count_in_passing_is_no_fact(text: str, value: str) -> None:
    assert value not in {f.value for s in statements(text) for f in facts_of(s, by_user=False)}


def test_a_key_in_key_position_is_no_value_but_the_attribute() -> None:
    facts = [f for s in statements("resources.requests.cpu: 750m") for f in facts_of(s, by_user=False)]
    assert [(f.value, f.attribute) for f in facts] == [("750m", "resources-requests-cpu")]


def _keyed(text: str) -> Fact:
    return next(f for s in statements(text) for f in facts_of(s, by_user=False) if f.attribute)


@pytest.mark.parametrize(("old", "new", "same"), [
    ("[ledger]\npool_size = 20", "[ledger]\npool_size = 40", True),  # same key, same section
    ("[ledger]\npool_size = 20", "[ledger]\nmax_overflow = 40", False),  # another key of the same section
    ("[ledger]\npool_size = 20", "[orders]\npool_size = 40", False),  # the same key of another section
    ("ledger:\n  timeout: 30s", "ledger:\n  timeout: 45s", True),
    ("ledger:\n  timeout: 30s", "ledger:\n  idle_timeout: 45s", False),
])
def test_a_keyed_value_is_updated_by_the_same_key_of_the_same_subject_only(old: str, new: str, same: bool) -> None:
    a, b = _keyed(old), _keyed(new)
    assert same_slot(a, b) is same, (a, b)


@pytest.mark.parametrize(("old", "new", "same"), [
    # a map of records keyed by their names: each key names its record, so two records' same key are two slots
    ('{"queues": {"Invoicing": {"limits": {"callback_url": "https://hooks.acme.dev/inv"}}, "Refunds": {"limits": {"callback_url": "https://hooks.acme.dev/ref"}}}}',
     '{"queues": {"Refunds": {"limits": {"callback_url": "https://hooks.acme.dev/ref2"}}, "Payouts": {"limits": {"callback_url": "https://hooks.acme.dev/pay"}}}}', False),
    ('{"queues": {"Invoicing": {"limits": {"callback_url": "https://hooks.acme.dev/inv"}}, "Refunds": {"limits": {"callback_url": "https://hooks.acme.dev/ref"}}}}',
     '{"queues": {"Invoicing": {"limits": {"callback_url": "https://hooks.acme.dev/inv2"}}, "Payouts": {"limits": {"callback_url": "https://hooks.acme.dev/pay"}}}}', True),
    ("callback_url: https://hooks.acme.dev/a", "callback_url: https://hooks.acme.dev/b", True),  # a key named by nothing: one slot
])
def test_a_map_keyed_by_record_names_names_each_record(old: str, new: str, same: bool) -> None:
    def first(text: str) -> Fact:
        return next(f for s in statements(text) for f in facts_of(s, by_user=False) if f.attribute)
    a, b = first(old), first(new)
    assert same_slot(a, b) is same, (a, b)


def test_a_keyed_map_names_the_record_in_its_statements() -> None:
    found = [s.text for s in statements('{"queues": {"Invoicing": {"limits": {"callback_url": "https://hooks.acme.dev/inv"}}, '
                                        '"Refunds": {"limits": {"callback_url": "https://hooks.acme.dev/ref"}}}}')]
    assert "Invoicing callback_url: https://hooks.acme.dev/inv" in found and "Refunds callback_url: https://hooks.acme.dev/ref" in found, found


@pytest.mark.parametrize(("text", "new", "old"), [
    ("tls-proxy-2 replaces tls-proxy-1 for the edge.", "tls-proxy-2", "tls-proxy-1"),
    ("Use pg-main-3 in place of pg-main-2 for orders.", "pg-main-3", "pg-main-2"),
])
def test_replacing_words_mark_the_old_value(text: str, new: str, old: str) -> None:
    facts = [f for s in statements(text) for f in facts_of(s, by_user=False)]
    assert [(f.value, f.replaces) for f in facts] == [(new, old)]
