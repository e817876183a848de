"""The filler of the mobile-release generator (:mod:`.mobilerelease`): what the user asks, the agent's replies, tool output.

Tool output comes in fourteen formats, each a list of blocks (a block is a line or a few lines) a
planted statement can be put between: ``fastlane`` and ``log`` lines, a TestFlight ``changelog``,
a unified ``diff`` of Gradle and Swift code, a Play ``console`` listing, a GitHub Actions
``workflow``, a partner ``email`` with quoted lines, Remote Config ``json`` (nested, its blocks
joined as one object), a release ``checklist`` (a markdown table), ``logcat``, a Sentry ``crash``,
an App Store ``review`` note, an Info.plist (``plist``) and a merged AndroidManifest.xml (``manifest``). No filler line names a subject of the
generator or holds a value of a planted shape (no dotted versions, no percentages with decimals).
"""

from __future__ import annotations

import random
from collections.abc import Callable

__all__ = ["TOOL_FORMATS", "ReleaseFiller"]

_NICKS = ("dahye", "jaehyun", "mariana.c", "vitor", "eunbi", "gustavo_s", "taeyang", "fernanda", "hana", "rafa")
_ASKS = ("can you check why the release lane fails on the signing step?",
         "please draft the notes for the store listing from the merged PRs",
         "why is the Android bundle twice as big as last week?",
         "look at the crash spike after this morning's build and tell me if we halt",
         "update the checklist so QA knows what is left before submission",
         "iOS 아카이브가 또 실패했어요, 로그 좀 봐 주세요",
         "o lane de Android quebrou no upload, dá uma olhada?",
         "summarise the thread below for the go/no-go meeting")
_REPLIES_EN = ("I went through the output; nothing in it blocks the submission by itself.",
               "The lane stopped on a missing environment variable, which the runner never exported.",
               "Most of the warnings are deprecations we already track; I left them alone.",
               "I compared the two builds and the difference is the bundled fonts and the debug symbols.",
               "The stack traces cluster on one screen; the rest is noise from a test device.")
_REPLIES_KO = ("로그를 확인했는데 서명 단계 전에는 문제가 없어요.", "테스트 기기에서만 나는 경고라서 일단 무시했습니다.",
               "체크리스트에 남은 항목을 정리했어요.")
_REPLIES_PT = ("Dei uma olhada no log, o problema é só a variável de ambiente que não foi exportada.",
               "Os avisos são de APIs depreciadas, nada que trave o envio.")
_SWIFT = ("let formatter = DateFormatter()", "guard let session = store.session else { return }",
          "view.layer.cornerRadius = 12", "Task { await viewModel.reload() }", "@Published var isLoading = false",
          "tableView.register(ItemCell.self, forCellReuseIdentifier: \"item\")")
_KOTLIN = ("val adapter = ItemAdapter(onClick = ::openItem)", "viewModelScope.launch { repository.refresh() }",
           "binding.toolbar.setNavigationOnClickListener { finish() }", "implementation(libs.androidx.core.ktx)",
           "buildFeatures { compose = true }", "isMinifyEnabled = true")
_COMMENTS = ("// keep in sync with the iOS screen", "// TODO: drop after the migration", "// QA asked for this",
             "// see the thread from Tuesday", "// 디자인 시안 반영", "// remover depois do lançamento")
_TASKS = ("preBuild", "mergeReleaseResources", "compileReleaseJavaWithJavac", "minifyReleaseWithR8", "lintVitalRelease",
          "packageReleaseBundle", "signReleaseBundle", "processReleaseManifest")
_FILES = ("SettingsView.swift", "ProfileHeader.swift", "ItemAdapter.kt", "MainActivity.kt", "AppDelegate.swift",
          "NetworkModule.kt", "ThemeColors.swift", "StringsCatalog.xcstrings")
TOOL_FORMATS = ("fastlane", "log", "changelog", "diff", "console", "workflow", "email", "json", "checklist", "logcat",
                "crash", "review", "plist", "manifest")


