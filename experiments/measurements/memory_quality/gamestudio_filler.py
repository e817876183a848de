"""The filler of the game-studio generator (:mod:`.gamestudio`): what the user asks, the agent's replies, tool output.

Tool output comes in twelve formats, each a list of blocks (a block is a line or a few lines) a
planted statement can be put between: an Unreal build log (``ue_log``), a Unity editor log
(``unity_log``), Perforce output (``p4``: changes, describe, opened files), a symbolicated crash
dump (``crash``), shader-compile output (``shader``), a level designer's notes (``notes``), a
Jenkins pipeline console (``pipeline``), a minified JSON asset manifest (``json``, its blocks
members of one object on one line), an INI CVar file (``ini``), a QA bug sheet pasted as TSV
(``tsv``), C++ source with comments (``cpp``) and a platform-certification email (``email``). No
filler line names a subject of the generator or holds a value of a planted shape (no seven-digit
numbers, no sizes with decimals, no hex ids).
"""

from __future__ import annotations

import random
from collections.abc import Callable

__all__ = ["TOOL_FORMATS", "StudioFiller"]

_NICKS = ("lucie.b", "xiaoming", "bastien", "yuqi", "kwame", "ines_r", "haoran", "margaux", "tobi", "nadia")
_ASKS = ("the nightly cook died again on the packaging step, can you see why?",
         "draft the patch notes from this week's submitted changelists",
         "why did the shader compile time double since Tuesday?",
         "look at the crash triage below and tell me what blocks the milestone",
         "update the bug sheet so QA knows what is left before the build goes out",
         "打包又失败了，帮我看一下日志",
         "tu peux regarder pourquoi le build console casse à l'étape de signature ?",
         "summarise the Discord thread for the studio stand-up")
_REPLIES_EN = ("I read the whole log; the failure is a missing cooked asset, not the compiler.",
               "The pipeline stopped because an agent ran out of disk during the cook.",
               "Most of the warnings are deprecations that the engine upgrade will clear.",
               "I compared both builds and the growth is uncompressed audio banks.",
               "The crashes cluster in one subsystem; the rest are single reports from dev kits.")
_REPLIES_ZH = ("日志我看过了，签名之前的步骤都正常。", "这些警告只出现在开发机上，先不用管。", "缺陷表里剩下的条目我整理好了。")
_REPLIES_FR = ("J'ai regardé le log, le souci vient d'un asset pas cuisiné, pas du compilateur.",
               "Les avertissements concernent des API obsolètes, rien de bloquant pour la soumission.")
_CPP = ("check(World != nullptr);", "const float Alpha = FMath::Clamp(Delta * Speed, 0.f, 1.f);",
        "UE_LOG(LogTemp, Verbose, TEXT(\"tick\"));", "TArray<FName> Tags; Tags.Reserve(8);",
        "if (!IsValid(Owner)) { return; }", "GetWorldTimerManager().ClearTimer(Handle);")
_COMMENTS = ("// keep in sync with the console TRC checklist", "// TODO: remove after the engine upgrade",
             "// design asked for this to feel snappier", "// see the Discord thread from Monday",
             "// 美术要求的效果，先别动", "// à retirer après la sortie")
_FILES = ("HealthComponent.cpp", "WeaponBase.cpp", "SaveGameSubsystem.cpp", "MenuController.cpp",
          "LootTable.cpp", "CameraRig.cpp", "QuestLog.cpp", "PhotoModeSettings.cpp")
_ASSETS = ("T_Rock_Albedo", "SM_Crate_Wooden", "SK_Hero_Body", "A_Footstep_Gravel", "NS_Sparks_Small",
           "BP_DoorSliding", "WBP_PauseMenu", "DT_EnemyStats")
TOOL_FORMATS = ("ue_log", "unity_log", "p4", "crash", "shader", "notes", "pipeline", "json", "ini", "tsv", "cpp",
                "email")


