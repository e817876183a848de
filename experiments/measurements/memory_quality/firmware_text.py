"""What the firmware generator (:mod:`.firmware`) plants: its subjects, kinds of facts and how each is said.

The sessions are an embedded firmware team's days (a few boards between bring-up and a production
run). A fact comes as a line of the Mattermost channel the user pastes, a sentence of the agent's
reply, or a piece of a tool's output: a UART boot log, Yocto bitbake or Zephyr west output, a
devicetree fragment (a property below its node), Kconfig/defconfig lines (a symbol below the
board's header), a CAN candump, an OpenOCD session, a BOM exported as CSV, a bring-up checklist in
Markdown, a contract manufacturer's RMA email, a minified JSON OTA manifest (the value one key
below its board), a datasheet excerpt or a C comment. Remarks are in English, German and Japanese.

A kind's ``said`` is (carrier, format, template); templates are filled by plain replacement of
``{s}`` (subject), ``{sl}`` (its slug, ``usb_pd_controller``), ``{v}`` (value), ``{old}`` (the value
it replaces) and ``{why}`` (a decision's reason), so JSON and devicetree braces need no escaping.
The kinds of one subject family have value patterns no sibling value or template can match, so an
absent pairing is never said by chance.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from experiments.measurements.memory_quality.dayworld import Aggregate, DayKind, OrderEvent
from experiments.measurements.memory_quality.planting import hex_digits

__all__ = ["AGGREGATES", "BOARDS", "FAULTS", "FRAMES", "KINDS", "PARTS", "RELEASES", "RUNS", "ORDER_EVENTS",
           "ORDER_QUESTIONS", "SET_TOPICS", "TEAM_TOPICS", "FirmwareKind", "fill", "language_of", "noise_statement"]

#: Board codenames (none inside another or inside a filler word).
BOARDS = ("Petrel", "Gannet", "Shrike", "Wagtail", "Dunlin", "Merganser", "Avocet", "Bittern", "Siskin", "Kittiwake")
#: CAN frames of the vehicle bus the boards sit on.
FRAMES = ("BMS_PackStatus", "Motor_TorqueCmd", "Wheel_SpeedFL", "Charger_Heartbeat", "DoorLock_Request",
          "Cabin_ThermalReport", "Imu_RawSample", "Steer_AngleFb")
#: Functions a hard fault was caught in.
FAULTS = ("spi_dma_complete_isr", "ble_conn_event_cb", "nvs_flush_sector", "i2c_bus_unstick", "adc_sample_worker",
          "usb_cdc_rx_fifo", "lwm2m_tick_engine", "qspi_erase_block")
#: BOM lines, by the part's role on the board.
PARTS = ("the buck regulator", "the USB-PD controller", "the 6-axis IMU", "the QSPI NOR", "the 32 kHz crystal",
         "the CAN transceiver", "the fuel gauge", "the ESD diode array")
#: Contract-manufacturer runs.
RUNS = ("pilot run Alder", "pilot run Birch", "pilot run Cedar", "ramp run Hazel", "ramp run Juniper",
        "ramp run Linden", "MP run Rowan", "MP run Sorrel")
#: Firmware releases, by codename.
RELEASES = ("Quokka", "Numbat", "Wombat", "Bilby", "Echidna", "Possum", "Wallaby", "Dingo")
#: What the team decides about, the options and the reasons given.
TEAM_TOPICS = ("the bootloader", "OTA rollback", "the RTOS", "log transport", "secure-boot key storage",
               "the flash layout")
_OPTIONS = ("MCUboot with swap-using-move", "A/B slots with a boot counter of three", "Zephyr on the LTS branch",
            "RTT over SWD in the lab, a ring buffer dumped on panic in the field",
            "keys fused in OTP with one revocation slot", "a 64 KiB scratch area between the two slots",
            "deferred logging at INFO level", "a recovery image in the last flash bank")
_REASONS = ("the factory line cannot reflash a bricked unit without opening the case",
            "field units lost power mid-update during the winter trial",
            "we need a vendor-neutral HAL before the second SoC arrives",
            "UART pins are not routed out on the production enclosure",
            "the security audit flagged keys kept in plain flash",
            "erase times on the NOR part blow the watchdog window",
            "the certification lab wants reproducible images", "two customers already run the old partition map")

_WORDS = ("ash", "brine", "copper", "dusk", "ferric", "glint", "hollow", "inlet", "jolt", "keel", "loam", "mica",
          "nadir", "oxbow", "pewter", "quay", "rime", "sable")
_PEOPLE = ("jonas.keller", "anna.brandt", "felix.wagner", "lena.hoffmann", "haruto.sato", "yui.nakamura",
           "kenji.mori", "sakura.ito", "omar.haddad", "ravi.iyer", "maja.novak", "tom.price")
_SOCS = ("STM32H743", "STM32U585", "nRF5340", "nRF52840", "ESP32-S3", "RP2350", "MIMXRT1062", "SAME54P20")
_BRANDS = ("TPS", "LTC", "MAX", "ADP", "BQ", "TCAN")


@dataclass(frozen=True)
class FirmwareKind(DayKind):
    """One relation the firmware sessions plant; ``family`` is the subjects it is said of."""


def fill(template: str, subject: str, value: str = "", old: str = "", why: str = "") -> str:
    """``template`` with its fields replaced (plain replacement: JSON and devicetree braces stay as they are)."""
    slug = re.sub(r"[^a-z0-9]+", "_", subject.casefold()).strip("_")  # how a defconfig or a manifest key spells it
    return (template.replace("{s}", subject).replace("{sl}", slug).replace("{v}", value).replace("{old}", old)
            .replace("{why}", why))


#: Words only this generator's German uses (its English never does).
_GERMAN = frozenset(("der", "die", "das", "ist", "wird", "wurde", "auf", "mit", "nicht", "noch", "jetzt", "welche",
                     "welcher", "welches", "wer", "für", "von", "vom", "zum", "haben", "wir", "bei", "seit", "den",
                     "dem", "und", "läuft", "steht", "vorher", "sitzt", "kommt", "liegt", "alle", "ab", "heute",
                     "bitte", "wie", "viel", "groß", "lange", "gilt", "bisher", "statt", "nach", "dauert", "haben",
                     "hängt", "beim", "wann", "zuerst", "oder", "gemeldet", "gefunden", "neu", "eingetragen", "aus", "unter",
                     "welchen", "welchem", "gehört", "zu", "sich", "um"))


def language_of(text: str) -> str:
    """The language a statement or question is in: japanese (a few kana or kanji), german or english."""
    if sum("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in text) > 2:
        return "japanese"
    tokens = set(re.findall(r"[^\W\d_]+", text.casefold()))
    return "german" if len(tokens & _GERMAN) >= 2 else "english"


def _pick(family: tuple[str, ...]) -> Callable[[random.Random], str]:
    return lambda r: r.choice(family)


_board, _frame, _fault, _part, _run, _release = (_pick(f) for f in (BOARDS, FRAMES, FAULTS, PARTS, RUNS, RELEASES))

KINDS: tuple[FirmwareKind, ...] = (
    FirmwareKind(
        "fw_soc", _board, lambda r, s: r.choice(_SOCS),
        (("tool", "uart", "*** Booting {s} (SoC {v}) ***"),
         ("tool", "datasheet", "{s} reference design, section 2.1: the host MCU is the {v} in its largest package."),
         ("user", "chat", "{s} 基板のメインMCUは {v} です"),
         ("assistant", "prose", "Auf {s} sitzt ein {v}, deshalb nehmen wir dessen HAL.")),
        ("Which SoC is {s} built around?", "What chip runs the firmware on the {s} board?",
         "Welcher Controller sitzt auf {s}?"),
        pattern=r"\b(?:STM32[HU]\d{3}|nRF5\d{3,4}|ESP32-S3|RP2350|MIMXRT1062|SAME54P20)\b", family=BOARDS),
    FirmwareKind(
        "fw_version", _board, lambda r, s: f"{r.randrange(1, 10)}.{r.randrange(10, 100)}.{r.randrange(100, 1000)}",
        (("tool", "uart", "[00:00:00.004,211] <inf> app: {s} firmware {v} up, reset cause POR"),
         ("tool", "build", "NOTE: {s}: packaging image version {v} into deploy/images"),
         ("user", "chat", "the {s} units on the shelf all run {v}, do not flash anything else on them"),
         ("assistant", "prose", "{s} の量産ファームは {v} に固定しています。")),
        ("Which firmware version runs on {s}?", "What build number are the {s} units flashed with?",
         "{s} で動いているファームウェアのバージョンは？"),
        pattern=r"(?<![\d.])\d\.\d{2}\.\d{3}(?![\d.])",
        update=("{s} moved on: {old} is pulled, the shelf units get {v} from now",
                "{s} wurde von {old} auf {v} gehoben, bitte alle Geräte nachflashen"),
        ask_before=("Which firmware version ran on {s} before the latest one?",
                    "What build number were the {s} units flashed with earlier?",
                    "{s} の以前のファームウェアのバージョンは？"),
        family=BOARDS),
    FirmwareKind(
        "fw_hw_rev", _board, lambda r, s: f"{r.choice(('EVT', 'DVT', 'PVT'))}{r.randrange(1, 10)}",
        (("tool", "checklist", "## {s}\n- [x] board revision on the silkscreen: {v}\n- [ ] current draw at idle"),
         ("tool", "email", "> the {s} boards we return are all {v}, please check before you rework them"),
         ("user", "chat", "{s} ist jetzt bei {v}, die alten Platinen gehen zurück ins Lager")),
        ("Which hardware revision is {s} at?", "What silkscreen stage do the current {s} boards carry?",
         "{s} のハードウェアリビジョンはどれ？"),
        pattern=r"\b(?:EVT|DVT|PVT)\d\b",
        update=("{s} respin arrived: {old} boards are scrap, {v} is what we test on",
                "{s} のボードは {old} から {v} に切り替わりました"),
        ask_before=("Which hardware revision was {s} at before the respin?",
                    "What silkscreen stage did the {s} boards carry earlier?", "{s} の前のハードウェアリビジョンは？"),
        family=BOARDS),
    FirmwareKind(
        "fw_owner", _board, lambda r, s: "@" + r.choice(_PEOPLE),
        (("user", "chat", "questions about bringing up {s} go to {v}, they hold the only working probe"),
         ("tool", "checklist", "# {s} bring-up\nOwner: {v}\n- [ ] power rails within 3 percent"),
         ("assistant", "prose", "{s} の立ち上げ担当は {v} さんです。")),
        ("Who owns the bring-up of {s}?", "Whom do I ping when the {s} board will not come alive?",
         "Wer kümmert sich um die Inbetriebnahme von {s}?"),
        pattern=r"@[a-z]+\.[a-z]+\b",
        update=("{s} bring-up changes hands: {old} went to the radio team, {v} carries it on",
                "{s} übernimmt ab heute {v}, {old} ist raus"),
        ask_before=("Who owned the bring-up of {s} before the handover?",
                    "Whom did we ping about the {s} board earlier?", "{s} の立ち上げを以前担当していたのは誰？"),
        family=BOARDS),
    FirmwareKind(
        "fw_slot_addr", _board, lambda r, s: "0x08" + hex_digits(r, 6),
        (("tool", "dts", "/* {s} */\n&flash0 {\n\tpartitions {\n\t\tslot0_partition: partition@0 {\n"
                         "\t\t\treg = <{v} DT_SIZE_K(384)>;\n\t\t};\n\t};\n};"),
         ("tool", "jtag", "> flash write_image erase {sl}_signed.bin {v}\nwrote 393216 bytes for {s}"),
         ("assistant", "prose", "Der Anwendungsslot von {s} beginnt bei {v}.")),
        ("At which flash address does the application slot of {s} start?",
         "Where in flash does the {s} image get written?", "{s} のアプリ用スロットの開始アドレスは？"),
        pattern=r"\b0x08[0-9a-f]{6}\b", family=BOARDS),
    FirmwareKind(
        "fw_ota_digest", _board, lambda r, s: "sha256:" + hex_digits(r, 12),
        (("tool", "json", '"{s}":{"channel":"beta","digest":"{v}","min_hw":"any"}'),
         ("tool", "build", "west sign: {s} image hashed, digest {v}"),
         ("user", "chat", "{s} のOTAイメージのダイジェストは {v} でした")),
        ("What digest does the OTA image of {s} carry?", "Which hash must the updater verify for {s}?",
         "Welchen Hash hat das OTA-Image von {s}?"),
        pattern=r"\bsha256:[0-9a-f]{12}\b", family=BOARDS),
    FirmwareKind(
        "fw_can_id", _frame, lambda r, s: f"0x{r.randrange(0x100, 0x800):03X}",
        (("tool", "candump", "  can0  {v}   [8]  1F 00 00 00 00 00 00 00   ; decoded as {s}"),
         ("tool", "c", "/* {s} goes out with arbitration id {v}; keep it in sync with the DBC */"),
         ("user", "chat", "{s} kommt auf der ID {v}, nicht auf der alten")),
        ("Which CAN id does {s} use?", "What arbitration number should the filter accept for {s}?",
         "{s} が使っているCAN IDはどれ？"),
        pattern=r"\b0x[1-7][0-9A-F]{2}\b", family=FRAMES),
    FirmwareKind(
        "fw_can_period", _frame, lambda r, s: f"{r.randrange(5, 500)} ms",
        (("tool", "datasheet", "{s}: transmitted cyclically, nominal period {v}, tolerance 10 percent."),
         ("assistant", "prose", "{s} は {v} 周期で送信されます。"),
         ("user", "chat", "measured {s} on the bench: one frame every {v}")),
        ("How often is {s} sent on the bus?", "What interval sits between two {s} frames?",
         "In welchem Takt wird {s} gesendet?"),
        pattern=r"(?<!\d)\d{1,3} ms\b",
        update=("{s} was slowed down to save bus load: {old} became {v}", "{s} wird jetzt alle {v} statt {old} gesendet"),
        ask_before=("How often was {s} sent before the change?", "What interval sat between two {s} frames earlier?",
                    "{s} は以前どの周期で送信されていた？"),
        family=FRAMES),
    FirmwareKind(
        "fw_fault_pc", _fault, lambda r, s: "0x000" + hex_digits(r, 5),
        (("tool", "jtag", "target halted due to debug-request, current mode: Handler HardFault\n"
                          "xPSR: 0x01000003 pc: {v}\n> addr2line: {s} at src/drivers.c:211"),
         ("user", "chat", "the hard fault in {s} always stops at pc {v}"),
         ("assistant", "prose", "Der Absturz in {s} bleibt immer bei PC {v} stehen.")),
        ("At which program counter does the fault in {s} stop?", "What address does the debugger show when {s} dies?",
         "{s} のフォールトはどのPCで止まる？"),
        pattern=r"\b0x000[0-9a-f]{5}\b", family=FAULTS),
    FirmwareKind(
        "fw_fault_ticket", _fault, lambda r, s: f"FW-{r.randrange(1000, 10000)}",
        (("tool", "c", "/* FIXME {v}: {s} can run with interrupts masked for too long */"),
         ("user", "chat", "opened {v} for the crash in {s}, logs attached"),
         ("assistant", "prose", "{s} のクラッシュは {v} で追跡しています。")),
        ("Which ticket tracks the crash in {s}?", "Where is the {s} failure written up?",
         "Welches Ticket verfolgt den Absturz in {s}?"),
        pattern=r"\bFW-\d{4}\b", family=FAULTS),
    FirmwareKind(
        "fw_part_mpn", _part,
        lambda r, s: f"{r.choice(_BRANDS)}{r.randrange(1000, 100000)}{r.choice(('DLC', 'RGE', 'DRB', 'YFF'))}",
        (("tool", "csv", "U7,{s},{v},1,populate"),
         ("tool", "email", "> for {s} we placed {v} as listed on your BOM revision C"),
         ("user", "chat", "{s} auf der Platine ist ein {v}, steht auch im Schaltplan")),
        ("Which part number is placed for {s}?", "What exact component do we buy for {s}?", "{s} の型番は？"),
        pattern=r"\b(?:TPS|LTC|MAX|ADP|BQ|TCAN)\d{4,5}(?:DLC|RGE|DRB|YFF)\b",
        update=("{s} swapped because of the shortage: {old} out, {v} in, pin compatible",
                "{s} は {old} から {v} に置き換えました"),
        ask_before=("Which part number was placed for {s} before the swap?",
                    "What exact component did we buy for {s} earlier?", "{s} の以前の型番は？"),
        family=PARTS),
    FirmwareKind(
        "fw_part_lead", _part, lambda r, s: f"{r.randrange(2, 60)} weeks",
        (("tool", "csv", "U7,{s},{v},lead time,distributor quote"),
         ("tool", "email", "> Please note the lead time for {s} is currently {v}."),
         ("assistant", "prose", "{s} のリードタイムは現在 {v} です。")),
        ("What is the lead time of {s}?", "How long do we wait after ordering {s}?",
         "Wie lange ist die Lieferzeit für {s}?"),
        pattern=r"\b\d{1,2} weeks\b", family=PARTS),
    FirmwareKind(
        "fw_part_price", _part, lambda r, s: f"${r.randrange(0, 10)}.{r.randrange(100, 1000)}",
        (("tool", "csv", "U7,{s},{v},unit price,at 5k"),
         ("user", "chat", "{s} kostet uns {v} pro Stück bei 5k, das ist mit dem Einkauf abgestimmt")),
        ("What does {s} cost per unit?", "How much do we pay per piece for {s} at volume?", "{s} の単価はいくら？"),
        pattern=r"\$\d\.\d{3}\b", family=PARTS),
    FirmwareKind(
        "fw_rma", _run, lambda r, s: f"RMA-{r.randrange(100000, 1000000)}",
        (("tool", "email", "> Subject: returns from {s}\n> We have opened {v} for the units that fail the boot test."),
         ("user", "chat", "{s} のリターンは {v} で登録済み"),
         ("assistant", "prose", "Die Rücksendungen aus {s} laufen unter {v}.")),
        ("Which RMA covers the returns from {s}?", "Under what number does the factory take back boards of {s}?",
         "{s} の返品はどのRMA番号？"),
        pattern=r"\bRMA-\d{6}\b", family=RUNS),
    FirmwareKind(
        "fw_yield", _run, lambda r, s: f"{r.randrange(60, 100)}.{r.randrange(0, 10)} %",
        (("tool", "email", "> first-pass yield for {s} came out at {v} on the ICT station"),
         ("tool", "checklist", "- [x] {s}: first-pass yield {v} (target 95)"),
         ("user", "chat", "{s} hatte {v} First-Pass-Yield, das reicht noch nicht")),
        ("What first-pass yield did {s} reach?", "How many boards of {s} passed test on the first try, as a share?",
         "{s} の直行率は？"),
        pattern=r"\b\d{2}\.\d %",
        update=("after the stencil fix, {s} went from {old} to {v} first-pass", "{s} ist nach dem Schablonen-Fix von {old} auf {v}"),
        ask_before=("What first-pass yield did {s} reach before the fix?",
                    "What share of {s} boards passed first time earlier?", "{s} の以前の直行率は？"),
        family=RUNS),
    FirmwareKind(
        "fw_sdk", _release, lambda r, s: f"v3.{r.randrange(4, 8)}.{r.randrange(10, 100)}",
        (("tool", "build", "-- Zephyr version: {v} ({s} manifest), build: release"),
         ("tool", "kconfig", "# {s} release defconfig\n# based on Zephyr {v}\nCONFIG_ASSERT=n"),
         ("user", "chat", "{s} は Zephyr {v} ベースで切りました")),
        ("Which Zephyr version is {s} based on?", "What upstream baseline does the {s} release sit on?",
         "Auf welcher Zephyr-Version basiert {s}?"),
        pattern=r"\bv3\.\d\.\d{2}\b",
        update=("rebased {s}: {old} dropped, the manifest points at {v} now", "{s} は Zephyr {old} から {v} に上げました"),
        ask_before=("Which Zephyr version was {s} based on before the rebase?",
                    "What upstream baseline did the {s} release sit on earlier?", "{s} の以前のZephyrバージョンは？"),
        family=RELEASES),
    FirmwareKind(
        "fw_release_tag", _release, lambda r, s: f"fw/{r.choice(_WORDS)}-{r.randrange(10, 100)}",
        (("tool", "build", "west update: {s} checked out at tag {v}"),
         ("assistant", "prose", "{s} は git タグ {v} から作られています。"),
         ("user", "chat", "{s} ist unter dem Tag {v} eingefroren")),
        ("Which git tag is {s} built from?", "What label do I check out to rebuild {s}?", "Welcher Git-Tag gehört zu {s}?"),
        pattern=r"\bfw/[a-z]+-\d{2}\b", family=RELEASES),
    FirmwareKind(
        "fw_decision", _pick(TEAM_TOPICS), lambda r, s: r.choice(_OPTIONS),
        (("user", "chat", "we are going with {v} for {s}, because {why}"),
         ("assistant", "prose", "Für {s} haben wir {v} gewählt, weil {why}."),
         ("assistant", "prose", "{s} は {v} に決めました。理由は {why} からです。")),
        ("What did we decide for {s}, and why?", "Which option won for {s} and what was the argument?",
         "{s} は何に決まった？その理由は？"),
        family=TEAM_TOPICS, why=lambda r: r.choice(_REASONS)),
)

#: Sets gathered one value per session: (kind, value maker, said templates, questions); ``{t}`` the topic.
AGGREGATES: tuple[Aggregate, ...] = (
    ("fw_testpoint_set", lambda r: f"TP{r.randrange(100, 400)}",
     (("user", "chat", "{t}: {v} reads wrong again, scope shot in the thread"),
      ("assistant", "prose", "{t} で {v} の電圧が規格外でした。"),
      ("tool", "checklist", "- [ ] {t}: {v} out of range, rework needed")),
     ("Which test points failed during {t}?", "List every probe location that read out of range in {t}.",
      "Welche Testpunkte sind bei {t} durchgefallen?")),
    ("fw_errata_set", lambda r: f"ES-{r.randrange(100, 1000)}.{r.randrange(1, 10)}",
     (("user", "chat", "{t} hit silicon erratum {v}, the workaround is in the errata sheet"),
      ("assistant", "prose", "Bei {t} ist zusätzlich Erratum {v} aufgetaucht."),
      ("tool", "datasheet", "{t} / errata sheet: {v} applies to this die revision.")),
     ("Which silicon errata did we run into during {t}?", "List the chip bugs we stumbled over in {t}.",
      "{t} で見つかったシリコンエラッタは？")),
)
#: What the sets are about.
SET_TOPICS = ("the EMC pre-scan", "the thermal soak", "the DVT power review", "the field trial", "the ESD campaign")

#: Two events in different sessions: a release pushed to the OTA beta channel, a factory image handed to the CM.
ORDER_EVENTS: tuple[OrderEvent, ...] = (
    (lambda r: f"OTA-{hex_digits(r, 6).upper()}", ("user", "chat", "{s} is live on the beta channel, rollout id {v}")),
    (lambda r: f"LOT-{r.randrange(10_000_000, 100_000_000)}",
     ("assistant", "prose", "Das Fabrik-Image von {s} ist beim Fertiger, Losnummer {v}.")),
)
ORDER_QUESTIONS = ("Which happened first: the OTA beta rollout of {a} or the factory image handover of {b}?",
                   "Did {a} reach the beta devices before or after the manufacturer received the production image of {b}?",
                   "{a} のOTAベータ配信と {b} の工場イメージ引き渡し、どちらが先？")


def noise_statement(rng: random.Random) -> str:
    """A fact-shaped remark about nothing asked (no subject, no value of a planted shape)."""
    n = rng.randrange(3, 60)
    return rng.choice((
        f"the soldering station in the lab is booked for {n} hours this week",
        f"{n} dev kits are still waiting in the incoming box",
        f"the nightly bitbake reused {n} sstate objects less than yesterday",
        f"ラボの電源が {n} 回落ちました",
        f"im Klimaschrank liegen noch {n} Muster aus der letzten Runde",
        f"the logic analyser captured {n * 4} transitions before the trigger",
        f"someone left {n} flying wires on the spare harness",
    ))
