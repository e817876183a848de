"""Updates that supersede their old value in shapes the fact finder was not tuned on (issue 14, k14), each on
sentences written for this file (``benchmarks/fact_probe.py`` holds more), and the near misses that must not."""

from __future__ import annotations

import pytest

from aptmem.entries import User
from aptmem.memory.facts import facts_of_entry
from aptmem.memory.kv_dict import FactRecord, merge_facts
from aptmem.memory.statements import statements


def _records(*texts: str) -> list[FactRecord]:
    records: list[FactRecord] = []
    for order, text in enumerate(texts):
        records = merge_facts(records, list(facts_of_entry(User(content=text, ts=order + 1), order)), 100)
    return records


def _holding(records: list[FactRecord], value: str) -> list[FactRecord]:
    return [r for r in records if value in r.value]


def test_a_quantity_said_as_replaced_is_the_old_setting_of_the_new_one() -> None:
    records = _records("The watchdog on the pump controller is set to 1500 ms.", "pump controller watchdog: 2500 ms (was 1500 ms)")
    [record] = _holding(records, "2500 ms")
    assert [old.value for old in record.before] == ["1500 ms"] and not _holding(records, "1500 ms")


def test_a_measured_quantity_beside_a_setting_is_still_no_old_value_without_a_mark() -> None:
    [fact] = [f for f in facts_of_entry(User(content="pump controller watchdog: 2500 ms, the last reset took 1500 ms", ts=1))
              if f.value == "2500 ms"]
    assert not fact.replaces


def test_a_key_of_several_parts_binds_its_slot_when_nothing_names_a_subject() -> None:
    records = _records("CONFIG_MAIN_STACK_SIZE=4096", "CONFIG_MAIN_STACK_SIZE=8192")
    [record] = _holding(records, "8192")
    assert [old.value for old in record.before] == ["CONFIG_MAIN_STACK_SIZE=4096"]
    assert not _holding(records, "=4096")


def test_a_one_word_key_without_a_subject_binds_no_slot() -> None:
    records = _records("listen_port: 8080 # the first proxy", "port: 8080", "port: 9090")
    assert _holding(records, "9090") and _holding(records, "8080")
    assert all(not r.before for r in records)  # "port" is said of many things: two values, not an update


def test_an_update_naming_as_a_word_the_subject_the_old_statement_found_supersedes_it() -> None:
    records = _records("The toolchain for osprey is pinned to gcc-arm 12.3.rel1.", "osprey toolchain bumped to gcc-arm 13.2.rel1")
    [record] = _holding(records, "13.2.rel1")
    assert [old.value for old in record.before] == ["12.3.rel1"]


def test_an_update_of_one_subject_does_not_take_another_subjects_slot() -> None:
    records = _records("The toolchain for heron is pinned to gcc-arm 12.3.rel1.", "osprey toolchain bumped to gcc-arm 13.2.rel1")
    assert _holding(records, "12.3.rel1") and all(not r.before for r in records)


@pytest.mark.parametrize(("old", "new"), [
    ("mistral の認証トークンは tok_88af21c です。", "mistral の認証トークンは tok_91bb07e に変更しました。"),
    ("mistral 인증 토큰은 tok_88af21c 입니다.", "mistral 인증 토큰을 tok_91bb07e 로 변경했습니다."),
    ("O token do mistral é tok_88af21c.", "O token do mistral agora é tok_91bb07e."),
    ("Das Token von mistral ist tok_88af21c.", "Das Token von mistral wurde auf tok_91bb07e aktualisiert."),
])
def test_change_cues_of_other_languages_make_an_update(old: str, new: str) -> None:
    records = _records(old, new)
    [record] = _holding(records, "tok_91bb07e")
    assert [b.value for b in record.before] == ["tok_88af21c"] and not _holding(records, "tok_88af21c")


def test_a_csv_row_whose_cells_read_as_names_is_a_row_not_a_new_header() -> None:
    said = [s.text for s in statements("part,value,package,supplier\nR17,4.7k,0402,Yageo\nU3,STM32G474,LQFP64,ST")]
    assert any(t.startswith("U3 value: STM32G474") for t in said)  # (a row of plain words is one statement of them all)
    # after a blank line, a line of names starts a block of its own
    said = [s.text for s in statements("part,value,package\nR17,4.7k,0402\n\nU3,STM32G474,LQFP64\nC1,100n,0603")]
    assert "C1 STM32G474: 100n" in said


