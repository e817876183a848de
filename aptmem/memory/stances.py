"""Statements whose value is the statement itself: a preference ("we always squash-merge") and a decision
with its reason ("going with Redis streams because we already run Redis").

:func:`stance` names which a sentence is, by its structure: a preference word, or a decision word (a verb of
choosing, a noun that names what a meeting settled) beside a reason (a causal word, or the explanation a colon or
a dash sets after the choice), in English, Chinese, Japanese, Korean, German, Spanish, French and (preferences)
Portuguese.
"""

from __future__ import annotations

import re

__all__ = ["stance"]

_PREFERENCE = re.compile(
    r"\b(?:i|we) (?:prefer|like to|want|always|never)\b|\bplease (?:always|never|use|don't|do not|avoid|keep)\b"
    r"|\b(?:always|never) (?:use|run|commit|push|write|add|put)\b|\bdon't (?:ever )?(?:use|run|commit|push)\b"
    r"|\b(?:stick|stay) (?:with|to)\b|\b(?:only|just) use\b|\buse only\b|\bnothing (?:else|but)\b|\bmy (?:preference|choice)\b"
    r"|\b(?:our|the team's) (?:convention|standard|default) is\b|\bstandardi[sz]e on\b|\bgo-to\b"
    r"|\b(?:i|we)'d (?:rather|prefer)\b|\b(?:i|we) would (?:rather|prefer)\b"
    r"|我(?:更)?(?:喜欢|偏好|希望|习惯)|请(?:总是|始终|不要|务必|使用|用)|不要(?:使用|用)|一律|坚持用|只用|统一用|别用"
    # German, Spanish, French and Portuguese: I/we prefer, please always/never, always/never use
    r"|\b(?:ich bevorzuge|wir bevorzugen|bitte (?:immer|nie|niemals|nur)|immer (?:verwenden|benutzen|nehmen)|nie(?:mals)? (?:verwenden|benutzen))\b"
    r"|\b(?:prefiero|preferimos|por favor,? (?:siempre|nunca)|siempre usa|nunca uses)\b"
    r"|\b(?:je préfère|nous préférons|on préfère|merci de toujours|merci de ne jamais|toujours utiliser|n'utilise(?:z)? jamais)\b"
    r"|\b(?:prefiro|preferimos|por favor,? (?:sempre|nunca)|sempre use|nunca use)\b"
    # Japanese and Korean: always/never ... please, a liking ("必ず英語で書いてください", "항상 영어로 써 주세요")
    r"|(?:必ず|常に|いつも)[^。！？]*(?:ください|こと|にして)|(?:が|を)好み|を希望します|(?:항상|반드시|늘)[^.!?]*(?:주세요|합시다)|선호",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decided|decide|we will|we'll|let's go with|going with|went with|chose|choose|chosen|settled(?! (?:in|down|into)\b)|finali[sz]ed|switch(?:ed)? to|"
    r"opted for|picked(?! (?:\w+ )?up\b)|won|wins|selected|adopted|agreed on|landed on|the call is|the winner is|choice|decision|"
    # what a meeting or a postmortem settled, named by its noun, and the same verbs in German, Spanish and French
    r"outcome|resolution|verdict|conclusion|agreed|beschlossen|entschieden|vereinbart|festgelegt|entscheidung|"
    r"decidimos|decidido|decidió|acordamos|acordado|elegimos|decisión|décidé|décidée|décision|retenu|choisi)\b"
    r"|决定|选择了|选定|采用|改用|定下|定了|就定|定成|定为|拍板|胜出|最终用"
    # Japanese: decided, adopted, chose ("X は Y に決めました", "採用しました", "選びました")
    r"|決め|決定|決ま|採用|選び|選択|選定|にしました"
    # Korean: decided, chose, adopted, "we'll go with" ("X 로 정했어요", "결정했습니다", "채택", "하기로 했어요")
    r"|정했|정하기로|결정|선택했|채택|하기로\s?했",
    re.IGNORECASE,
)
#: A reason: a causal word, or the explanation a colon or a dash sets after the choice ("X won: it is faster").
_REASON = re.compile(r"\b(?:because|since|so that|as it|due to|given that|to avoid|thanks to|which means|weil|denn|porque|ya que|"
                     r"puesto que|parce que|puisque)\b|[:：;；—–]\s*\S"
                     r"|因为|由于|为了|以免|以便|原因是|理由|ため[、，,]|ので|이유|때문에|위해|왜냐하면", re.IGNORECASE)


def stance(sentence: str) -> str:
    """``"preference"``, ``"decision"`` or ``""`` for a sentence."""
    if _PREFERENCE.search(sentence):
        return "preference"
    if _DECISION.search(sentence) and _REASON.search(sentence):
        return "decision"
    return ""
