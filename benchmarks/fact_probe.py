"""What the fact finder takes from statements it was never tuned on, and whether an update supersedes its old value.

    python benchmarks/fact_probe.py            # one line per probe: ok / MISS and what was found
    python benchmarks/fact_probe.py --misses   # only the probes it misses

The probes are sentences written for this script alone (no workload's phrasing), in several
languages and carriers: prose, chat, a log line, JSON, YAML, TOML, INI, CSV, a Markdown table and
checklist, a diff, an e-mail quote, a device tree, Kconfig, a Dockerfile, an nginx or systemd
line. Each single probe names the value a reader would want back; each update probe is an old
statement and a later one of the same slot in other words or another carrier: the records
:func:`~aptmem.memory.kv_dict.merge_facts` keeps must hold the new value and name the old one
as replaced, in one record. A diagnostic: nothing is scored from it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

#: (carrier, text, the value a reader wants back)
SINGLES: list[tuple[str, str, str]] = [
    ("prose", "The staging database for quillmate runs on host pg-quill-3.int.example.net.", "pg-quill-3.int.example.net"),
    ("prose", "Our retry budget for the uploader is 7 attempts.", "7 attempts"),
    ("prose", "Heads up: the signing cert for halyard expires on 2027-02-11.", "2027-02-11"),
    ("prose", "Remember that the sensor board talks at 115200 baud.", "115200"),
    ("prose", "The watchdog on the pump controller is set to 1500 ms.", "1500 ms"),
    ("prose", "Bitte merken: der Build-Server für tessera ist build-07.lab.", "build-07.lab"),
    ("prose", "El token de despliegue de ravelin es dpl_4Kq9ZtW2.", "dpl_4Kq9ZtW2"),
    ("prose", "mistral の認証トークンは tok_88af21c です。", "tok_88af21c"),
    ("prose", "Le port de débogage de la carte osprey est 4444.", "4444"),
    ("prose", "We pinned the toolchain for osprey to gcc-arm 12.3.rel1.", "12.3.rel1"),
    ("chat", "[10:04] dana: fyi the pager rota for ember is @kwame this week", "@kwame"),
    ("chat", "kim: quillmate's bucket is s3://qm-artifacts-eu/nightly/", "s3://qm-artifacts-eu/nightly/"),
    ("log", "2026-03-02T10:11:12Z INFO loader: flash offset set to 0x08004000", "0x08004000"),
    ("log", "[boot] firmware version 4.7.12 (build 2291) starting", "4.7.12"),
    ("log", "I (312) wifi: connected to ssid=lab-net-5g, channel 36", "lab-net-5g"),
    ("json", '{"device":"osprey","i2c_address":"0x3c","bus":2}', "0x3c"),
    ("json", '{"name":"halyard","release_channel":"beta-2","rollout_percent":15}', "beta-2"),
    ("yaml", "quillmate:\n  image: registry.example.net/qm/api:2.8.1\n  replicas: 3", "registry.example.net/qm/api:2.8.1"),
    ("toml", "[tool.halyard]\nmin_python = \"3.10\"\nlint_profile = \"strict\"", "strict"),
    ("ini", "[uploader]\nchunk_size = 8MB\nendpoint = https://up.example.net/v2", "https://up.example.net/v2"),
    ("csv", "part,value,package,supplier\nR17,4.7k,0402,Yageo\nU3,STM32G474,LQFP64,ST", "STM32G474"),
    ("markdown", "| board | debugger |\n|---|---|\n| osprey | J-Link EDU |\n| heron | ST-Link V3 |", "ST-Link V3"),
    ("checklist", "- [x] flash bootloader v1.9.2 onto heron\n- [ ] verify CAN at 500 kbit/s", "v1.9.2"),
    ("diff", "--- a/conf/app.conf\n+++ b/conf/app.conf\n@@ -1,2 +1,2 @@\n-max_clients = 64\n+max_clients = 256\n", "256"),
    ("email", "> On Mon, Priya wrote:\n> The RMA number for the returned units is RMA-55120.", "RMA-55120"),
    ("devicetree", "&uart2 {\n\tstatus = \"okay\";\n\tcurrent-speed = <921600>;\n};", "921600"),
    ("kconfig", "CONFIG_MAIN_STACK_SIZE=4096\nCONFIG_BT_DEVICE_NAME=\"heron-tag\"", "heron-tag"),
    ("docker", "FROM python:3.12-slim\nENV APP_PORT=8088\nEXPOSE 8088", "8088"),
    ("nginx", "server {\n  listen 8443 ssl;\n  server_name api.quillmate.example;\n}", "api.quillmate.example"),
    ("systemd", "[Service]\nExecStart=/opt/halyard/bin/halyardd --config /etc/halyard/halyard.toml\nRestart=always", "/etc/halyard/halyard.toml"),
    ("prose", "Serial number of the heron unit on my desk: 4411-AB7.", "4411-AB7"),
    ("prose", "Die Firmware-Version auf heron ist jetzt 2.4.1.", "2.4.1"),
    ("prose", "heronのファームウェアは2.4.1です。", "2.4.1"),
    ("prose", "Flash the bootloader of heron at offset 0x8000.", "0x8000"),
    ("prose", "Use the release-2.4 branch for heron from now on.", "release-2.4"),
    ("prose", "La tension d'alimentation de heron est de 3,3 V.", "3,3 V"),
    ("prose", "Please always attach the full boot log when you report a crash.", "attach the full boot log"),
    ("prose", "We decided to drop the legacy bootloader because it cannot verify signatures.", "drop the legacy bootloader"),
    ("checklist", "- [x] heron: set CONFIG_WATCHDOG=y\n- [ ] heron: retest OTA from 2.3.0", "CONFIG_WATCHDOG=y"),
    ("json", '{"ota":{"channel":"stable","min_version":"2.3.0","url":"https://ota.example.net/heron"}}', "2.3.0"),
    ("yaml", "boards:\n  - name: heron\n    fw: 2.4.1\n  - name: osprey\n    fw: 1.9.0", "1.9.0"),
    ("log", "W (1234) ota: image 2.3.1 rejected, rolled back to 2.2.9", "2.2.9"),
    ("log", "level=info msg=\"config loaded\" component=uploader chunk_size=8MiB endpoint=https://up.example.net/v3", "https://up.example.net/v3"),
    ("email", "Hi team,\n\nthe replacement units ship with PO 88123 on Friday.\n\nBest,\nMaren", "88123"),
    ("csv", 'name,owner,channel\nheron,"Maren Voss",#hw-heron\nosprey,"Ken Ito",#hw-osprey', "#hw-osprey"),
    ("markdown", "| setting | value |\n|---|---|\n| sample rate | 48 kHz |\n| gain | 12 dB |", "48 kHz"),
    ("chat", "[11:02] ken: heads up, the heron test jig is now on 10.20.4.17", "10.20.4.17"),
    ("prose", "The heron ADC samples at 48 kHz.", "48 kHz"),
    ("prose", "heron uses 2 MB of flash for the app partition.", "2 MB"),
    # the kinds a coding agent needs back (branches, commits, tickets, endpoints, pins, preferences, decisions, env
    # values, owners), said in German, Japanese and English prose, comments, logs and JSON
    ("de/ja/en", "Der Branch für das Release von heron ist release/4.2.", "release/4.2"),
    ("de/ja/en", "Bitte immer auf den Branch feature/can-fd pushen.", "feature/can-fd"),
    ("de/ja/en", "Der Fix für den Watchdog ist in Commit 9f3c2e1 gelandet.", "9f3c2e1"),
    ("de/ja/en", "Das Ticket dazu ist FW-1182.", "FW-1182"),
    ("de/ja/en", "Der Endpunkt für die OTA-Updates lautet https://ota.example.de/v2/heron.", "https://ota.example.de/v2/heron"),
    ("de/ja/en", "Wir pinnen zephyr auf v3.6.0.", "v3.6.0"),
    ("de/ja/en", "Ich bevorzuge kurze Commit-Nachrichten auf Englisch.", "kurze Commit-Nachrichten"),
    ("de/ja/en", "Wir haben uns für littlefs entschieden, weil es stromausfallsicher ist.", "littlefs"),
    ("de/ja/en", "Die Umgebungsvariable HERON_LOG_LEVEL steht auf debug.", "debug"),
    ("de/ja/en", "heronのリリースブランチはrelease/4.2です。", "release/4.2"),
    ("de/ja/en", "ウォッチドッグの修正はコミット9f3c2e1に入っています。", "9f3c2e1"),
    ("de/ja/en", "チケットはFW-1182です。", "FW-1182"),
    ("de/ja/en", "OTAのエンドポイントはhttps://ota.example.jp/v2/heronです。", "https://ota.example.jp/v2/heron"),
    ("de/ja/en", "zephyrはv3.6.0に固定しています。", "v3.6.0"),
    ("de/ja/en", "コミットメッセージは英語で短くしてください。", "英語で短く"),
    ("de/ja/en", "ファイルシステムはlittlefsに決めました。理由：電源断に強いからです。", "littlefs"),
    ("de/ja/en", "環境変数HERON_LOG_LEVELはdebugに設定しています。", "debug"),
    ("de/ja/en", "// NOTE: heron flash base is 0x08000000, do not change", "0x08000000"),
    ("de/ja/en", "# Maintainer of the heron BSP: Maren Voss", "Maren Voss"),
    ("de/ja/en", "[  12.402] heron: bootloader v1.9.2 verified, jumping to app", "v1.9.2"),
    ("de/ja/en", "[00:00:01.204,000] <inf> heron_main: fw 4.7.12 build 2291", "4.7.12"),
    ("de/ja/en", '{"board":"heron","fw":"4.7.12","ota_url":"https://ota.example.net/heron","rollback":"4.6.3"}', "4.6.3"),
    ("de/ja/en", "heron: the release branch is release/4.2, tag v4.2.0-rc1", "v4.2.0-rc1"),
    ("de/ja/en", "Owner of the heron bring-up is Maren Voss.", "Maren Voss"),
    ("de/ja/en", "Maren owns the heron bring-up.", "Maren"),
]

#: (old statement, new statement, old value, new value)
UPDATES: list[tuple[str, str, str, str]] = [
    ("The retry budget for the uploader is 7 attempts.", "We raised the uploader's retry budget to 12 attempts.", "7 attempts", "12 attempts"),
    ("Remember that the sensor board talks at 115200 baud.", "The sensor board now talks at 921600 baud.", "115200", "921600"),
    ("mistral の認証トークンは tok_88af21c です。", "mistral の認証トークンは tok_91bb07e に変更しました。", "tok_88af21c", "tok_91bb07e"),
    ("Der Build-Server für tessera ist build-07.lab.", "Der Build-Server für tessera ist jetzt build-11.lab.", "build-07.lab", "build-11.lab"),
    ("The watchdog on the pump controller is set to 1500 ms.", "pump controller watchdog: 2500 ms (was 1500 ms)", "1500 ms", "2500 ms"),
    ("quillmate's bucket is s3://qm-artifacts-eu/nightly/", "quillmate's bucket moved to s3://qm-artifacts-us/nightly/", "s3://qm-artifacts-eu/nightly/",
     "s3://qm-artifacts-us/nightly/"),
    ('{"device":"osprey","i2c_address":"0x3c"}', '{"device":"osprey","i2c_address":"0x3d"}', "0x3c", "0x3d"),
    ("CONFIG_MAIN_STACK_SIZE=4096", "CONFIG_MAIN_STACK_SIZE=8192", "4096", "8192"),
    ("The toolchain for osprey is pinned to gcc-arm 12.3.rel1.", "osprey toolchain bumped to gcc-arm 13.2.rel1", "12.3.rel1", "13.2.rel1"),
]


def _single(carrier: str, text: str, value: str) -> tuple[bool, str]:
    from aptmem.entries import User
    from aptmem.memory.facts import facts_of_entry, snippet

    facts = list(facts_of_entry(User(content=text, ts=1)))
    hit = [f for f in facts if value in f.value or value in snippet(f) and value in f.text]
    found = "; ".join(f"{f.shape}={f.value!r} about {list(f.subject)}" for f in facts) or "nothing"
    return bool(hit), found


def _update(old: str, new: str, old_value: str, new_value: str) -> tuple[bool, str]:
    from aptmem.entries import User
    from aptmem.memory.facts import facts_of_entry
    from aptmem.memory.kv_dict import merge_facts

    records = merge_facts([], list(facts_of_entry(User(content=old, ts=1))), 100)
    records = merge_facts(records, list(facts_of_entry(User(content=new, ts=2), 1)), 100)
    right = [r for r in records if new_value in r.value and any(old_value in b.value for b in r.before)]
    stale = [r for r in records if old_value in r.value and not r.before]
    found = "; ".join(f"{r.value!r}<-{[b.value for b in r.before]}" for r in records) or "nothing"
    return bool(right) and not stale, found


def main(argv: list[str] | None = None) -> int:
    """Print each probe's outcome and the totals; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="print only the probes missed")
    args = parser.parse_args(argv)
    singles = updates = 0
    for carrier, text, value in SINGLES:
        ok, found = _single(carrier, text, value)
        singles += ok
        if not ok or not args.misses:
            print(f"{'ok  ' if ok else 'MISS'} single {carrier:<10} {value!r:<36} found: {found[:200]}")
    for old, new, old_value, new_value in UPDATES:
        ok, found = _update(old, new, old_value, new_value)
        updates += ok
        if not ok or not args.misses:
            print(f"{'ok  ' if ok else 'MISS'} update {old_value!r} -> {new_value!r}: records {found[:200]}")
    print(f"singles {singles}/{len(SINGLES)}, updates {updates}/{len(UPDATES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