@pytest.mark.parametrize(("text", "value"), [
    ("ボーレートは115200です。", "115200"),  # katakana words are content words; a short Japanese line is prose
    ("タイムアウトは45sです。", "45s"),
    ("ビルドサーバーはbuild-07.labです。", "build-07.lab"),
    ("tessera 포트는 8443입니다.", "8443"),  # (a Latin word is its content word: it was found at main too)
])
def test_a_japanese_statement_binds_its_value_to_its_katakana_words(text: str, value: str) -> None:
    [fact] = [f for f in facts_of_entry(User(content=text, ts=1)) if f.value == value]
    assert fact.anchors


def test_two_statements_of_one_katakana_attribute_are_one_slot() -> None:
    records = _records("ボーレートは115200です。", "ボーレートは921600に変更しました。")
    [record] = _holding(records, "921600")
    assert [b.value for b in record.before] == ["115200"]


@pytest.mark.parametrize(("text", "value"), [
    ("The I2C bus of heron is clocked at 400 kHz.", "400 kHz"),
    ("set the CAN bitrate of heron to 500 kbit/s", "500 kbit/s"),
    ("heron current limit: 500mA", "500mA"),
    ("Die Versorgungsspannung von heron beträgt 3.3 V.", "3.3 V"),
])
def test_physical_quantities_a_setting_is_given_in_are_amounts(text: str, value: str) -> None:
    assert value in [f.value for f in facts_of_entry(User(content=text, ts=1))]


def test_a_kv_dict_record_leaves_out_a_pasted_chat_lines_clock_and_keeps_its_speaker() -> None:
    text = "[08:49] dana: the bucket of quillmate is s3://qm-a/nightly/"
    [record] = _holding(_records(text), "s3://qm-a/nightly/")
    assert record.text == "dana: the bucket of quillmate is s3://qm-a/nightly/"


def test_a_short_c_literal_is_a_value_only_where_a_key_binds_it() -> None:
    assert "0x3c" in [f.value for f in facts_of_entry(User(content='{"device":"osprey","i2c_address":"0x3c"}', ts=1))]
    assert "0x3c" in [f.value for f in facts_of_entry(User(content="The i2c address of the osprey display is 0x3c.", ts=1))]
    assert "0x3c" not in [f.value for f in facts_of_entry(User(content="osprey wrote 0x3c bytes at step 2 of the flash", ts=1))]


def test_a_two_column_settings_sheet_sets_its_values_rather_than_reporting_them() -> None:
    table = "| setting | value |\n|---|---|\n| sample rate | 48 kHz |\n| uart baud | 115200 |"
    found = {f.value: f.attribute for f in facts_of_entry(User(content=table, ts=1))}
    assert found.get("48 kHz") == "rate" and "115200" in found


@pytest.mark.parametrize(("text", "value"), [
    ("Flash the bootloader of heron at offset 0x8000.", "0x8000"),
    ("La tension d'alimentation de heron est de 3,3 V.", "3,3 V"),
])
def test_a_c_literal_after_its_noun_and_a_decimal_comma_are_values(text: str, value: str) -> None:
    assert value in [f.value for f in facts_of_entry(User(content=text, ts=1))]


def test_a_snippet_cut_after_a_changes_old_value_goes_on_to_the_new_one() -> None:
    from aptmem.memory.facts import snippet

    text = "[10:11] nadia: We raised the lag alarm of carts.abandoned.v1 from 757,820 to 247,561 messages after the review."
    for fact in facts_of_entry(User(content=text, ts=1)):
        said = snippet(fact)
        assert "757,820" not in said or "247,561" in said, said  # the old value never shown as the news alone


@pytest.mark.parametrize("text", [
    "Ich bevorzuge kurze Commit-Nachrichten auf Englisch.",
    "Merci de toujours joindre le journal complet.",
    "Por favor, sempre anexe o log completo.",
    "Prefiero los PR pequeños y con un solo tema.",
    "コミットメッセージは必ず英語で書いてください。",
    "커밋 메시지는 항상 영어로 써 주세요.",
])
def test_preferences_in_other_languages_are_kept_whole(text: str) -> None:
    assert [f.shape for f in facts_of_entry(User(content=text, ts=1))] == ["preference"]


def test_a_request_or_a_polite_limit_is_no_preference() -> None:
    assert not [f for f in facts_of_entry(User(content="ログを見てください。", ts=1)) if f.shape == "preference"]
    budget = "Le budget mensuel de load_courier_pings est plafonné à $1,671, merci de ne pas le dépasser."
    assert "$1,671" in [f.value for f in facts_of_entry(User(content=budget, ts=1))]


@pytest.mark.parametrize("text", ["Die Umgebungsvariable HERON_LOG_LEVEL steht auf debug.", "環境変数HERON_LOG_LEVELはdebugに設定しています。"])
def test_a_word_a_setting_is_set_to_in_german_or_japanese_is_its_value(text: str) -> None:
    assert "debug" in [f.value for f in facts_of_entry(User(content=text, ts=1))]