class ReleaseFiller:
    """Seeded filler text of the mobile-release sessions."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def opening(self, nick_lines: int) -> list[str]:
        """The user's request and a few pasted Slack lines of teammates (``nick_lines`` of them)."""
        rng = self.rng
        lines = [rng.choice(_ASKS)]
        for _ in range(nick_lines):
            lines.append(f"{rng.choice(_NICKS)}: {rng.choice(_ASKS)}")
        return lines

    def nick(self) -> str:
        """A teammate's handle in a pasted thread."""
        return self.rng.choice(_NICKS)

    def reply(self) -> str:
        """The agent's reply before what it plants."""
        rng = self.rng
        pool = rng.choice((_REPLIES_EN, _REPLIES_EN, _REPLIES_KO, _REPLIES_PT))
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
        """A tool's output from its blocks (JSON blocks are members of one nested object)."""
        if fmt == "json":
            return '{\n  "parameters": {\n' + ",\n".join(blocks) + '\n  },\n  "version": {"versionNumber": "118"}\n}'
        if fmt == "checklist":
            return "| Item | What | Value | Note |\n|---|---|---|---|\n" + "\n".join(blocks)
        if fmt == "plist":
            return '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n' + "\n".join(blocks) + "\n</dict>\n</plist>"
        return "\n".join(blocks)

    def _n(self, low: int, high: int) -> int:
        return self.rng.randrange(low, high)

    def _fastlane(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "bash", {"command": "bundle exec fastlane ios beta"}, lambda: rng.choice((
            f"[fastlane] ▸ Compiling {rng.choice(_FILES)}", f"[fastlane] ▸ Linking module {rng.choice(('Core', 'UI', 'Net'))}",
            "[fastlane] gym: Generated plist file with the export options", "[fastlane] match: all certificates are installed",
            f"[fastlane] ▸ Processing {self._n(2, 90)} asset catalogs", "[fastlane] ⚠ ld: warning: duplicate -rpath ignored"))

    def _log(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "bash", {"command": "./gradlew :app:bundleRelease --console=plain"}, lambda: rng.choice((
            f"> Task :app:{rng.choice(_TASKS)}", f"> Task :core:{rng.choice(_TASKS)} UP-TO-DATE",
            f"w: file:///src/main/{rng.choice(_FILES)}:{self._n(10, 400)}:{self._n(2, 40)} 'onBackPressed' is deprecated",
            f"BUILD SUCCESSFUL in {self._n(1, 9)}m {self._n(0, 59)}s", f"{self._n(40, 300)} actionable tasks: {self._n(5, 40)} executed"))

    def _changelog(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "fastlane/metadata/testflight/what_to_test.md"}, lambda: rng.choice((
            "- Please try signing out and back in twice", "- The settings screen has a new layout, check the toggles",
            "- 다크 테마에서 텍스트 대비를 확인해 주세요", "- Teste o fluxo de cadastro com uma conta nova",
            "- Known issue: the splash screen flickers on cold start"))

    def _diff(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng

        def hunk() -> str:  # one file's hunk: its header, context, a removed and an added line, with a comment
            path = rng.choice(_FILES)
            code = _KOTLIN if path.endswith(".kt") else _SWIFT
            start = self._n(10, 400)
            body = [f" {line}" for line in rng.sample(code, 2)] + [f"-    {rng.choice(code)}", f"+    {rng.choice(code)}",
                                                                 f"+    {rng.choice(_COMMENTS)}"]
            return "\n".join([f"diff --git a/src/{path} b/src/{path}", f"@@ -{start},{self._n(4, 9)} +{start},{self._n(4, 9)} @@",
                              *body])
        return "bash", {"command": "git diff origin/main -- app/build.gradle.kts ios/"}, hunk

    def _console(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "web_fetch", {"url": "https://play.google.com/console/releases"}, lambda: rng.choice((
            "Release notes · en-US · edited yesterday", f"Pre-launch report · {self._n(2, 20)} devices tested · no crashes",
            "Managed publishing is off", f"Android vitals · ANR rate {self._n(1, 5)} per thousand sessions",
            "Policy status · no issues", f"Ratings · {self._n(100, 9000)} in the last {self._n(7, 90)} days",
            f"Country availability · {self._n(40, 170)} countries"))

    def _workflow(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": ".github/workflows/release.yml"}, lambda: rng.choice((
            "    runs-on: macos-14", "      - uses: actions/checkout@v4", "      - run: bundle install --jobs 4",
            "    timeout-minutes: 60", "      - name: Upload dSYMs", "        with:", "          cache: gradle",
            "    needs: [lint, unit-tests]", "  workflow_dispatch:", f"          retention-days: {self._n(3, 30)}",
            f"      - run: ./gradlew test --max-workers={self._n(2, 8)}", f"    concurrency: release-{self._n(1, 9)}"))

    def _email(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_email", {"folder": "partners"}, lambda: rng.choice((
            "From: Partner Integrations <integrations@partner.example>", "Subject: Re: launch checklist",
            "> Thanks for the quick turnaround on the last build.", "> Our legal team still needs the privacy labels.",
            "Olá pessoal, seguem os pontos da reunião de ontem.", "안녕하세요, 다음 주 일정 공유드립니다.",
            "> -- sent from my phone"))

    def _json(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        keys = ("welcome_banner_copy", "max_upload_mb", "support_chat_hours", "theme_accent", "min_supported_build")

        def block() -> str:
            return (f'    "{rng.choice(keys)}_{self._n(100, 999)}": {{\n      "defaultValue": {{\n'
                    f'        "value": "{self._n(1, 50)}"\n      }},\n      "valueType": "NUMBER"\n    }}')
        return "http_get", {"url": "https://firebaseremoteconfig.googleapis.com/v1/projects/app/remoteConfig"}, block

    def _checklist(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "notion/release-checklist.md"}, lambda: rng.choice((
            "| Screenshots | store assets | refreshed | design signed off |", "| Privacy labels | App Store | unchanged | |",
            "| Release notes | translations | in review | due Wednesday |", "| Smoke test | QA | passed | iPad too |",
            "| Data safety form | Play | submitted | |", f"| Open blockers | QA | {self._n(0, 9)} | triage at {self._n(9, 17)}h |",
            f"| Beta feedback | TestFlight | {self._n(2, 60)} reports | {rng.choice(_NICKS)} reads them |"))

    def _logcat(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "bash", {"command": "adb logcat -d -v time"}, lambda: rng.choice((
            f"12-02 09:{self._n(10, 59)}:{self._n(10, 59)}.{self._n(100, 999)}  {self._n(1000, 9999)}  {self._n(1000, 9999)} D OkHttp: <-- 200 OK",
            f"12-02 09:{self._n(10, 59)}:{self._n(10, 59)}.{self._n(100, 999)}  {self._n(1000, 9999)}  {self._n(1000, 9999)} I Choreographer: Skipped {self._n(30, 90)} frames!",
            f"12-02 09:{self._n(10, 59)}:{self._n(10, 59)}.{self._n(100, 999)}  {self._n(1000, 9999)}  {self._n(1000, 9999)} W WindowOnBackDispatcher: not enabled"))

    def _crash(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "http_get", {"url": "https://sentry.io/api/0/issues/?query=is:unresolved"}, lambda: rng.choice((
            "    at android.os.Handler.dispatchMessage(Handler.java:106)", "    at android.os.Looper.loop(Looper.java:223)",
            "    at androidx.fragment.app.FragmentManager.executeOps(FragmentManager.java:2012)",
            "Thread 0 Crashed:: Dispatch queue: com.apple.main-thread", "0   libswiftCore.dylib  swift_unknownObjectRetain + 24",
            f"events: {self._n(5, 900)} · users: {self._n(2, 400)} · first seen: yesterday"))

    def _review(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "web_fetch", {"url": "https://appstoreconnect.apple.com/apps/review"}, lambda: rng.choice((
            "Hello, thank you for your resubmission.", "We noticed the app still requires a login to see basic features.",
            "Please provide a demo account that does not expire.", "Next steps: reply in the Resolution Center.",
            "Device type: iPad Air (5th generation)", f"Submission received {self._n(2, 28)} days ago.",
            f"Review environment: {rng.choice(('iPhone', 'iPad'))} on Wi-Fi"))

    def _plist(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "read_file", {"path": "ios/App/Info.plist"}, lambda: rng.choice((
            "\t<key>UIBackgroundModes</key><array><string>remote-notification</string></array>",
            "\t<key>NSCameraUsageDescription</key><string>Used to scan receipts.</string>",
            "\t<key>ITSAppUsesNonExemptEncryption</key><false/>", "\t<key>UILaunchStoryboardName</key><string>Launch</string>",
            "\t<key>LSApplicationQueriesSchemes</key><array><string>mailto</string></array>"))

    def _manifest(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        return "bash", {"command": "cat app/build/intermediates/merged_manifests/release/AndroidManifest.xml"}, lambda: rng.choice((
            '    <uses-permission android:name="android.permission.CAMERA" />',
            '    <uses-permission android:name="android.permission.POST_NOTIFICATIONS" />',
            f'    <activity android:name=".ui.Screen{self._n(1, 40)}Activity" android:exported="false" />',
            '    <meta-data android:name="firebase_analytics_collection_enabled" android:value="false" />',
            f'    <service android:name=".sync.Job{self._n(1, 20)}Service" android:foregroundServiceType="dataSync" />'))
