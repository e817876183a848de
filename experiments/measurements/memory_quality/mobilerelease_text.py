"""What the mobile-release generator (:mod:`.mobilerelease`) plants: its subjects, kinds of facts and how each is said.

The sessions are a mobile team's release days (an iOS and an Android app shipping builds). A fact
comes as a line of a Slack thread the user pastes, a sentence of the agent's reply, or a piece of
a tool's output: a ``fastlane`` / ``xcodebuild`` line, a Gradle diff's ``+`` line, an Info.plist
key, a Remote Config block of nested JSON (the value a few keys below its subject), a Sentry stack
trace (the subject in a frame), a release checklist's table row, a partner's email, ``adb logcat``.
Remarks are in English, Korean and Brazilian Portuguese.

A kind's ``said`` is (carrier, format, template); templates are filled by plain replacement of
``{s}`` (subject), ``{sl}`` (its slug, ``voice_notes``), ``{v}`` (value), ``{old}`` (the value it replaces) and ``{why}`` (a decision's
reason), so JSON braces need no escaping. Each subject family's kinds have value patterns that no
other kind of the family (nor its templates) can match, so an absent pairing is never said by chance.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from experiments.measurements.memory_quality.dayworld import Aggregate, DayKind, OrderEvent

__all__ = ["AGGREGATES", "APPS", "CRASHES", "FEATURES", "KINDS", "ORDER_QUESTIONS", "PINS", "RELEASES", "TOPICS",
           "ReleaseKind", "fill", "language_of", "noise_statement"]

#: The apps (none is a substring of another or of any filler word).
APPS = ("Tidepool", "Pocketwise", "Ferngrove", "Harborline", "Quillnote", "Moonbeam", "Kestrel", "Sundew",
        "Brightpath", "Marlowe", "Cobblestone", "Otterly")
#: Features behind flags.
FEATURES = ("instant payouts", "receipt scanning", "biometric unlock", "referral rewards", "offline drafts",
            "split bills", "voice notes", "home widgets", "in-app review prompt", "card freeze")
#: Crashing stack frames (the subject of a crash).
CRASHES = ("CheckoutViewModel.submitOrder", "ReceiptCameraFragment.onResume", "PushTokenRegistrar.refresh",
           "LedgerSyncWorker.doWork", "AvatarImageLoader.decode", "DeepLinkRouter.resolve",
           "WalletCardView.layoutSubviews", "OnboardingPager.onPageSelected")
#: Release trains, by codename.
RELEASES = ("Sparrow", "Lantern", "Pinecone", "Gondola", "Tamarack", "Halyard", "Figment", "Bellwether")
#: Toolchain parts a build pins, with how their versions look.
_PIN_VERSIONS: dict[str, Callable[[random.Random], str]] = {
    "Xcode": lambda r: f"{r.randrange(15, 17)}.{r.randrange(0, 5)}.{r.randrange(1, 3)}",
    "Kotlin": lambda r: f"2.{r.randrange(0, 2)}.{r.randrange(10, 30)}",
    "AGP": lambda r: f"8.{r.randrange(2, 9)}.{r.randrange(0, 4)}",
    "CocoaPods": lambda r: f"1.{r.randrange(12, 17)}.{r.randrange(0, 3)}",
    "Gradle wrapper": lambda r: f"8.{r.randrange(9, 15)}.{r.randrange(1, 3)}",
    "Firebase BoM": lambda r: f"3{r.randrange(2, 4)}.{r.randrange(1, 9)}.{r.randrange(0, 2)}",
    "Sentry Cocoa": lambda r: f"8.{r.randrange(30, 45)}.{r.randrange(0, 3)}",
}
PINS = tuple(_PIN_VERSIONS)
#: What the team decides about, the options, and the reasons given.
TOPICS = ("crash reporting", "the beta channel", "release cadence", "store screenshots", "the navigation rewrite",
          "in-app purchases")
_OPTIONS = ("Sentry with dSYM upload from CI", "Firebase App Distribution for Android testers",
            "a two-week train with a Wednesday code freeze", "fastlane snapshot on a rented Mac mini",
            "type-safe Navigation Compose routes", "RevenueCat in front of StoreKit 2",
            "phased release over seven days", "Maestro flows on every pull request")
_REASONS = ("Crashlytics kept dropping symbolication for watchOS", "the testers refuse to install TestFlight",
            "QA needs two clear days before submission", "twelve locales by hand took a whole sprint",
            "deep links broke whenever a fragment was renamed", "receipt validation on our server was a liability",
            "a bad build last spring reached everyone in an hour", "Espresso flakes cost us a release day")

_ORGS = ("acme", "northlight", "bluefin", "kairo", "verdant", "polaris")
_WORDS = ("wallet", "ledger", "pulse", "nimbus", "cairn", "ember", "fjord", "gale", "inlet", "mesa", "onyx",
          "prairie", "ridge", "tundra", "vale", "willow", "yarrow", "zinnia")
_NAMES = ("jiwoo.han", "seoyeon.park", "minjun.kang", "hyejin.yoon", "dohyun.lim", "sumin.jeong", "beatriz.moraes",
          "larissa.prado", "caio.bezerra", "renata.falcao", "igor.tavares", "joana.ribeiro")
_GUIDELINES = ("4.3(a)", "4.3(b)", "5.1.1(v)", "5.1.2(i)", "3.1.1(a)", "4.2.3(i)", "2.3.3", "2.5.4", "5.1.1(i)", "2.3.10")


@dataclass(frozen=True)
class ReleaseKind(DayKind):
    """One relation the mobile-release sessions plant; ``family`` is the subjects it is said of."""


def fill(template: str, subject: str, value: str = "", old: str = "", why: str = "") -> str:
    """``template`` with its fields replaced (plain replacement: JSON braces stay as they are)."""
    slug = re.sub(r"[^a-z0-9]+", "_", subject.casefold())  # how a JSON key or a crash's culprit spells it
    return (template.replace("{s}", subject).replace("{sl}", slug).replace("{v}", value).replace("{old}", old)
            .replace("{why}", why))


#: Words only this generator's Portuguese uses (its English never does).
_PORTUGUESE = frozenset(("não", "é", "está", "tá", "você", "pra", "pro", "qual", "quem", "ficou", "agora", "também",
                         "vence", "em", "dos", "dia", "vamos", "segurar", "até", "saiu", "recusou", "diretriz",
                         "aparelho", "acontece", "abre", "estava", "antes", "liberado", "usuários", "assina", "chave",
                         "conduz", "subiu", "ainda", "mais", "um", "idioma", "foi", "usava", "guarda", "já", "passou",
                         "pode", "porque", "decidido", "acompanha", "abriu", "quais"))


def language_of(text: str) -> str:
    """The language a statement or question is in: korean, portuguese or english."""
    if sum("\uac00" <= c <= "\ud7a3" for c in text) > 2:
        return "korean"
    tokens = set(re.findall(r"[^\W\d_]+", text.casefold()))
    return "portuguese" if len(tokens & _PORTUGUESE) >= 2 else "english"


def _pick(family: tuple[str, ...]) -> Callable[[random.Random], str]:
    return lambda r: r.choice(family)


def _hexpairs(r: random.Random) -> str:
    return ":".join(f"{r.randrange(256):02X}" for _ in range(20))


def _base36(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(n))


def _device(r: random.Random) -> str:
    if r.random() < 0.5:
        return f"SM-{r.choice('ASGFM')}{r.randrange(100, 999)}{r.choice('BUNW')}"
    return f"iPhone{r.randrange(12, 17)},{r.randrange(1, 9)}"


def _build(r: random.Random) -> str:
    return f"{r.randrange(4, 9)}.{r.randrange(0, 20)}.{r.randrange(0, 9)} ({r.randrange(1000, 9999)})"


_app = _pick(APPS)
_feature = _pick(FEATURES)
_crash = _pick(CRASHES)
_release = _pick(RELEASES)

KINDS: tuple[ReleaseKind, ...] = (
    ReleaseKind(
        "mr_bundle_id", _app, lambda r, s: f"com.{r.choice(_ORGS)}.{r.choice(_WORDS)}",
        (("tool", "plist", "\t<key>CFBundleIdentifier</key><string>{v}</string> <!-- {s} App Store target -->"),
         ("tool", "fastlane", "[fastlane] gym: {s} -> PRODUCT_BUNDLE_IDENTIFIER={v}"),
         ("user", "chat", "{s} iOS 번들 ID는 {v} 로 갑니다, 스토어에 이미 등록돼 있어요"),
         ("assistant", "prose", "O bundle id do {s} ficou {v}, o mesmo que está no App Store Connect.")),
        ("What is the iOS bundle identifier of {s}?", "Which reverse-domain string does App Store Connect know {s} by?",
         "{s} iOS 번들 ID가 뭐예요?"),
        pattern=r"\bcom\.[a-z]+\.[a-z]+\b", family=APPS),
    ReleaseKind(
        "mr_build_number", _app, lambda r, s: _build(r),
        (("tool", "changelog", "## {s} {v} — What to Test"),
         ("tool", "fastlane", "[fastlane] pilot: {s} build {v} finished processing, distributing to External"),
         ("user", "chat", "uploaded {s} {v} to TestFlight, processing now"),
         ("assistant", "prose", "A build {v} do {s} já passou no processamento do TestFlight, pode avisar o time.")),
        ("Which build of {s} is in TestFlight?", "What version and build should testers of {s} install right now?",
         "Qual build do {s} está no TestFlight agora?"),
        pattern=r"\b\d+\.\d+\.\d+ \(\d{4}\)",
        update=("{s}: {old} expired in TestFlight, testers are on {v} now",
                "{s} 빌드 {old} 는 내렸고 지금 테스터들은 {v} 받고 있어요"),
        ask_before=("Which build of {s} was in TestFlight before the current one?",
                    "What did testers of {s} install before the latest upload?",
                    "Qual build do {s} estava no TestFlight antes?"),
        family=APPS),
    ReleaseKind(
        "mr_version_code", _app, lambda r, s: str(r.randrange(10_000_000, 99_999_999)),
        (("tool", "diff", "+        versionCode = {v} // {s} Play upload"),
         ("tool", "console", "Play Console · {s} · Internal testing · versionCode {v} · Available to testers"),
         ("tool", "manifest", '<manifest android:versionCode="{v}" tools:ignore="GradleOverrides"> <!-- merged manifest of {s} -->'),
         ("user", "chat", "o versionCode do {s} no Play agora é {v}, não esquece de subir no próximo bundle")),
        ("What is the Android versionCode of {s}?", "Which integer does Play Console show for the newest {s} upload?",
         "{s} 안드로이드 versionCode 는 몇이에요?"),
        pattern=r"(?<![\d.])\d{8}(?![\d.])",
        update=("bumped {s} versionCode {old} -> {v}, Play rejected the duplicate",
                "{s} versionCode 를 {old} 에서 {v} 로 올렸어요"),
        ask_before=("What was the Android versionCode of {s} before the bump?",
                    "Which integer did Play Console show for the earlier {s} upload?",
                    "{s} versionCode 는 올리기 전에 몇이었어요?"),
        family=APPS),
    ReleaseKind(
        "mr_keystore_alias", _app, lambda r, s: f"upload-{r.choice(_WORDS)}-{r.randrange(10, 99)}",
        (("tool", "workflow", "          ANDROID_KEY_ALIAS: {v}   # {s} upload key"),
         ("tool", "diff", '+            keyAlias = "{v}" // signingConfigs.release of {s}'),
         ("assistant", "prose", "{s} 릴리스 서명은 키스토어 alias {v} 를 씁니다."),
         ("user", "chat", "correction to what I wrote above: {s} signs with {v}, the other alias is the debug one")),
        ("Which keystore alias signs {s} releases?", "What name do I hand jarsigner for the {s} upload key?",
         "Qual alias da keystore assina o {s}?"),
        pattern=r"\bupload-[a-z]+-\d{2}\b", family=APPS),
    ReleaseKind(
        "mr_sha1", _app, lambda r, s: _hexpairs(r),
        (("tool", "log", "{s} upload certificate  SHA1: {v}"),
         ("tool", "email", "> Could you register {s} with SHA-1 {v} in the Maps console before Friday?"),
         ("user", "chat", "o SHA-1 que o Google pediu pro {s} é {v}")),
        ("What is the SHA-1 fingerprint of the {s} signing certificate?",
         "Which colon-separated hex string identifies the {s} upload key to Google?",
         "{s} 서명 인증서 SHA-1 값이 뭐죠?"),
        pattern=r"\b(?:[0-9A-F]{2}:){19}[0-9A-F]{2}\b", family=APPS),
    ReleaseKind(
        "mr_crash_free", _app, lambda r, s: f"{r.randrange(96, 100)}.{r.randrange(10, 100)}%",
        (("tool", "json", '    "{s}": {\n      "window": "7d",\n      "stability": {\n        "crash_free_users": "{v}", "slug": "{sl}"\n      }\n    }'),
         ("tool", "checklist", "| Crash-free users ({s}, 7 days) | {v} | above the gate |"),
         ("assistant", "prose", "Crashlytics puts {s} at {v} crash-free users over the last seven days.")),
        ("What is the crash-free users rate of {s}?", "How stable is {s} for its users this week, as a percentage?",
         "{s} 크래시 프리 비율이 얼마예요?"),
        pattern=r"\b9\d\.\d{2}%",
        update=("{s} recovered after the hotfix: crash-free went from {old} to {v}",
                "o crash-free do {s} saiu de {old} e agora está em {v}"),
        ask_before=("What was the crash-free users rate of {s} before the latest figure?",
                    "How stable was {s} for its users earlier, as a percentage?",
                    "{s} 크래시 프리 비율이 전에는 얼마였어요?"),
        family=APPS),
    ReleaseKind(
        "mr_api_base", _app, lambda r, s: f"https://api-{r.choice(_WORDS)}.{r.choice(_ORGS)}.app/v{r.randrange(1, 6)}",
        (("tool", "plist", "\t<key>API_BASE_URL</key><string>{v}</string> <!-- {s} Release.xcconfig -->"),
         ("tool", "json", '    "{s}": {\n      "network": {\n        "api_base_url": "{v}", "slug": "{sl}",\n        "timeout_s": 20\n      }\n    }'),
         ("user", "chat", "{s} 운영 API 주소는 {v} 예요")),
        ("What is the API base URL of {s}?", "Which host does the {s} app send its network calls to?",
         "Qual é a URL base da API do {s}?"),
        pattern=r"https://api-[a-z]+\.[a-z]+\.app/v\d\b",
        update=("{s} is on the new gateway: {old} is read-only, the app talks to {v} now",),
        ask_before=("What was the API base URL of {s} before the gateway move?",
                    "Which host did the {s} app call earlier?", "Qual era a URL base da API do {s} antes?"),
        family=APPS),
    ReleaseKind(
        "mr_release_captain", _app, lambda r, s: "@" + r.choice(_NAMES),
        (("user", "chat", "release captain for {s} this cycle is {v}, ping them for the go/no-go"),
         ("tool", "checklist", "| {s} | Release captain | {v} | signs off the submission |"),
         ("assistant", "prose", "Quem conduz o release do {s} é {v}, ele que aperta o botão.")),
        ("Who is the release captain of {s}?", "Whom do I ask for the go/no-go on {s}?", "{s} 릴리스 캡틴은 누구예요?"),
        pattern=r"@[a-z]+\.[a-z]+\b",
        update=("{s} handover: {old} is off this sprint, {v} runs the release",
                "{s} 릴리스는 {old} 대신 이제 {v} 가 맡아요"),
        ask_before=("Who was the release captain of {s} before the handover?",
                    "Whom did we ask for the go/no-go on {s} earlier?", "{s} 릴리스 캡틴은 전에 누구였어요?"),
        family=APPS),
    ReleaseKind(
        "mr_profile", _app,
        lambda r, s: f"{r.choice(_WORDS).capitalize()}_{r.choice(('AppStore', 'AdHoc'))}_{r.randrange(24, 28)}{r.choice('abcd')}",
        (("tool", "diff", "+\t\t\t\tPROVISIONING_PROFILE_SPECIFIER = {v}; /* {s} Release */"),
         ("tool", "workflow", '          PROFILE_NAME: "{v}"   # {s}'),
         ("assistant", "prose", "{s} 배포용 프로비저닝 프로파일 이름은 {v} 입니다.")),
        ("Which provisioning profile signs {s} for the App Store?",
         "What is the name of the Apple signing file Xcode needs to ship {s}?",
         "Qual provisioning profile assina o {s} pra App Store?"),
        pattern=r"\b[A-Z][a-z]+_(?:AppStore|AdHoc)_\d{2}[a-d]\b", family=APPS),
    ReleaseKind(
        "mr_cert_expiry", _app, lambda r, s: f"{r.randrange(2027, 2030)}-{r.randrange(1, 13):02d}-{r.randrange(1, 29):02d}",
        (("tool", "log", "notAfter={v} (Apple Push Services: {s})"),
         ("tool", "email", "> the APNs certificate for {s} runs out on {v}; renew it two weeks ahead, please"),
         ("user", "chat", "o certificado de push do {s} vence em {v}, alguém põe no calendário")),
        ("When does the push certificate of {s} expire?", "By what date must someone renew the APNs credential for {s}?",
         "{s} 푸시 인증서 만료일이 언제예요?"),
        pattern=r"\b202[7-9]-\d\d-\d\d\b", family=APPS),
    ReleaseKind(
        "mr_flag_key", _feature, lambda r, s: f"{r.choice(('ff', 'rc', 'ld'))}_{r.choice(_WORDS)}_{r.choice(_WORDS)}",
        (("tool", "json", '    "{s}": {\n      "kind": "boolean",\n      "key": "{v}", "slug": "{sl}",\n      "on": false\n    }'),
         ("tool", "diff", '+    if (flags.isEnabled("{v}")) {  // {s}'),
         ("user", "chat", "{s} 플래그 키는 {v} 이에요, LaunchDarkly 에서 검색하면 나와요"),
         ("assistant", "prose", "{s} sits behind {v} in LaunchDarkly, off by default.")),
        ("What is the feature-flag key for {s}?", "Which toggle name do I search for in LaunchDarkly to control {s}?",
         "Qual é a chave da flag de {s}?"),
        pattern=r"\b(?:ff|rc|ld)_[a-z]+_[a-z]+\b", family=FEATURES),
    ReleaseKind(
        "mr_rollout", _feature, lambda r, s: f"{r.randrange(1, 60)}.{r.randrange(1, 10)}%",
        (("tool", "json", '    "{s}": {\n      "targeting": {\n        "rollout": {"percentage": "{v}", "bucketBy": "userId", "slug": "{sl}"}\n      }\n    }'),
         ("tool", "checklist", "| {s} | staged rollout | {v} | hold if crash-free drops |"),
         ("user", "chat", "{s} tá liberado pra {v} dos usuários")),
        ("What rollout percentage is {s} at?", "What share of users sees {s} right now?", "{s} 롤아웃 비율이 지금 몇 퍼센트예요?"),
        pattern=r"\b\d{1,2}\.\d%",
        update=("widened {s} from {old} to {v} of users, dashboards look clean",
                "{s} 롤아웃을 {old} 에서 {v} 로 넓혔습니다"),
        ask_before=("What rollout percentage was {s} at before the last change?", "What share of users saw {s} earlier?",
                    "{s} 롤아웃 비율이 전에는 몇 퍼센트였어요?"),
        family=FEATURES),
    ReleaseKind(
        "mr_deep_link", _feature, lambda r, s: f"{r.choice(_WORDS)}app://{r.choice(_WORDS)}/{r.choice(_WORDS)}",
        (("tool", "logcat", "12-02 09:14:33.120  4410  4410 I DeepLinkRouter: {s} opened from {v}"),
         ("tool", "email", "> The QR codes for {s} on the posters encode {v}, please keep it working."),
         ("tool", "manifest", '    <!-- {s}: the posters open {v} --> <data android:scheme="https" android:host="links" />'),
         ("user", "chat", "{s} 딥링크는 {v} 로 열어야 해요")),
        ("Which deep link opens {s}?", "What URL do the posters use to jump straight into {s}?", "Qual deep link abre {s}?"),
        pattern=r"\b[a-z]+app://\S+", family=FEATURES),
    ReleaseKind(
        "mr_sentry_issue", _crash,
        lambda r, s: f"{r.choice(('WALLET', 'LEDGER', 'PULSE'))}-{r.choice(('IOS', 'ANDROID'))}-{_base36(r, 3)}",
        (("tool", "crash", "Sentry {v} · Fatal Exception: java.lang.IllegalStateException · culprit {sl}\n"
                           "    at io.mobile.core.{s}(Core.kt:214)\n    at kotlinx.coroutines.DispatchedTask.run(DispatchedTask.kt:108)"),
         ("user", "chat", "Sentry grouped the {s} crash as {v}, a few hundred users so far"),
         ("assistant", "prose", "O crash em {s} é o issue {v} no Sentry.")),
        ("Which Sentry issue tracks the crash in {s}?", "Under what id did our error tracker group the {s} failure?",
         "{s} 크래시는 Sentry 이슈 번호가 뭐예요?"),
        pattern=r"\b[A-Z]+-(?:IOS|ANDROID)-[0-9A-Z]{3}\b", family=CRASHES),
    ReleaseKind(
        "mr_crash_device", _crash, lambda r, s: _device(r),
        (("tool", "crash", "device: {v} · os: Android 14 · top frame: {s}"),
         ("tool", "logcat", "12-02 10:02:51.004  7731  7731 E AndroidRuntime: FATAL EXCEPTION in {s} on {v}"),
         ("user", "chat", "{s} 크래시는 거의 다 {v} 에서만 나요")),
        ("Which device model does the {s} crash happen on?", "What handset should QA grab to reproduce the {s} failure?",
         "Em qual aparelho acontece o crash de {s}?"),
        pattern=r"\b(?:SM-[A-Z]\d{3}[A-Z]|iPhone\d{2},\d)\b", family=CRASHES),
    ReleaseKind(
        "mr_rejection", _release, lambda r, s: r.choice(_GUIDELINES),
        (("tool", "review", "Resolution Center · {s} submission · Guideline {v} - the reviewer attached two screenshots"),
         ("tool", "email", "> A Apple recusou o {s} de novo pela diretriz {v}, igual ao semestre passado."),
         ("user", "chat", "App Review bounced {s} citing {v}, same as last spring")),
        ("Which App Review guideline was the {s} release rejected under?",
         "What rule number did Apple quote when it bounced {s}?", "{s} 릴리스는 어떤 가이드라인으로 리젝됐어요?"),
        pattern=r"(?<![\w.])[1-5]\.\d(?:\.\d{1,2})?(?:\([a-z]+\))?(?![\w.])", family=RELEASES),
    ReleaseKind(
        "mr_release_ticket", _release, lambda r, s: f"{r.choice(('MOB', 'RLS', 'APPX'))}-{r.randrange(1000, 9999)}",
        (("tool", "checklist", "| {s} | Jira | {v} | go/no-go Thursday |"),
         ("user", "chat", "{s} 릴리스 티켓은 {v} 입니다"),
         ("tool", "workflow", "      RELEASE_TICKET: {v}   # {s} train"),
         ("user", "chat", "ignore the link I pasted this morning, the one for {s} is {v}")),
        ("Which Jira ticket tracks the {s} release?", "Where do we record the go/no-go for {s}?",
         "Qual ticket do Jira acompanha o release {s}?"),
        pattern=r"\b(?:MOB|RLS|APPX)-\d{4}\b", family=RELEASES),
    ReleaseKind(
        "mr_toolchain_pin", _pick(PINS), lambda r, s: _PIN_VERSIONS[s](r),
        (("tool", "diff", '+{s} = "{v}"   # libs.versions.toml'),
         ("tool", "workflow", "          # {s} pinned to {v} on the macOS runners"),
         ("user", "chat", "vamos segurar o {s} em {v} até a próxima release estabilizar")),
        ("Which version of {s} are we pinned to?", "What {s} release must the build machines stay on?",
         "{s} 버전은 몇으로 고정돼 있어요?"),
        update=("bumped {s} {old} -> {v} in libs.versions.toml, CI is green", "{s} 를 {old} 에서 {v} 로 올렸어요, CI 통과"),
        ask_before=("Which version of {s} were we pinned to before the bump?",
                    "What {s} release did the build machines use earlier?", "{s} 버전은 올리기 전에 몇이었어요?"),
        family=PINS),
    ReleaseKind(
        "mr_decision", _pick(TOPICS), lambda r, s: r.choice(_OPTIONS),
        (("user", "chat", "for {s} we're going with {v} — {why}"),
         ("assistant", "prose", "Para {s} ficou decidido: {v}, porque {why}."),
         ("assistant", "prose", "{s} 는 {v} 로 정했어요. 이유: {why}.")),
        ("What did we decide for {s}, and why?", "Which option won for {s} and what was the argument?",
         "{s} 는 뭘로 정했고 이유가 뭐였어요?"),
        family=TOPICS, why=lambda r: r.choice(_REASONS)),
)

#: Sets gathered one value per session: (kind, value maker, said templates, questions); ``{t}`` the topic.
AGGREGATES: tuple[Aggregate, ...] = (
    ("mr_locale_set", lambda r: r.choice(("ko-KR", "pt-BR", "es-MX", "fr-CA", "de-AT", "ja-JP", "it-IT", "nl-BE",
                                          "sv-SE", "pl-PL", "tr-TR", "vi-VN")),
     (("user", "chat", "added the {v} strings for {t}, translators signed off"),
      ("assistant", "prose", "Mais um idioma pro {t}: {v} já está no catálogo de strings."),
      ("tool", "diff", "+    <locale>{v}</locale>  <!-- {t} -->")),
     ("Which locales did we add for {t}?", "List every language we shipped strings in while doing {t}.",
      "{t} 작업하면서 추가한 로케일이 뭐예요?")),
    ("mr_bug_set", lambda r: f"MQA-{r.randrange(100, 999)}",
     (("user", "chat", "filed {v} for {t}, repro steps in the ticket"),
      ("assistant", "prose", "{t} 관련 버그 {v} 도 등록했어요."),
      ("tool", "checklist", "| {t} | bug | {v} | open |")),
     ("Which bugs did QA file for {t}?", "List everything testers reported while we worked on {t}.",
      "Quais bugs a QA abriu pra {t}?")),
)
#: What the sets are about.
SET_TOPICS = ("the accessibility pass", "the tablet layout work", "the Black Friday build", "the SDK 35 migration",
              "the onboarding redesign")

#: Two events in different sessions: an expedited review asked for one release, a hotfix branch cut for another.
ORDER_EVENTS: tuple[OrderEvent, ...] = (
    (lambda r: f"EXP-{_base36(r, 5)}", ("user", "chat", "asked Apple for an expedited review of {s}, request {v}")),
    (lambda r: f"hotfix/{r.choice(_WORDS)}-{r.randrange(100, 999)}",
     ("assistant", "prose", "Cut {v} for the {s} hotfix from the release tag.")),
)
ORDER_QUESTIONS = ("Which came first: the expedited review request for {a} or the hotfix branch cut for {b}?",
                   "Did we ask Apple to hurry {a} before or after {b} got its emergency branch?",
                   "{a} 긴급 심사 요청과 {b} 핫픽스 브랜치 생성 중 뭐가 먼저였어요?")


def noise_statement(rng: random.Random) -> str:
    """A fact-shaped remark about nothing asked (no subject, no value of a planted shape)."""
    n = rng.randrange(3, 60)
    return rng.choice((
        f"the archive step on the Mac runner took {n} minutes again",
        f"Gradle build cache hit rate was {n} percent on the last CI run",
        f"{n} reviews mention the login screen since Monday",
        f"빌드 큐에 {n}개 잡이 밀려 있어요",
        f"o pipeline de Android ficou {n} minutos na fila hoje, tá lento",
        f"screenshot job produced {n * 4} images, two were blank",
        f"Play pre-launch report flagged {n} accessibility warnings, none blocking",
    ))
