"""What the game-studio generator (:mod:`.gamestudio`) plants: its subjects, kinds of facts and how each is said.

The sessions are a game studio's days (a few titles heading for console certification). A fact
comes as a line of the Discord channel the user pastes, a sentence of the agent's reply, or a
piece of a tool's output: an Unreal or Unity build log line, a Perforce changelist description, a
symbolicated crash dump (the subject in a frame), shader-compile output, a level designer's notes,
a Jenkins stage, a minified JSON asset manifest (the value one key below its subject), an INI
CVar block, a QA bug sheet pasted as TSV, a C++ code comment, a platform-certification email.
Remarks are in English, French and Simplified Chinese.

A kind's ``said`` is (carrier, format, template); templates are filled by plain replacement of
``{s}`` (subject), ``{sl}`` (its slug, ``lava_caves``), ``{v}`` (value), ``{old}`` (the value it
replaces) and ``{why}`` (a decision's reason), so JSON braces need no escaping. Each subject
family's kinds have value patterns no other kind of the family (nor its templates) can match, so
an absent pairing is never said by chance.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from experiments.measurements.memory_quality.dayworld import Aggregate, DayKind, OrderEvent

__all__ = ["AGGREGATES", "CRASHES", "GAMES", "KINDS", "LEVELS", "MILESTONES", "ORDER_EVENTS", "ORDER_QUESTIONS",
           "PLUGINS", "SET_TOPICS", "SHADERS", "STUDIO_TOPICS", "StudioKind", "fill", "language_of", "noise_statement"]

#: The titles in production (none is a substring of another or of any filler word).
GAMES = ("Ashenvale Drift", "Gloomhollow", "Starwright", "Brambleback", "Tidecaller", "Ironmoss", "Hushwood",
         "Cinderreach", "Pallid Crown", "Wyrmgate")
#: Crashing functions a symbolicated dump names.
CRASHES = ("UAbilityComponent::TickCooldowns", "FStreamingManager::UpdatePools", "AVehiclePawn::ApplyDamping",
           "UInventoryWidget::RebuildSlots", "FNavMeshBuilder::GenerateTile", "UDialogueRunner::AdvanceLine",
           "FAudioMixer::SubmitVoices", "ASpawnDirector::PickWave")
#: Master materials whose shaders compile.
SHADERS = ("M_Water_Ocean", "M_Foliage_Wind", "M_Skin_Subsurface", "M_Terrain_Blend", "M_Hologram_UI",
           "M_Glass_Refract", "M_Cloth_Sheen", "M_Lava_Flow")
#: Levels a designer owns.
LEVELS = ("Sunken Abbey", "Frostbite Quarry", "Lantern Market", "Saltglass Dunes", "Clocktower Heights",
          "Mirelight Bog", "Obsidian Forge", "Whistling Pass")
#: Milestones the titles pass, by codename.
MILESTONES = ("Kettledrum", "Longbow", "Foxglove", "Quarrystone", "Belltower", "Driftwood", "Thornback", "Greyling")
#: Middleware and SDKs a build pins, with how their versions look.
_PLUGIN_VERSIONS: dict[str, Callable[[random.Random], str]] = {
    "Wwise": lambda r: f"2023.1.{r.randrange(2, 9)}.{r.randrange(8000, 8999)}",
    "FMOD Studio": lambda r: f"2.0{r.randrange(2, 4)}.{r.randrange(10, 25)}",
    "Havok Physics": lambda r: f"2024.{r.randrange(1, 3)}.{r.randrange(0, 6)}r{r.randrange(1, 9)}",
    "the Prospero SDK": lambda r: f"{r.randrange(8, 11)}.{r.randrange(0, 9)}0.00.{r.randrange(10, 60)}",
    "the GDK": lambda r: f"24{r.randrange(3, 11):02d}{r.choice(('01', '02', '03'))}",
    "MSVC": lambda r: f"14.{r.randrange(38, 44)}.{r.randrange(30000, 34999)}",
    "Houdini Engine": lambda r: f"20.{r.randrange(0, 6)}.{r.randrange(400, 700)}",
}
PLUGINS = tuple(_PLUGIN_VERSIONS)
#: What the studio decides about, the options, and the reasons given.
STUDIO_TOPICS = ("the save system", "anti-cheat", "the localisation pipeline", "photo mode", "the crash reporter",
                 "texture streaming")
_OPTIONS = ("a chunked binary format with per-slot checksums", "Easy Anti-Cheat in kernel mode on PC only",
            "XLIFF round-trips through the vendor portal", "a free camera with depth-of-field sliders",
            "Backtrace with minidumps uploaded on next boot", "virtual textures for terrain and mips for props",
            "cloud saves behind a platform abstraction", "a server-side ban list refreshed hourly")
_REASONS = ("corrupted JSON saves cost us two review scores last year", "the console holders refuse kernel drivers",
            "translators kept overwriting each other's spreadsheets", "marketing wants shareable screenshots at launch",
            "half the crashes never reached us from players offline", "the old pool thrashed on the base PS5",
            "Steam Deck owners lose progress when they swap devices", "cheaters rejoin minutes after a kick")

_WORDS = ("amber", "basalt", "cobalt", "dune", "ember", "flint", "garnet", "heron", "ivory", "jasper", "kelp",
          "lichen", "marrow", "nettle", "opal", "pumice", "quartz", "rowan")
_PEOPLE = ("lea_fontaine", "hugo_marchand", "chloe_girard", "theo_lambert", "wang_lei", "chen_xiaoyu",
           "liu_mingzhe", "zhao_yiran", "sam_okafor", "priya_raman", "jonas_berg", "mei_tanaka")
_GPUS = ("RTX 3060", "RTX 4070", "RTX 2080", "RX 6700 XT", "RX 7800 XT", "Arc A770", "GTX 1660", "RX 580")


@dataclass(frozen=True)
class StudioKind(DayKind):
    """One relation the game-studio sessions plant; ``family`` is the subjects it is said of."""


def fill(template: str, subject: str, value: str = "", old: str = "", why: str = "") -> str:
    """``template`` with its fields replaced (plain replacement: JSON braces stay as they are)."""
    slug = re.sub(r"[^a-z0-9]+", "_", subject.casefold()).strip("_")  # how a manifest key or an INI section spells it
    return (template.replace("{s}", subject).replace("{sl}", slug).replace("{v}", value).replace("{old}", old)
            .replace("{why}", why))


#: Words only this generator's French uses (its English never does).
_FRENCH = frozenset(("le", "les", "est", "du", "des", "une", "pour", "sur", "avec", "pas", "qui", "quel", "quelle",
                     "quels", "quelles", "été", "avant", "depuis", "nous", "c'est", "passé", "tourne", "vise", "dans",
                     "ça", "mais", "encore", "maintenant", "au", "aux", "par", "ont", "lors", "plante", "voilà",
                     "retenu", "parce", "qu'on", "gère", "fait", "ajouté", "signalés", "ouverts", "de", "utilise", "garde",
                     "jusqu'à"))


def language_of(text: str) -> str:
    """The language a statement or question is in: chinese (a few Han characters), french or english."""
    if sum("\u4e00" <= c <= "\u9fff" for c in text) > 2:
        return "chinese"
    tokens = set(re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.casefold()))
    return "french" if len(tokens & _FRENCH) >= 2 else "english"


def _pick(family: tuple[str, ...]) -> Callable[[random.Random], str]:
    return lambda r: r.choice(family)


def _hex(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _guid(r: random.Random) -> str:
    return f"{_hex(r, 8).upper()}-{_hex(r, 4).upper()}-{_hex(r, 4).upper()}-{_hex(r, 4).upper()}"


_game = _pick(GAMES)
_crash = _pick(CRASHES)
_shader = _pick(SHADERS)
_level = _pick(LEVELS)
_milestone = _pick(MILESTONES)

KINDS: tuple[StudioKind, ...] = (
    StudioKind(
        "gs_green_cl", _game, lambda r, s: str(r.randrange(1_000_000, 9_999_999)),
        (("tool", "p4", "Change {v} on 2026/01/14 by farm@p4proxy 'Promote {s} nightly: all smoke tests green'"),
         ("tool", "pipeline", "[Pipeline] stage ('Label') -> {s} last known good = CL{v}"),
         ("user", "chat", "QA peut partir sur le CL {v} pour {s}, c'est le dernier build vert"),
         ("assistant", "prose", "The newest {s} build that passed every smoke test was synced at CL {v}.")),
        ("Which changelist is the last green build of {s}?", "What Perforce number should testers sync {s} to?",
         "{s} 最后一个绿色构建是哪个 changelist？"),
        pattern=r"(?<![\d.])\d{7}(?![\d.])",
        update=("{s}: CL {old} is superseded, the farm promoted CL {v} overnight",
                "{s} 的绿色构建从 CL {old} 换成了 CL {v}"),
        ask_before=("Which changelist was the last green build of {s} before the newest one?",
                    "What Perforce number did testers of {s} sync to earlier?",
                    "{s} 之前的绿色构建是哪个 changelist？"),
        family=GAMES),
    StudioKind(
        "gs_engine", _game, lambda r, s: f"20{r.randrange(21, 24)}.3.{r.randrange(10, 60)}f1",
        (("tool", "unity_log", "[Licensing::Client] Editor version {v} selected for project {s}"),
         ("tool", "ini", "[{s}]\nm_EditorVersion: {v}"),
         ("user", "chat", "{s} 这边 Unity 锁在 {v}，谁都别升级"),
         ("assistant", "prose", "Le projet {s} tourne sur Unity {v} depuis la fin du prototype.")),
        ("Which Unity editor version does {s} use?", "On what editor release must artists open the {s} project?",
         "Quelle version de l'éditeur Unity utilise {s} ?"),
        pattern=r"\b20\d\d\.3\.\d\df1\b",
        update=("{s} moved editors: {old} is retired, everyone opens it in {v} from today",
                "{s} est passé de {old} à {v}, pensez à vider le cache de la Library"),
        ask_before=("Which Unity editor version did {s} use before the upgrade?",
                    "On what editor release did artists open the {s} project earlier?",
                    "Quelle version de Unity utilisait {s} avant ?"),
        family=GAMES),
    StudioKind(
        "gs_title_id", _game, lambda r, s: f"PPSA{r.randrange(10000, 99999)}",
        (("tool", "email", "> Title ID {v} ({s}) is scheduled for the next submission window."),
         ("tool", "json", '"{s}":{"platform":"ps5","title_id":"{v}","region":"SIEE"}'),
         ("user", "chat", "{s} 的 PS5 title id 是 {v}，别跟 demo 的搞混")),
        ("What is the PS5 title ID of {s}?", "Which concept code does Sony file {s} under?",
         "Quel est le title ID PS5 de {s} ?"),
        pattern=r"\bPPSA\d{5}\b", family=GAMES),
    StudioKind(
        "gs_producer", _game, lambda r, s: "@" + r.choice(_PEOPLE),
        (("user", "chat", "for anything {s} that slips past Friday, talk to {v}, they own the schedule"),
         ("tool", "tsv", "{s}\tproducer\t{v}\tsigns the milestone"),
         ("assistant", "prose", "C'est {v} qui produit {s}, le planning passe par lui.")),
        ("Who is the producer of {s}?", "Whom do I ask when a {s} date is about to slip?", "{s} 的制作人是谁？"),
        pattern=r"@[a-z]+_[a-z]+\b",
        update=("{s} changed hands: {old} moved to the new IP, {v} produces it now",
                "{s} 的制作人从 {old} 换成了 {v}"),
        ask_before=("Who was the producer of {s} before the handover?",
                    "Whom did we ask about {s} dates earlier?", "{s} 之前的制作人是谁？"),
        family=GAMES),
    StudioKind(
        "gs_patch_size", _game, lambda r, s: f"{r.randrange(1, 10)}.{r.randrange(10, 100)} GB",
        (("tool", "pipeline", "[Package] {s} day-one patch delta: {v} (compressed)"),
         ("tool", "email", "> The {s} day-one patch weighs {v}; anything over the cap needs a waiver."),
         ("user", "chat", "le patch day-one de {s} fait {v}, on est sous la limite")),
        ("How big is the day-one patch of {s}?", "How much will players download on launch day for {s}?",
         "{s} 首日补丁有多大？"),
        pattern=r"\b\d\.\d{2} GB\b",
        update=("re-chunked the {s} pak files: the patch went from {old} to {v}",
                "{s} 的首日补丁从 {old} 压到了 {v}"),
        ask_before=("How big was the day-one patch of {s} before the re-chunk?",
                    "How much would players have downloaded for {s} earlier?", "{s} 首日补丁之前有多大？"),
        family=GAMES),
    StudioKind(
        "gs_stream", _game, lambda r, s: f"//{r.choice(_WORDS)}/rel-{r.choice(_WORDS)}-{r.randrange(10, 99)}",
        (("tool", "p4", "Stream {v} mainline {s} 'release stream cut for certification'"),
         ("tool", "pipeline", "[Pipeline] checkout: p4sync stream={v} // {s} cert build"),
         ("assistant", "prose", "{s} 的发布流是 {v}，只接受 cherry-pick。")),
        ("Which Perforce stream holds the {s} release?", "Where in the depot do certification builds of {s} come from?",
         "Quel stream Perforce porte la release de {s} ?"),
        pattern=r"//[a-z]+/rel-[a-z]+-\d{2}\b", family=GAMES),
    StudioKind(
        "gs_crash_bucket", _crash, lambda r, s: f"CRB-{r.randrange(10000, 99999)}",
        (("tool", "crash", "Bucket {v} · EXCEPTION_ACCESS_VIOLATION reading 0x0000000000000010\n"
                           "  [0] GameCore.dll!{s}() Line 412\n  [1] GameCore.dll!FTickTaskManager::RunTickGroup()"),
         ("user", "chat", "the {s} crash is bucket {v} in the triage sheet, top of the list today"),
         ("assistant", "prose", "Le crash dans {s} est regroupé sous {v} dans Backtrace.")),
        ("Which crash bucket tracks the crash in {s}?", "Under what id did triage group the {s} failure?",
         "{s} 的崩溃归在哪个 bucket？"),
        pattern=r"\bCRB-\d{5}\b", family=CRASHES),
    StudioKind(
        "gs_crash_gpu", _crash, lambda r, s: r.choice(_GPUS),
        (("tool", "crash", "GPU: NVIDIA/AMD adapter '{v}' · driver current · faulting frame {s}"),
         ("tool", "tsv", "{s}\tcrash\trepro only on {v}\tP1"),
         ("user", "chat", "{s} 的崩溃基本只在 {v} 上出现")),
        ("Which graphics card does the {s} crash happen on?", "What hardware should QA install to reproduce {s}?",
         "Sur quelle carte graphique plante {s} ?"),
        pattern=r"\b(?:RTX \d{4}|RX \d{3,4}(?: XT)?|Arc A\d{3}|GTX \d{4})\b", family=CRASHES),
    StudioKind(
        "gs_shader_hash", _shader, lambda r, s: "0x" + _hex(r, 16),
        (("tool", "shader", "ShaderCompileWorker: {s} [SM6] permutation hash {v} failed validation"),
         ("tool", "cpp", "// {s}: keep permutation {v} out of the PSO cache until the driver fix lands"),
         ("user", "chat", "{s} 那个坏掉的 permutation 是 {v}")),
        ("Which shader permutation hash of {s} fails?", "What hex id names the broken variant of {s}?",
         "Quel hash de permutation de {s} échoue ?"),
        pattern=r"\b0x[0-9a-f]{16}\b", family=SHADERS),
    StudioKind(
        "gs_shader_count", _shader, lambda r, s: f"{r.randrange(1000, 60000)} permutations",
        (("tool", "shader", "LogShaderCompilers: Display: {s} compiled {v} in the last DDC pass"),
         ("assistant", "prose", "Le matériau {s} génère {v}, c'est lui qui gonfle le DDC."),
         ("user", "chat", "{s} currently expands to {v}, we need static switches trimmed")),
        ("How many shader permutations does {s} compile?", "How many variants does {s} expand into?",
         "{s} 编译出多少个 permutation？"),
        pattern=r"\b\d{4,5} permutations\b",
        update=("trimmed static switches on {s}: {old} down to {v}", "{s} 的 permutation 从 {old} 降到了 {v}"),
        ask_before=("How many shader permutations did {s} compile before the trim?",
                    "How many variants did {s} expand into earlier?", "{s} 之前编译出多少个 permutation？"),
        family=SHADERS),
    StudioKind(
        "gs_level_budget", _level, lambda r, s: f"{r.randrange(300, 2000)} MiB",
        (("tool", "notes", "- {s}: streaming pool capped at {v}, no exceptions for the vista"),
         ("tool", "ini", "; {s}\n[/Script/Engine.StreamingSettings]\nr.Streaming.PoolSize={v}"),
         ("user", "chat", "{s} 的纹理流送预算是 {v}"),
         ("assistant", "prose", "Pour {s}, le budget de streaming est de {v} sur la base PS5.")),
        ("What is the texture streaming budget of {s}?", "How much memory may {s} stream textures into?",
         "Quel est le budget de streaming de {s} ?"),
        pattern=r"\b\d{3,4} MiB\b",
        update=("{s} got more room after the LOD pass: {old} became {v}", "{s} 的流送预算从 {old} 调到了 {v}"),
        ask_before=("What was the texture streaming budget of {s} before the change?",
                    "How much memory could {s} stream textures into earlier?", "{s} 之前的流送预算是多少？"),
        family=LEVELS),
    StudioKind(
        "gs_level_owner", _level, lambda r, s: f"{r.choice(_PEOPLE)}#{r.randrange(1000, 9999)}",
        (("tool", "notes", "## {s} — owner {v}\n- blockout done, lighting pass pending"),
         ("tool", "p4", "... //Content/Maps/{sl}.umap#12 edit ({s}), exclusive lock held by {v}"),
         ("user", "chat", "{s} c'est la carte de {v}, demande-lui avant de toucher au navmesh")),
        ("Who owns the {s} level?", "Whose map is {s}, the person to ask before editing it?", "{s} 关卡归谁负责？"),
        pattern=r"\b[a-z]+_[a-z]+#\d{4}\b", family=LEVELS),
    StudioKind(
        "gs_cert_failure", _milestone, lambda r, s: f"{r.choice(('TRC', 'XR'))}-{r.randrange(100, 999)}",
        (("tool", "email", "> Submission {s} failed pre-certification on requirement {v}; see the attached report."),
         ("user", "chat", "{s} bounced at cert, they flagged {v} again"),
         ("assistant", "prose", "{s} 认证没过，问题出在 {v} 这一条。")),
        ("Which certification requirement did the {s} submission fail?",
         "What rule did the console holder cite when it bounced {s}?", "Quelle exigence de certification {s} a ratée ?"),
        pattern=r"\b(?:TRC|XR)-\d{3}\b", family=MILESTONES),
    StudioKind(
        "gs_milestone_ticket", _milestone, lambda r, s: f"{r.choice(('GSP', 'CERT', 'MLS'))}-{r.randrange(1000, 9999)}",
        (("tool", "tsv", "{s}\tmilestone\t{v}\tgo/no-go Monday"),
         ("user", "chat", "{s} 里程碑的单子是 {v}"),
         ("tool", "pipeline", "[Pipeline] env MILESTONE_TICKET={v} // {s}"),
         ("user", "chat", "scratch the ticket I pasted earlier, {s} lives in {v}")),
        ("Which ticket tracks the {s} milestone?", "Where do we record the go/no-go for {s}?",
         "Quel ticket suit le jalon {s} ?"),
        pattern=r"\b(?:GSP|CERT|MLS)-\d{4}\b", family=MILESTONES),
    StudioKind(
        "gs_plugin_pin", _pick(PLUGINS), lambda r, s: _PLUGIN_VERSIONS[s](r),
        (("tool", "ini", "; {s} pinned to {v} for the whole branch"),
         ("tool", "ue_log", "LogPluginManager: Mounting {s} {v} from Engine/Plugins/Marketplace"),
         ("tool", "pipeline", "[Pipeline] toolchain check: {s} {v} OK"),
         ("user", "chat", "on garde {s} en {v} jusqu'à la soumission")),
        ("Which version of {s} are we pinned to?", "What {s} release must the build farm stay on?",
         "{s} 锁定在哪个版本？"),
        update=("upgraded {s} {old} -> {v} on the farm, no new warnings", "{s} 从 {old} 升到了 {v}，农场没报错"),
        ask_before=("Which version of {s} were we pinned to before the upgrade?",
                    "What {s} release did the build farm use earlier?", "{s} 升级之前是哪个版本？"),
        family=PLUGINS),
    StudioKind(
        "gs_decision", _pick(STUDIO_TOPICS), lambda r, s: r.choice(_OPTIONS),
        (("user", "chat", "settled {s}: {v}, since {why}"),
         ("assistant", "prose", "Pour {s}, on a retenu {v}, parce que {why}."),
         ("assistant", "prose", "{s} 最后定了：{v}。原因是 {why}。")),
        ("What did we decide for {s}, and why?", "Which option won for {s} and what was the argument?",
         "{s} 最后选了什么，为什么？"),
        family=STUDIO_TOPICS, why=lambda r: r.choice(_REASONS)),
)

#: Sets gathered one value per session: (kind, value maker, said templates, questions); ``{t}`` the topic.
AGGREGATES: tuple[Aggregate, ...] = (
    ("gs_platform_set", lambda r: r.choice(("Switch 2", "Xbox Series S", "Steam Deck", "PS5 Pro", "GeForce Now",
                                            "Xbox One X", "PS4 Slim", "Meta Quest 3", "ROG Ally", "Apple Vision Pro")),
     (("user", "chat", "{t}: {v} is on the target list as of today"),
      ("assistant", "prose", "Pour {t}, nous avons ajouté {v} aux plateformes visées."),
      ("tool", "tsv", "{t}\tplatform\t{v}\tadded")),
     ("Which platforms did we add for {t}?", "List every device we signed up to ship on during {t}.",
      "{t} 期间加了哪些平台？")),
    ("gs_bug_set", lambda r: f"GQA-{r.randrange(100, 999)}",
     (("user", "chat", "QA logged {v} against {t}, video attached"),
      ("assistant", "prose", "{t} 又多了一个 bug：{v}。"),
      ("tool", "tsv", "{t}\tbug\t{v}\topen")),
     ("Which bugs did QA log for {t}?", "List everything testers reported while we worked on {t}.",
      "Quels bugs la QA a signalés pour {t} ?")),
)
#: What the sets are about.
SET_TOPICS = ("the performance sprint", "the accessibility review", "the co-op beta", "the winter event",
              "the controller remapping work")

#: Two events in different sessions: a patch submitted for one milestone, an emergency shelve for another.
ORDER_EVENTS: tuple[OrderEvent, ...] = (
    (lambda r: f"SUB-{_hex(r, 6).upper()}", ("user", "chat", "sent the {s} build to the platform holder, receipt {v}")),
    (lambda r: f"SHV-{r.randrange(10_000_000, 99_999_999)}",
     ("assistant", "prose", "Shelved the {s} hotfix as {v} so the release stream can take it.")),
)
ORDER_QUESTIONS = ("Which came first: the platform submission for {a} or the hotfix shelve for {b}?",
                   "Did {a} go off to the console holder before or after the emergency fix for {b} was parked in Perforce?",
                   "{a} 提交给平台方和 {b} 的热修复 shelve，哪个先发生？")


def noise_statement(rng: random.Random) -> str:
    """A fact-shaped remark about nothing asked (no subject, no value of a planted shape)."""
    n = rng.randrange(3, 60)
    return rng.choice((
        f"the cook for the PC client took {n} minutes on agent seven",
        f"DDC hit rate sat at {n} percent on the morning build",
        f"{n} Discord reports mention stutter in the menus since the weekend",
        f"编译队列里还压着 {n} 个任务",
        f"la file de cuisson a mis {n} minutes à se vider ce matin",
        f"the lightmass bake produced {n * 3} warnings, all about overlapping UVs",
        f"playtest survey came back with {n} answers, most about the camera",
    ))
