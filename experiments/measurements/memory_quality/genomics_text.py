"""What the genomics workload plants and how it asks: a sequencing core facility's kinds of facts, in three languages.

A :class:`~.dayworld.DayKind` is one relation of the facility's days (a library's i7 index, a project's
cost centre, a pipeline's pinned release, a run's share of bases at Q30, ...): the family of
subjects it is said of, how a value is drawn, the statements that carry it (carrier, format,
template), how an update of it reads, and its question in three wordings (the template, an English
paraphrase without the relation's words, Russian or Italian).

Templates are filled by :func:`fill` (``{s}`` the subject, ``{v}`` the value, ``{old}`` the value an
update replaces, ``{why}`` a decision's reason) with plain replacement, so a template may hold the
braces of JSON or of a Nextflow config. Some templates put the value on a line of its own below a
line naming the subject (an ELN heading or front matter, a RunParameters element, a Nextflow options
block, a Snakemake rule): the value's own line does not name the subject, its block does.

Subjects, values and remarks are drawn from pools that the filler (:mod:`.genomics_filler`) never
uses, so an answer found is never chance.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from experiments.measurements.memory_quality.dayworld import Aggregate, DayKind, OrderEvent

__all__ = ["AGGREGATES", "CHOICES", "COHORTS", "KINDS", "LIKED", "ORDER_EVENTS", "ORDER_QUESTIONS", "PIPELINES",
           "PREFERENCES", "PROJECTS", "RUNS", "SAMPLES", "SET_TOPICS", "TOPICS", "fill", "language_of", "noise_statement"]

# --- subjects: the facility's samples, projects, pipelines, runs, open questions --------------------------------

SAMPLES = ("MRC5_KO2", "HEK_D14", "ORG-CRC07", "TIL_B3", "LIV-F21", "PBMC_D09", "iPSC-L4", "NSC_R12", "CLL_041",
           "AML_066", "ESC-W2", "FIB_P8", "MEL-330", "BRCA_T17")
PROJECTS = ("ATAC-Marchetti", "scRNA-Orlova", "WGS-Brambilla", "ChIP-Sokolova", "Methyl-Ferraro", "Spatial-Kuznetsov",
            "LongRead-Rinaldi", "CRISPR-Zaitsev", "Ribo-DeLuca", "HiC-Petrova")
PIPELINES = ("nf-core/rnaseq", "nf-core/sarek", "nf-core/atacseq", "nf-core/methylseq", "nf-core/scrnaseq",
             "nf-core/chipseq", "nf-core/ampliseq", "nf-core/hic", "nf-core/cutandrun", "nf-core/rnavar")
RUNS = ("260112_A00871_0419_AHWKYCDSXC", "260114_A00871_0420_BHWLT2DSXC", "260119_LH00388_0057_A22FKJ3LT4",
        "260121_A01902_0133_AHMV7KDRX5", "260126_LH00388_0061_B22GGN7LT4", "260128_A01902_0136_BHNC5WDRX5",
        "260202_A00871_0428_AHY3J2DSXD", "260204_LH00388_0066_A22HWYTLT4")
#: what the team decides, and the options each decision is between
CHOICES = {"adapter trimming": ("fastp", "Trim Galore", "Cutadapt 4"),
           "UMI deduplication": ("UMI-tools", "Picard MarkDuplicates", "fgbio consensus calling"),
           "aligning the bisulfite libraries": ("Bismark", "bwa-meth", "Biscuit"),
           "doublet removal": ("scDblFinder", "DoubletFinder", "Scrublet"),
           "calling somatic variants on tumour-normal pairs": ("Mutect2", "Strelka2", "VarDict"),
           "peak calling for the ATAC batch": ("MACS3", "Genrich", "HMMRATAC"),
           "aligning the exome reads": ("BWA-MEM2", "Bowtie 2", "minimap2"),
           "orchestrating new projects": ("Seqera Platform", "Snakemake profiles", "plain sbatch wrappers")}
TOPICS = tuple(CHOICES)
#: what the user has preferences about, and the ways they may want it done
PREFERENCES: dict[str, tuple[str, ...]] = {
    "QC plots in reports": ("violin plots instead of box plots", "log-scaled read-depth axes", "one panel per lane"),
    "gene identifiers in count tables": ("versioned Ensembl gene IDs", "HGNC symbols next to the IDs",
                                         "Entrez gene numbers"),
    "files we send to collaborators": ("CRAM files with the reference MD5 listed", "bgzipped VCFs with a tabix index",
                                       "tarballs with a SHA-256 manifest"),
    "committed notebooks": ("cleared cell outputs", "an HTML export beside each notebook",
                            "a pinned kernel name in the metadata"),
    "status mails to the PIs": ("a three-line summary on top", "numbers in a table, not prose",
                                "no attachments, links only")}
#: the subjects of the preferences
LIKED = tuple(PREFERENCES)
#: what the sets are gathered about, one value per day (a failed library, an opened reagent lot)
SET_TOPICS = ("pool 7 of the winter batch", "the exome pilot", "the ribodepletion rescue", "the February top-up",
              "the paediatric cohort", "the low-input trial")
#: what the two ordered events happen to (a pool loaded on the sequencer, a data hand-over)
COHORTS = ("cohort Tundra", "cohort Laguna", "cohort Vesuvio", "cohort Baikal", "cohort Dolomiti", "cohort Taiga")

_WORDS = ("alder", "birch", "comet", "dune", "ember", "fjord", "glade", "heron", "inlet", "juniper", "kestrel",
          "lichen", "moraine", "nimbus", "otter", "plover", "quartz", "ridge", "sorrel", "tamarack")
#: the staff an analysis can be assigned to: (given names, family names) that go together
_PEOPLE = ((("Ilaria", "Chiara", "Federica", "Elena"), ("Conti", "Galli", "Moretti", "Barbieri", "Fontana")),
           (("Matteo", "Lorenzo", "Tommaso"), ("Greco", "Vitale", "Marino", "Ferri")),
           (("Ksenia", "Anya", "Yulia"), ("Volkova", "Sorokina", "Belova", "Orekhova")),
           (("Pavel", "Dmitri", "Gleb"), ("Morozov", "Lebedev", "Zuev", "Kovalenko")))
#: why an option won (any decision's: the reason is drawn apart from the topic)
_REASONS = ("the PI's reviewers asked for it by name", "it halved the wall time on the test lane",
            "it runs inside the container we already validated", "the cluster admins support nothing else",
            "its output drops straight into MultiQC", "it can resume from the last finished task",
            "two collaborators already publish with it", "it is the only candidate with an active maintainer",
            "the audit wants one tool per step across projects", "its memory use fits the short partition",
            "it reproduced last year's published numbers", "the core's SOP already names it")


def _seq(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("ACGT") for _ in range(n))


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _letters(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(n))


def _person(rng: random.Random, subject: str) -> str:
    given, family = rng.choice(_PEOPLE)
    return f"{rng.choice(given)} {rng.choice(family)}"


def _kind(name: str, family: tuple[str, ...], value: Callable[[random.Random, str], str],
          said: tuple[tuple[str, str, str], ...], ask: tuple[str, str, str], *, pattern: str = "",
          update: tuple[str, ...] = (), ask_before: tuple[str, str, str] = ("", "", ""),
          why: Callable[[random.Random], str] | None = None) -> DayKind:
    """A kind said of ``family`` (its subjects are drawn from it; the kinds of one family share the tuple)."""
    return DayKind(name=name, subject=lambda r: r.choice(family), value=value, said=said, ask=ask, pattern=pattern,
                   update=update, ask_before=ask_before, family=family, why=why)


def fill(template: str, subject: str, value: str = "", old: str = "", why: str = "") -> str:
    """``template`` with its subject, value, replaced value and reason (plain replacement: JSON braces stay)."""
    return template.replace("{s}", subject).replace("{v}", value).replace("{old}", old).replace("{why}", why)


_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_WORD = re.compile(r"[^\W\d_]+")
#: words that mark Italian text and that no English template here uses
_ITALIAN = frozenset({"il", "la", "le", "lo", "gli", "è", "di", "del", "della", "dei", "delle", "dal", "sul", "sulla",
                      "su", "con", "sono", "abbiamo", "ho", "che", "alla", "nel", "nella", "va", "ora", "prima",
                      "adesso", "da", "quale", "qual", "quali", "quanti", "chi", "perché", "non", "per",
                      "dopo", "libreria", "campione", "corsa", "progetto", "quello", "questa", "questo", "usiamo",
                      "ramo", "nastro", "cartuccia", "immagine", "cartella", "vuole", "utente", "dati", "ha",
                      "preferisco", "scegliamo", "grazie", "tra", "oggi", "stata", "stato", "usata", "prodotto"})


def language_of(text: str) -> str:
    """The language of a statement or question of this workload: russian, italian or english."""
    if _CYRILLIC.search(text):
        return "russian"
    words = _WORD.findall(text.casefold())
    return "italian" if sum(w in _ITALIAN for w in set(words)) >= 2 else "english"


# --- the kinds, by family ------------------------------------------------------------------------------------------

_SAMPLE_KINDS = (
    _kind(
        "gn_i7_index", SAMPLES, lambda r, s: _seq(r, 10),
        (("tool", "samplesheet", "3,{s},{v},NNNNNNNNNN,gcf_pool"),
         ("tool", "lims", "{s}\ti7_index\t{v}\tassigned"),
         ("user", "chat", "{s} got {v} on the plate map, double-check it before loading"),
         ("assistant", "prose", "The i7 barcode assigned to {s} is {v}; nothing else in that lane shares it."),
         ("user", "chat", "Индекс i7 у {s}: {v}, проверь перед загрузкой."),
         ("tool", "eln", "### {s}\n\n- i7 (10 nt): {v}\n- adapter: UDI set B")),
        ("What is the i7 index of sample {s}?", "Which barcode sequence goes into the demultiplexing sheet for {s}?",
         "Какой индекс i7 у образца {s}?"),
        pattern=r"\b[ACGT]{10}\b"),
    _kind(
        "gn_library_conc", SAMPLES, lambda r, s: f"{r.randrange(2, 60)}.{r.randrange(10, 99)} ng/µl",
        (("tool", "lims", "{s}\tqubit_hs\t{v}\tpassed"),
         ("tool", "jupyter", "In [7]: qubit.loc[['{s}'], 'conc']\nOut[7]:\n{s}    {v}\nName: conc, dtype: object"),
         ("assistant", "prose", "Qubit puts the {s} library at {v}, enough for the pool."),
         ("user", "chat", "la libreria {s} è a {v} dopo il Qubit, va bene per il pool"),
         ("tool", "eln", "#### Library QC: {s}\n\nQubit reading {v}, Bioanalyzer peak near 420 bp")),
        ("What is the library concentration of {s}?", "How much DNA per microlitre did the {s} prep measure?",
         "Qual è la concentrazione della libreria {s}?"),
        pattern=r"\b\d+\.\d\d ng/µl",
        update=("{s} was re-quantified: {old} on Monday, {v} after the bead clean-up.",
                "Новая концентрация {s}: было {old}, теперь {v}."),
        ask_before=("What was the concentration of {s} before it was measured again?",
                    "What did the first Qubit reading of {s} say?",
                    "Какая была концентрация {s} до повторного измерения?")),
    _kind(
        "gn_tube_barcode", SAMPLES, lambda r, s: f"FR{r.randrange(10**7, 10**8)}",
        (("tool", "lims", "{s}\ttube\t{v}\treceived"),
         ("assistant", "prose", "LIMS has {s} in tube {v}; pull that one, not the backup aliquot."),
         ("user", "chat", "пробирка с {s} — {v}, она в морозилке B"),
         ("tool", "eln", "| {s} | {v} | thawed once |")),
        ("Which tube barcode holds sample {s}?", "What do I scan to find {s} in the freezer?",
         "Qual è il codice a barre della provetta del campione {s}?"),
        pattern=r"\bFR\d{8}\b"),
    _kind(
        "gn_read_pairs", SAMPLES, lambda r, s: str(r.randrange(12_000_000, 99_000_000)),
        (("tool", "multiqc", '{"report_general_stats_data":{"{s}":{"total_read_pairs":"{v}"}}}'),
         ("tool", "snakemake", "rule count_pairs:\n    input: fastq/{s}_R1.fastq.gz\n    output: stats/{s}.pairs\n"
                               "[counted] {v} read pairs passing filter"),
         ("assistant", "prose", "{s} came off the demux with {v} read pairs, above the 40M target."),
         ("user", "chat", "dopo il demultiplexing {s} ha {v} coppie di read")),
        ("How many read pairs did sample {s} get?", "How deep did {s} come out of the demultiplexing, as a count?",
         "Сколько пар ридов получил образец {s}?"),
        pattern=r"\b\d{8}\b"),
)

_PROJECT_KINDS = (
    _kind(
        "gn_cost_centre", PROJECTS, lambda r, s: f"CC-{r.randrange(1000, 9999)}-{_letters(r, 2)}",
        (("tool", "email", "> Please book the {s} lanes on cost centre {v}."),
         ("tool", "lims", "{s}\tcost_centre\t{v}\tactive"),
         ("user", "chat", "{s} va fatturato sul centro di costo {v}"),
         ("assistant", "prose", "Billing for {s} goes to {v}, as the PI's office asked.")),
        ("Which cost centre is project {s} billed to?", "Whose budget line pays for the {s} sequencing?",
         "На какой центр затрат записан проект {s}?"),
        pattern=r"\bCC-\d{4}-[A-Z]{2}\b",
        update=("The {s} grant moved: charge {v} instead of {old}.",
                "Per {s} il centro di costo cambia: non più {old}, adesso {v}."),
        ask_before=("Which cost centre was {s} billed to before the change?", "What budget line paid for {s} earlier?",
                    "На какой центр затрат раньше списывали {s}?")),
    _kind(
        "gn_analyst", PROJECTS, _person,
        (("tool", "eln", "---\nproject: {s}\nanalyst: {v}\n---"),
         ("user", "chat", "{v} takes over the {s} analysis, ping them for anything"),
         ("assistant", "prose", "{v} is the bioinformatician on {s}, so the QC questions go there."),
         ("tool", "email", "> За анализ {s} отвечает {v}.")),
        ("Who is the analyst on project {s}?", "Who should I ask about the {s} results?",
         "Chi è l'analista del progetto {s}?"),
        update=("{s} changes hands: {old} is on leave, {v} runs the analysis now.",
                "Il progetto {s} passa da {old} a {v} da oggi."),
        ask_before=("Who was the analyst on {s} before the hand-over?", "Who looked after the {s} results earlier?",
                    "Кто раньше вёл анализ {s}?")),
    _kind(
        "gn_delivery_bucket", PROJECTS, lambda r, s: f"s3://gcf-out-{r.choice(_WORDS)}-{r.randrange(100, 999)}/",
        (("tool", "email", "> The {s} FASTQs are in {v} and the link expires in 30 days."),
         ("tool", "jupyter", "In [3]: {k: v for k, v in delivery.items() if k == '{s}'}\nOut[3]: {'{s}': '{v}'}"),
         ("assistant", "prose", "I synced the {s} deliverables to {v}."),
         ("user", "chat", "i dati di {s} sono su {v}, mandalo al gruppo")),
        ("Where is the data delivery of project {s}?", "Where can the {s} group download their files?",
         "Где лежат выданные данные проекта {s}?"),
        pattern=r"\bs3://\S+",
        update=("We re-pointed the {s} delivery from {old} to {v} after the bucket policy change.",
                "Данные {s} переехали: вместо {old} теперь {v}."),
        ask_before=("Where was the {s} delivery before it moved?", "Where could the {s} group download from earlier?",
                    "Dove erano i dati consegnati di {s} prima dello spostamento?")),
    _kind(
        "gn_request_ticket", PROJECTS, lambda r, s: f"SEQREQ-{r.randrange(1000, 9999)}",
        (("tool", "zulip", "**request-bot** (08:05): opened {v} · {s}: sequencing request"),
         ("user", "chat", "the {s} request sits in the queue as {v}"),
         ("tool", "lims", "{s}\trequest\t{v}\tqueued"),
         ("assistant", "prose", "Ticket {v} now carries the {s} request, with the sample list attached."),
         ("user", "chat", "заявка по {s} — {v}")),
        ("Which request ticket tracks project {s}?", "Where do I follow the paperwork for {s}?",
         "Quale ticket segue la richiesta del progetto {s}?"),
        pattern=r"\bSEQREQ-\d{4}\b"),
    _kind(
        "gn_analysis_branch", PROJECTS,
        lambda r, s: f"analysis/{r.choice(_WORDS)}-{r.choice(_WORDS)}-{r.randrange(10, 99)}",
        (("tool", "jupyter", "In [1]: repos.head('{s}')\nOut[1]: {'project': '{s}', 'ref': '{v}'}"),
         ("assistant", "prose", "The {s} notebooks live on {v} in the analysis repo."),
         ("user", "chat", "per {s} lavora sul ramo {v}, non su main")),
        ("Which branch holds the analysis of project {s}?", "Where in git should my {s} changes go?",
         "В какой ветке анализ проекта {s}?"),
        pattern=r"\banalysis/[a-z]+-[a-z]+-\d+\b",
        update=("{s} switched lines of work: {old} is frozen, continue on {v}.",
                "Ветку {s} сменили: {old} заморожена, работаем в {v}."),
        ask_before=("Which branch held the {s} analysis before the switch?", "Where did my {s} changes go earlier?",
                    "Su quale ramo era l'analisi di {s} prima del cambio?")),
    _kind(
        "gn_report_commit", PROJECTS, lambda r, s: _hex(r, 10),
        (("tool", "eln", "## Delivered report — {s}\n\nrendered from commit {v} of the repo"),
         ("assistant", "prose", "The report we sent for {s} was built at {v}; anything later is unreviewed."),
         ("tool", "email", "> il rapporto di {s} è generato dal commit {v}, non modificarlo")),
        ("Which commit was the delivered report of {s} rendered from?",
         "What exact revision produced the PDF the {s} group got?", "Из какого коммита собран отчёт для {s}?"),
        pattern=r"\b[0-9a-f]{10}\b"),
)

_PIPELINE_KINDS = (
    _kind(
        "gn_pipeline_release", PIPELINES, lambda r, s: f"{r.randrange(1, 4)}.{r.randrange(10, 26)}.{r.randrange(0, 10)}",
        (("tool", "nextflow", "Launching `{s}` [sleepy_hopper] DSL2 - revision: {v}"),
         ("user", "chat", "keep {s} at {v}, the next release renames the outputs"),
         ("assistant", "prose", "I ran {s} with -r {v}, which is the release the lab validated."),
         ("user", "chat", "{s} фиксируем на версии {v}")),
        ("Which release of pipeline {s} are we pinned to?", "What do I pass to -r when I launch {s}?",
         "Su quale versione è fissata la pipeline {s}?"),
        pattern=r"\b\d\.\d{2}\.\d\b",
        update=("Bumped {s} from {old} to {v}; the MultiQC section names changed with it.",
                "Aggiorniamo {s}: da {old} a {v}, la vecchia versione non regge i nuovi kit."),
        ask_before=("Which release of {s} did we pin before the bump?", "What did I pass to -r for {s} earlier?",
                    "На какой версии {s} сидели до обновления?")),
    _kind(
        "gn_work_dir", PIPELINES, lambda r, s: f"/scratch/gcf/{r.choice(_WORDS)}/nxf-{_hex(r, 6)}",
        (("tool", "nextflow", "[{s}] Core Nextflow options\n  workDir                   : {v}"),
         ("tool", "condayaml", "variables:\n  NXF_WORK: {v}  # the {s} launcher"),
         ("user", "chat", "export NXF_WORK={v} before you launch {s}, the home quota is full"),
         ("assistant", "prose", "{s} keeps its intermediate files under {v}; clean it after the delivery."),
         ("user", "chat", "рабочая папка {s}: {v}")),
        ("Which work directory does pipeline {s} use?", "Where do the intermediate files of {s} end up?",
         "Quale directory di lavoro usa {s}?"),
        pattern=r"/scratch/gcf/\S+",
        update=("{s} scratch moved from {old} to {v} because the old volume is read-only now.",
                "La cartella di lavoro di {s} ora è {v}, prima era {old}."),
        ask_before=("Which work directory did {s} use before the move?", "Where did the intermediate files of {s} go earlier?",
                    "Какая рабочая папка была у {s} раньше?")),
    _kind(
        "gn_container_digest", PIPELINES, lambda r, s: f"sha256:{_hex(r, 16)}",
        (("tool", "nextflow", "{s}: Singularity image verified, {v}"),
         ("tool", "condayaml", "# {s} runs inside {v}"),
         ("assistant", "prose", "The container digest pinned for {s} is {v}, matching what the audit asked for."),
         ("user", "chat", "immagine di {s}: {v}, non aggiornarla")),
        ("Which container digest is pinned for {s}?", "What image hash must the {s} jobs run in?",
         "Какой дайджест контейнера закреплён за {s}?"),
        pattern=r"\bsha256:[0-9a-f]{16}\b"),
    _kind(
        "gn_cluster_config", PIPELINES, lambda r, s: f"conf/{r.choice(_WORDS)}_{r.randrange(10, 99)}.config",
        (("tool", "nextflow", "nextflow run {s} -c {v} -profile singularity,slurm"),
         ("tool", "sacct", "# submitted by the {s} launcher with -c {v}"),
         ("assistant", "prose", "For {s} I load the cluster settings from {v}."),
         ("user", "chat", "{s} gira solo con {v}, quello generico sbaglia la coda")),
        ("Which config file does {s} run with on the cluster?", "What do I pass with -c when I start {s}?",
         "С каким конфигом запускается {s} на кластере?"),
        pattern=r"\bconf/[a-z]+_\d+\.config\b",
        update=("{s} now reads {v}; {old} pointed at the retired partition.",
                "Конфиг {s} заменили: был {old}, теперь {v}."),
        ask_before=("Which config file did {s} run with before?", "What did I pass with -c for {s} earlier?",
                    "Con quale file di configurazione girava {s} prima?")),
    _kind(
        "gn_weblog_endpoint", PIPELINES,
        lambda r, s: f"https://weblog-{r.randrange(10, 99)}.gcf.example.org/{r.choice(_WORDS)}{r.randrange(100, 999)}",
        (("tool", "nextflow", "nextflow run {s} -resume -with-weblog {v}"),
         ("assistant", "prose", "{s} posts its task events to {v}; that is where the dashboard reads them."),
         ("user", "chat", "gli eventi di {s} vanno su {v}, non sul vecchio server")),
        ("Which weblog endpoint does {s} report its tasks to?", "Where does the dashboard get the progress of {s} from?",
         "Куда {s} отправляет события задач?"),
        pattern=r"https://weblog-\d+\.gcf\.example\.org/\S*",
        update=("The {s} weblog moved from {old} to {v} with the new dashboard.",
                "Weblog для {s} перенесли: был {old}, теперь {v}."),
        ask_before=("Which weblog endpoint did {s} report to before the move?",
                    "Where did the dashboard get the progress of {s} earlier?",
                    "A quale endpoint mandava gli eventi {s} prima?")),
)

_RUN_KINDS = (
    _kind(
        "gn_run_q30", RUNS, lambda r, s: f"{r.randrange(80, 97)}.{r.randrange(10, 99)}%",
        (("tool", "multiqc", '{"report_saved_raw_data":{"multiqc_bclconvert_byrun":{"{s}":{"percent_q30":"{v}"}}}}'),
         ("tool", "eln", "## Run review: {s}\n\n- bases at Q30 or better: {v}\n- PhiX error rate in range"),
         ("assistant", "prose", "Run {s} finished with {v} of bases at or above Q30."),
         ("user", "chat", "у {s} Q30 {v}, можно отдавать")),
        ("What share of bases reached Q30 on run {s}?", "How good was the base quality on {s}, as a percentage?",
         "Qual è la percentuale di basi sopra Q30 della corsa {s}?"),
        pattern=r"\b\d{2}\.\d{2}%"),
    _kind(
        "gn_archive_tape", RUNS, lambda r, s: f"LTO-{_letters(r, 1)}{r.randrange(10000, 99999)}",
        (("tool", "lims", "{s}\tarchive_tape\t{v}\tverified"),
         ("tool", "eln", "### Archive — {s}\n\nBCL folder written to tape {v}, checksum OK"),
         ("assistant", "prose", "The raw BCLs of {s} went to tape {v}."),
         ("user", "chat", "il run {s} è sul nastro {v}")),
        ("Which tape holds the raw data of run {s}?", "If we need the BCLs of {s} back, what do I ask the archive for?",
         "На какой ленте сырые данные рана {s}?"),
        pattern=r"\bLTO-[A-Z]\d{5}\b"),
    _kind(
        "gn_run_yield", RUNS, lambda r, s: f"{r.randrange(1000, 5999)}.{r.randrange(0, 10)} Gb",
        (("tool", "jupyter", "In [11]: runs.loc[['{s}'], 'yield']\nOut[11]:\n{s}    {v}\nName: yield, dtype: object"),
         ("tool", "zulip", "**novaseq-bot** (06:40): {s} completed · {v}"),
         ("assistant", "prose", "{s} produced {v} in total, so every lane is over spec."),
         ("user", "chat", "{s} выдал {v}")),
        ("What was the total yield of run {s}?", "How much data came off the sequencer for {s}?",
         "Quanti gigabasi ha prodotto la corsa {s}?"),
        pattern=r"\b\d{4}\.\d Gb\b"),
    _kind(
        "gn_reagent_cartridge", RUNS, lambda r, s: f"NV{r.randrange(10**6, 10**7)}-RGT",
        (("tool", "runinfo", "<RunParameters>\n  <RunId>{s}</RunId>\n  <RfidsInfo>\n"
                             "    <ReagentKitSerialBarcode>{v}</ReagentKitSerialBarcode>\n  </RfidsInfo>\n</RunParameters>"),
         ("tool", "lims", "{s}\treagent_cartridge\t{v}\tloaded"),
         ("assistant", "prose", "Run {s} used reagent cartridge {v}, the same lot as last week's."),
         ("user", "chat", "картридж на {s}: {v}")),
        ("Which reagent cartridge was loaded for run {s}?", "What consumable serial went into the sequencer for {s}?",
         "Quale cartuccia di reagenti è stata usata per la corsa {s}?"),
        pattern=r"\bNV\d{7}-RGT\b"),
)

_TEAM_KINDS = (
    _kind(
        "gn_decision", TOPICS, lambda r, s: r.choice(CHOICES[s]),
        (("user", "chat", "decided: {v} for {s}, because {why}"),
         ("assistant", "prose", "We settled on {v} for {s}; the deciding point was that {why}."),
         ("tool", "eln", "## Decision log\n\n**{s}** → {v}. Reason: {why}."),
         ("user", "chat", "per {s} scegliamo {v}, perché {why}"),
         ("tool", "email", "> По {s} решили: {v}, потому что {why}.")),
        ("Which tool did we settle on for {s}, and for what reason?", "What are we running for {s} now, and what tipped it?",
         "Что выбрали для {s} и почему?"),
        why=lambda r: r.choice(_REASONS)),
    _kind(
        "gn_preference", LIKED, lambda r, s: r.choice(PREFERENCES[s]),
        (("user", "chat", "for {s} I want {v}, every time"),
         ("user", "chat", "мне для {s} нужны {v}, пожалуйста"),
         ("user", "chat", "per {s} preferisco {v}, grazie")),
        ("How does the user want {s} prepared?", "If I put together {s} for them, what style do they expect?",
         "Come vuole l'utente {s}?")),
)

KINDS: tuple[DayKind, ...] = (*_SAMPLE_KINDS, *_PROJECT_KINDS, *_PIPELINE_KINDS, *_RUN_KINDS, *_TEAM_KINDS)

# --- sets, order, remarks ---------------------------------------------------------------------------------------------

#: (kind, a value, statements with {t} the topic and {v} the value, questions with {t})
AGGREGATES: tuple[Aggregate, ...] = (
    ("gn_failed_libraries", lambda r: f"LIB{r.randrange(10000, 99999)}",
     (("user", "chat", "one more for {t}: {v} failed the fragment check"),
      ("assistant", "prose", "{v} from {t} goes on the failed list; its trace showed adapter dimers."),
      ("tool", "lims", "{t}\tfailed_library\t{v}\tdiscarded"),
      ("user", "chat", "в {t} не прошла ещё одна библиотека: {v}")),
     ("Which libraries failed QC in {t}?", "List every library we had to throw out of {t}.",
      "Какие библиотеки не прошли контроль качества в {t}?")),
    ("gn_opened_lots", lambda r: f"LOT{r.randrange(100000, 999999)}",
     (("user", "chat", "opened reagent lot {v} for {t} today"),
      ("tool", "eln", "#### Consumables — {t}\n\nnew lot opened: {v}"),
      ("assistant", "prose", "Logged lot {v} against {t}."),
      ("user", "chat", "per {t} abbiamo aperto il lotto {v}")),
     ("Which reagent lots did we open for {t}?", "Name every kit batch that was started on {t}.",
      "Quali lotti di reagenti abbiamo aperto per {t}?")),
)

#: the two ordered events: (a value, the statement with {s} the cohort and {v} the value); the first is of ``{a}``
ORDER_EVENTS: tuple[OrderEvent, ...] = (
    (lambda r: f"PT-{r.randrange(10000, 99999)}",
     ("tool", "zulip", "**novaseq-bot** (07:15): pool {v} of {s} loaded, run started")),
    (lambda r: f"DLV-{_hex(r, 6)}",
     ("assistant", "prose", "The data of {s} were handed over to the group, receipt {v}.")),
)
ORDER_QUESTIONS = ("Which came first: the pool of {a} going on the sequencer, or the data hand-over of {b}?",
                   "Was {a} loaded before {b} got its files, or the other way round?",
                   "Что было раньше: загрузка пула {a} на секвенатор или выдача данных {b}?")

_ROOMS = ("2.14", "3.02", "B-107", "cold room 1", "the tissue lab")
_HANDLES = ("ilaria.b", "sasha.k", "marco.t", "lena.v", "giorgio.p", "oksana.d", "fra.n", "misha.r")
_INSTRUMENTS = ("the Bioanalyzer", "the TapeStation", "the Covaris", "the Chromium X", "the Hamilton", "the QuantStudio")


def noise_statement(rng: random.Random) -> str:
    """A fact-shaped remark of the facility's days that no question asks about (drawn; mostly unique)."""
    who, where, kit = rng.choice(_HANDLES), rng.choice(_ROOMS), rng.choice(_INSTRUMENTS)
    hh, mm, n = rng.randrange(7, 20), rng.randrange(0, 60), rng.randrange(2, 99)
    shapes = (
        f"the -80 in {where} logged -{rng.randrange(62, 79)} °C at {hh:02d}:{mm:02d}, facilities say it was the door",
        f"{kit} is booked by {who} from {hh:02d}:{mm:02d} for {n} minutes",
        f"chip {n} on {kit} had a bubble in well {rng.randrange(1, 12)}, rerun after lunch",
        f"PhiX on the {rng.choice(_WORDS)} pool was spiked at {rng.randrange(1, 9)}.{rng.randrange(0, 10)} percent",
        f"someone left tube FR{rng.randrange(10**7, 10**8)} on bench {rng.randrange(1, 9)}, whose is it?",
        f"scratch bucket s3://gcf-tmp-{rng.choice(_WORDS)}-{rng.randrange(100, 999)}/ is wiped on Friday",
        f"центрифуга {n} снова шумит, {who} вызвал сервис на {hh:02d}:{mm:02d}",
        f"il termociclatore {n} è prenotato da {who} fino alle {hh:02d}:{mm:02d}",
        f"{who} moved {n} boxes of tips to {where}",
        f"la stanza {where} resta chiusa fino alle {hh:02d}:{mm:02d} per la pulizia",
    )
    return rng.choice(shapes)
