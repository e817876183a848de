"""The workload generators of the memory-quality measurement (``workload.generator``), by name.

``planted`` (:mod:`.workload`) is the workload the strategies were developed on (with its dev and
held-out phrasings); ``independent`` (:mod:`.independent`) writes sessions apart from that tuning,
for a check on data written differently; ``fieldnotes`` (:mod:`.fieldnotes`), a third style with
other kinds, written before the fact finder was widened, held out in phase 3 and tuned on in
phase 4; ``tracker``
(:mod:`.tracker`), a fourth (an issue tracker and a chat-ops channel), written before the fact
finder was made general in phase 4 and never tuned on by its rows, but no longer clean: the value
shapes its plants lack were named in a closing note, and phase 5's widening covered them; ``pairing`` (:mod:`.pairing`), a fifth (a
coding pair's diffs, build and deploy files, CI logs and bilingual chat, with every item type),
written blind in phase 5 (without reading the fact finder or the strategies, none run on it while
it was written): held out in phase 5, then a development set in phase 6 (the fact finder was
developed on its misses); ``oncall`` (:mod:`.oncall`), a sixth (an on-call
engineer's incident shifts: the pasted incident channel, kubectl, PromQL, Alertmanager and
PagerDuty JSON, runbooks, the postmortem's email thread and action-item sheet, in English,
German, Spanish and Chinese, with every item type), written blind in phase 6 (the same rules as
``pairing``): held out, never tuned on; ``dataplatform`` (:mod:`.dataplatform`), a seventh (a data
platform team's days: dbt and Airflow logs, model SQL, Terraform plans, a Jira CSV export, pasted
Slack threads, a Confluence runbook, warehouse YAML, Kafka consumer groups, email and NDJSON, in
English, Japanese and French, with every item type), written blind in phase 9 (without reading the
fact finder, the recall code or the strategies; only ``none`` and ``full_history`` run on it while
it was written): held out in phase 9, a development set from phase 10; ``mobilerelease``
(:mod:`.mobilerelease`), an eighth (a mobile team's release days: fastlane and Gradle output, diffs,
Info.plist, a release workflow and checklist, nested Remote Config JSON, Sentry crashes, logcat,
App Store review notes and partners' email, in English, Korean and Brazilian Portuguese, with every
item type), written blind in phase 10 (the same rules as ``dataplatform``): held out in phase 10, a
development set from phase 11; ``gamestudio`` (:mod:`.gamestudio`), a ninth (a game studio's days:
Unreal and Unity build logs, Perforce changelists and shelves, crash triage with symbolicated
stacks, shader-compile output, a level designer's notes, a Jenkins pipeline, a minified JSON asset
manifest, INI CVars, a QA bug sheet pasted as TSV, Discord chat and a platform-certification
email, in English, French and Simplified Chinese, with every item type), written blind in phase 11
(the same rules as ``dataplatform``): held out for that phase's first figures, a development set
after; ``firmware`` (:mod:`.firmware`), a tenth (an embedded firmware team's days: a UART boot log,
Yocto bitbake and Zephyr west output, devicetree fragments, Kconfig/defconfig lines, a CAN candump,
an OpenOCD session, a BOM exported as CSV, a bring-up checklist in Markdown, a contract
manufacturer's RMA email, a minified JSON OTA manifest, datasheet excerpts and Mattermost chat, in
English, German and Japanese, with every item type), written blind in phase 11 (the same rules as
``dataplatform``): held out, never tuned on; ``genomics`` (:mod:`.genomics`), an eleventh (a genomics core
facility's days: Nextflow and Snakemake run logs, a bcl-convert samplesheet, SLURM sacct tables, a conda
environment YAML, a minified MultiQC JSON, R sessionInfo and Jupyter cell output, an ELN page in Markdown, a LIMS
export as TSV, NovaSeq RunInfo.xml and RunParameters fragments, a PI's email thread and Zulip chat, in English,
Russian and Italian, with every item type), written blind in phase 12 on :mod:`.dayworld`'s skeleton (the same
rules as ``dataplatform``): held out, never tuned on. Each builds one seed's sessions and items.
"""

from __future__ import annotations

from collections.abc import Callable

from experiments.measurements.memory_quality.dataplatform import build_dataplatform
from experiments.measurements.memory_quality.fieldnotes import build_fieldnotes
from experiments.measurements.memory_quality.firmware import build_firmware
from experiments.measurements.memory_quality.gamestudio import build_gamestudio
from experiments.measurements.memory_quality.genomics import build_genomics
from experiments.measurements.memory_quality.independent import build_independent
from experiments.measurements.memory_quality.mobilerelease import build_mobilerelease
from experiments.measurements.memory_quality.oncall import build_oncall
from experiments.measurements.memory_quality.pairing import build_pairing
from experiments.measurements.memory_quality.tracker import build_tracker
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape, build_workload

__all__ = ["GENERATORS"]

GENERATORS: dict[str, Callable[[WorkloadShape, int], Workload]] = {"planted": build_workload, "independent": build_independent,
                                                                "fieldnotes": build_fieldnotes, "tracker": build_tracker,
                                                                "pairing": build_pairing, "oncall": build_oncall,
                                                                "dataplatform": build_dataplatform,
                                                                "mobilerelease": build_mobilerelease,
                                                                "gamestudio": build_gamestudio,
                                                                "firmware": build_firmware,
                                                                "genomics": build_genomics}