class StudioFiller:
    """Seeded filler text of the game-studio sessions."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def opening(self, nick_lines: int) -> list[str]:
        """The user's request and a few pasted Discord lines of teammates (``nick_lines`` of them)."""
        rng = self.rng
        lines = [rng.choice(_ASKS)]
        for _ in range(nick_lines):
            lines.append(f"[{rng.randrange(9, 19):02d}:{rng.randrange(60):02d}] {rng.choice(_NICKS)}: {rng.choice(_ASKS)}")
        return lines

    def reply(self) -> str:
        """The agent's reply before what it plants."""
        rng = self.rng
        pool = rng.choice((_REPLIES_EN, _REPLIES_EN, _REPLIES_ZH, _REPLIES_FR))
        return " ".join(rng.sample(pool, min(len(pool), rng.randrange(2, 4))))

    def tool(self, fmt: str, size: int) -> tuple[str, dict[str, object], list[str]]:
        """A tool call's name and arguments and its output's blocks (about ``size`` bytes) in format ``fmt``."""
        name, args, line = getattr(self, f"_{fmt}")()
        blocks: list[str] = []
        while sum(len(b) + 1 for b in blocks) < size:
            blocks.append(line())
        return name, args, blocks

    @staticmethod
    def assemble(fmt: str, blocks: list[str]) -> str:
        """A tool's output from its blocks (the manifest's are members of one minified object, the sheet has a header)."""
        if fmt == "json":
            return '{"manifest":{' + ",".join(blocks) + '},"schema":4,"generator":"AssetAudit"}'
        if fmt == "tsv":
            return "Subject\tField\tValue\tNote\n" + "\n".join(blocks)
        if fmt == "email":
            return "From: certification@platform.example\nSubject: Pre-certification results\n\n" + "\n".join(blocks)
        return "\n".join(blocks)

    def _n(self, low: int, high: int) -> int:
        return self.rng.randrange(low, high)

    def _ue_log(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "bash", {"command": "RunUAT.bat BuildCookRun -platform=Win64 -cook -stage -pak"}, lambda: rng.choice((
            f"LogCook: Display: Cooked packages {self._n(100, 9000)} Packages Remain {self._n(0, 900)}",
            f"LogCook: Warning: {rng.choice(_ASSETS)} references a redirector, fix up redirectors",
            f"LogInit: Display: Running engine for game: {rng.choice(('Client', 'Server'))}",
            "UATHelper: Packaging (Windows): BUILD SUCCESSFUL",
            f"LogDerivedDataCache: Display: Pak cache hit {self._n(10, 99)} of {self._n(100, 200)} lookups",
            f"LogAssetRegistry: Display: Scanned {self._n(2, 90)} paths in the content browser"))

    def _unity_log(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "Logs/Editor.log"}, lambda: rng.choice((
            f"Refreshing native plugins compatible for Editor in {self._n(1, 90)} ms",
            f"[ScriptCompilation] Requested script compilation because: {rng.choice(('Assetdatabase', 'Packages changed'))}",
            "Reloading assemblies after forced synchronous recompile.",
            f"Asset Pipeline Refresh (id=a{self._n(10, 99)}): Total: {self._n(1, 9)} seconds",
            "Shader warning in 'Hidden/PostProcess': implicit truncation of vector type",
            "Unloading broken assembly Library/ScriptAssemblies/Tests.dll"))

    def _p4(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "bash", {"command": "p4 changes -m 20 -s submitted //..."}, lambda: rng.choice((
            f"... //Engine/Source/Runtime/{rng.choice(_FILES)}#{self._n(2, 90)} edit",
            f"... //Content/Props/{rng.choice(_ASSETS)}.uasset#{self._n(2, 40)} add",
            f"\tAffected files: {self._n(2, 60)}, reviewed by {rng.choice(_NICKS)}",
            "\tFix LOD popping on distant props (swarm review approved)",
            "\t[QA] regression pass requested before integration",
            f"... //Config/DefaultGame.ini#{self._n(2, 90)} integrate"))

    def _crash(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "http_get", {"url": "https://crashes.studio.example/api/buckets?status=open"}, lambda: rng.choice((
            "  [2] GameCore.dll!FTaskGraphInterface::ProcessThreadUntilIdle() Line 801",
            "  [3] Engine.dll!UWorld::Tick() Line 1622", "  [4] Core.dll!GuardedMain() Line 204",
            "Thread 7 (RenderThread) waiting on fence", "  [5] kernel32.dll!BaseThreadInitThunk()",
            f"reports: {self._n(5, 900)} · machines: {self._n(2, 400)} · first seen: last night"))

    def _shader(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "bash", {"command": "UnrealEditor-Cmd.exe -run=DerivedDataCache -fill -TargetPlatform=PS5"}, lambda: rng.choice((
            f"LogShaderCompilers: Display: Worker {self._n(1, 16)} idle, {self._n(0, 900)} jobs queued",
            "LogShaderCompilers: Warning: Global shader map rebuilt because a .usf file changed",
            f"LogMaterial: Display: Missing cached shadermap, compiling {self._n(2, 40)} jobs",
            "ShaderCompileWorker: DXC emitted 'loop unrolling failed', falling back to dynamic loop",
            f"LogShaderCompilers: Display: Compiled in {self._n(2, 59)}s across the pool"))

    def _notes(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "Design/LevelNotes.md"}, lambda: rng.choice((
            "- the second arena reads too dark on HDR displays", "- move the checkpoint before the rope bridge",
            "- 第三段跑酷太难，测试员卡了很久", "- la cinématique d'intro coupe trop tôt",
            "- add a landmark so players see the exit from the ridge", "- collision on the stairs still snags the camera"))

    def _pipeline(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "http_get", {"url": "https://jenkins.studio.example/job/console-nightly/lastBuild/consoleText"}, lambda: rng.choice((
            "[Pipeline] { (Cook)", "[Pipeline] node", f"Running on agent-{self._n(1, 30)} in /j/workspace/nightly",
            "[Pipeline] }", f"[Pipeline] sh + ./Build/archive.sh --keep {self._n(3, 20)}",
            "[Pipeline] // stage", f"Finished stage in {self._n(1, 59)} min"))

    def _json(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "Saved/Audit/asset_manifest.json"}, lambda: (
            f'"{rng.choice(_ASSETS)}_{self._n(100, 999)}":{{"cooked":{rng.choice(("true", "false"))},'
            f'"refs":{self._n(0, 60)},"lod":{self._n(0, 4)}}}')

    def _ini(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "Config/DefaultEngine.ini"}, lambda: rng.choice((
            "[/Script/Engine.RendererSettings]", f"r.Shadow.MaxResolution={rng.choice((1024, 2048))}",
            f"r.ViewDistanceScale={self._n(1, 3)}", "r.DefaultFeature.MotionBlur=False",
            "[SystemSettings]", f"t.MaxFPS={rng.choice((30, 60, 120))}", "; keep these in sync with the scalability groups"))

    def _tsv(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "qa/bug_sheet.tsv"}, lambda: rng.choice((
            "UI\tbug\tsubtitle overlaps the prompt\tP3", "Audio\tbug\tfootsteps missing on wood\tP2",
            f"Save\tbug\tslot {self._n(1, 9)} shows a blank thumbnail\tP2", "Input\tbug\tremapping resets on resume\tP1",
            f"Perf\tnote\tframe spikes in the hub, {self._n(2, 9)} repros\tP2", "Loc\tbug\tlignes coupées en allemand\tP3"))

    def _cpp(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng

        def chunk() -> str:  # a few lines of one source file with a comment
            return "\n".join([f"// {rng.choice(_FILES)}", *rng.sample(_CPP, 2), rng.choice(_COMMENTS)])
        return "read_file", {"path": "Source/Game/Private"}, chunk

    def _email(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_email", {"folder": "certification"}, lambda: rng.choice((
            "> Thank you for your submission to the certification program.",
            "> Please resubmit once the findings below have been addressed.",
            "> Suspend and resume must be tested with an active network session.",
            "Bonjour à tous, voici le compte rendu de la réunion de cert.", "大家好，下周的提交时间表如下。",
            "> -- Platform Technical Account Management"))
