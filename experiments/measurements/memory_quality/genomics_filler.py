"""The filler of the genomics workload: what a sequencing core's tools print, what the team says, what the agent replies.

:class:`GenomicsFiller` writes, from a seeded ``random.Random``, the pasted Zulip lines a user opens
a turn with (English, Russian, Italian), the agent's reply, and the output of the tools the
bioinformatics staff run (:data:`TOOL_FORMATS`): a Nextflow run log, a Snakemake log, a bcl-convert
samplesheet, SLURM ``sacct`` and ``squeue`` tables, a conda environment YAML, a minified MultiQC
JSON, R ``sessionInfo()``, Jupyter cells, an ELN page in Markdown, a LIMS export as TSV, a NovaSeq
RunInfo.xml, a PI's email thread, and a Zulip stream's history.

A tool's output comes as blocks (lines or groups of lines) so the generator can slip planted
statements between them; :meth:`GenomicsFiller.assemble` puts the blocks together in the format's
frame (a MultiQC document merges the planted members into its one line of JSON).

Its names, numbers and paths come from pools of its own: no subject, value shape or phrasing of
:mod:`.genomics_text` occurs here, so nothing the generator plants can be found by chance.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable

__all__ = ["TOOL_FORMATS", "GenomicsFiller"]

TOOL_FORMATS = ("nextflow", "snakemake", "samplesheet", "sacct", "condayaml", "multiqc", "sessioninfo", "jupyter",
                "eln", "lims", "runinfo", "email", "zulip")

_FILLER_PIPELINES = ("nf-core/viralrecon", "nf-core/taxprofiler", "nf-core/fetchngs", "nf-core/rnafusion",
                     "nf-core/differentialabundance", "nf-core/nanoseq")
_PROCESSES = ("FASTQC", "TRIMMING", "STAR_ALIGN", "SAMTOOLS_SORT", "SAMTOOLS_INDEX", "PICARD_METRICS", "QUALIMAP",
              "SALMON_QUANT", "BEDTOOLS_GENOMECOV", "MULTIQC", "CUSTOM_DUMPSOFTWAREVERSIONS", "KRAKEN2", "PRESEQ")
_RULES = ("trim_reads", "align_bwa", "mark_duplicates", "base_recalibration", "haplotype_caller", "index_bam",
          "bam_stats", "annotate_vep", "merge_vcfs", "coverage_mosdepth")
_LIBS = ("bluejay", "cormorant", "dipper", "egret", "finch", "grebe", "hoopoe", "ibis", "jacana", "kiwi", "lapwing",
         "merlin", "nuthatch", "oriole", "puffin", "redstart")
_NAMES = ("ilaria.b", "sasha.k", "marco.t", "lena.v", "giorgio.p", "oksana.d", "fra.n", "misha.r", "core-admin")
_CHAT_EN = ("the {lib} pool looks underloaded, cluster PF is low on lane {n}",
            "anyone else seeing the scheduler hang on the bigmem nodes?",
            "reminder: the facility meeting moved to {hh}:30",
            "I restarted the {lib} job, it died on a node reboot",
            "can somebody look at the fragment sizes of the {lib} preps?",
            "TapeStation is free again if you need it",
            "the shared conda cache is almost full, please clean your envs",
            "MultiQC for the {lib} batch is up on the intranet")
_CHAT_RU = ("коллеги, очередь на кластере опять стоит",
            "пул {lib} выглядит недогруженным, посмотрите плотность кластеров",
            "я перезапустила задачу {lib}, узел ушёл в перезагрузку",
            "не забудьте обновить окружения до пятницы",
            "на дорожке {n} много дублей, разберёмся после обеда")
_CHAT_IT = ("ragazzi, il cluster è di nuovo lento stamattina",
            "il pool {lib} sembra caricato poco, guardate la densità",
            "ho rilanciato il job {lib}, il nodo si è riavviato",
            "ricordatevi di pulire gli ambienti conda entro venerdì",
            "la riunione del core slitta alle {hh}:30")
_ASKS = ("Can you check what happened overnight and tell me what needs a rerun?",
         "Please go through these and draft the status note for the PIs.",
         "Have a look at the logs below and summarise the QC.",
         "Could you line up the next steps for today's runs?",
         "Please sanity-check this before I send it on.",
         "Посмотри, пожалуйста, что там с ночными запусками.",
         "Dai un'occhiata ai log e dimmi cosa rilanciare.")
_REPLY = ("I went through the outputs you pointed me at.",
          "Here is what the logs and tables say.",
          "Short version first, details below.",
          "Most of it looks healthy; a few things need attention.",
          "I checked the run outputs and the cluster accounting.",
          "Nothing blocks the pool for tonight, as far as I can see.")
_REPLY_MORE = ("Duplication is within the usual range for these library types.",
               "Two jobs were preempted and resumed on their own.",
               "The adapter content drops to almost nothing after trimming.",
               "I would keep the lane layout as it is for the next load.",
               "The insert size distribution is a little wider than last week's.",
               "No job ran out of memory this time.",
               "I left the draft of the note at the end of this message.",
               "Coverage is even across chromosomes, no obvious dropouts.")


def _hhmmss(rng: random.Random) -> str:
    return f"{rng.randrange(0, 24):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d}"


class GenomicsFiller:
    """Seeded filler of a sequencing core's day (see the module docstring)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._tools: dict[str, Callable[[], tuple[str, dict[str, object], str]]] = {
            "nextflow": lambda: ("bash", {"command": f"tail -n 120 runs/{self._lib()}/.nextflow.log"}, "nextflow"),
            "snakemake": lambda: ("bash", {"command": "snakemake --profile slurm -j 64 --rerun-incomplete"}, "snakemake"),
            "samplesheet": lambda: ("read_file", {"path": f"/seq/incoming/{self._folder()}/SampleSheet.csv"}, "samplesheet"),
            "sacct": lambda: ("bash", {"command": "sacct -u gcfpipe -S now-1days --format=JobID,JobName%24,Partition,"
                                                  "State,Elapsed,MaxRSS,ExitCode"}, "sacct"),
            "condayaml": lambda: ("read_file", {"path": f"envs/{self._lib()}.yml"}, "condayaml"),
            "multiqc": lambda: ("read_file", {"path": f"results/{self._lib()}/multiqc_data/multiqc_data.json"}, "multiqc"),
            "sessioninfo": lambda: ("bash", {"command": "Rscript -e 'sessionInfo()'"}, "sessioninfo"),
            "jupyter": lambda: ("notebook_run", {"path": f"notebooks/{self._lib()}_qc.ipynb"}, "jupyter"),
            "eln": lambda: ("eln_fetch", {"page": f"core/{self._lib()}-week-{self.rng.randrange(1, 9)}"}, "eln"),
            "lims": lambda: ("lims_export", {"query": "status:open", "format": "tsv"}, "lims"),
            "runinfo": lambda: ("bash", {"command": f"cd /seq/incoming/{self._folder()} && head -n 60 RunInfo.xml RunParameters.xml"},
                                "runinfo"),
            "email": lambda: ("mail_thread", {"folder": "INBOX/pi", "n": self.rng.randrange(2, 6)}, "email"),
            "zulip": lambda: ("zulip_history", {"stream": "sequencing", "topic": self.rng.choice(("runs", "qc", "cluster"))},
                              "zulip"),
        }

    # --- small draws -------------------------------------------------------------------------------------------------

    def _lib(self) -> str:
        return f"{self.rng.choice(_LIBS)}_{self.rng.randrange(1, 40):02d}"

    def _folder(self) -> str:
        """A run folder name of the filler's own instrument (never one of the planted runs)."""
        rng = self.rng
        return f"25{rng.randrange(10, 13)}{rng.randrange(10, 29)}_VH00{rng.randrange(100, 999)}_{rng.randrange(10, 99):04d}_AAF{rng.randrange(100, 999)}M5"

    def _line(self, pools: tuple[str, ...]) -> str:
        return self.rng.choice(pools).replace("{lib}", self._lib()).replace("{n}", str(self.rng.randrange(1, 9))) \
            .replace("{hh}", str(self.rng.randrange(9, 18)))

    # --- what people say ----------------------------------------------------------------------------------------------

    def opening(self, pasted: int) -> list[str]:
        """The user's request and ``pasted`` lines of the team's Zulip stream."""
        rng = self.rng
        lines = [rng.choice(_ASKS)]
        for _ in range(pasted):
            pool = rng.choice((_CHAT_EN, _CHAT_EN, _CHAT_RU, _CHAT_IT))
            lines.append(f"{rng.choice(_NAMES)}: {self._line(pool)}")
        return lines

    def reply(self) -> str:
        """The agent's reply before the remarks it plants."""
        rng = self.rng
        return " ".join([rng.choice(_REPLY), *rng.sample(_REPLY_MORE, rng.randrange(1, 4))])

    # --- what tools print ---------------------------------------------------------------------------------------------

    def tool(self, fmt: str, size: int) -> tuple[str, dict[str, object], list[str]]:
        """A tool call of format ``fmt`` (its name and arguments) and about ``size`` bytes of its output's blocks."""
        name, args, _ = self._tools[fmt]()
        block: Callable[[], str] = getattr(self, f"_{fmt}")
        blocks: list[str] = []
        total = 0
        while total < size:
            blocks.append(block())
            total += len(blocks[-1]) + 1
        return name, args, blocks

    def assemble(self, fmt: str, blocks: list[str]) -> str:
        """The tool's whole output: ``blocks`` in the format's frame."""
        rng = self.rng
        if fmt == "multiqc":
            return self._multiqc_document(blocks)
        if fmt == "nextflow":
            # A planted command line opens the output (the log is its run's), a planted launch line stands where the
            # log's own does; the process lines and anything else stay in the body.
            commands = [b for b in blocks if b.startswith("nextflow run ")]
            launches = [b for b in blocks if b.startswith("Launching `")]
            blocks = [b for b in blocks if b not in commands and b not in launches]
            pipeline = commands[0].split()[2] if commands else rng.choice(_FILLER_PIPELINES)
            head = [*(f"$ {c}" for c in commands), f"N E X T F L O W  ~  version 24.0{rng.randrange(1, 5)}.{rng.randrange(1, 9)}",
                    *(launches or [f"Launching `{pipeline}` [{rng.choice(_LIBS)}_run] DSL2 - revision: main"]),
                    f"executor >  slurm ({rng.randrange(20, 400)})"]
            tail = [f"Completed at: {rng.randrange(1, 28)}-Feb-2026 {_hhmmss(rng)}", f"Duration    : {rng.randrange(1, 14)}h "
                    f"{rng.randrange(0, 60)}m", f"CPU hours   : {rng.randrange(20, 900)}.{rng.randrange(0, 9)}",
                    f"Succeeded   : {rng.randrange(40, 900)}"]
            return "\n".join([*head, *blocks, *tail])
        if fmt == "snakemake":
            return "\n".join(["Building DAG of jobs...", "Using shell: /usr/bin/bash",
                              f"Provided remote nodes: {rng.randrange(16, 128)}", *blocks,
                              f"{rng.randrange(40, 90)} of {rng.randrange(90, 200)} steps done"])
        if fmt == "samplesheet":
            return "\n".join(["[Header]", "FileFormatVersion,2", f"RunName,{self._lib()}", "InstrumentPlatform,NovaSeqXSeries",
                              "", "[Reads]", "Read1Cycles,151", "Read2Cycles,151", "Index1Cycles,10", "Index2Cycles,10", "",
                              "[BCLConvert_Settings]", "SoftwareVersion,4.2.7", "OverrideCycles,Y151;I10;I10;Y151", "",
                              "[BCLConvert_Data]", "Lane,Sample_ID,index,index2,Sample_Project", *blocks])
        if fmt == "sacct":
            return "\n".join([f"{'JobID':>12} {'JobName':>24} {'Partition':>10} {'State':>10} {'Elapsed':>10} "
                              f"{'MaxRSS':>10} ExitCode", " ".join("-" * w for w in (12, 24, 10, 10, 10, 10, 8)), *blocks])
        if fmt == "condayaml":
            # Dependencies stay in their list; any other block (a comment, a variables section) follows it, so the YAML holds.
            deps = [b for b in blocks if b.startswith("  - ")]
            return "\n".join([f"name: {self._lib()}", "channels:", "  - conda-forge", "  - bioconda", "dependencies:", *deps,
                              *(b for b in blocks if not b.startswith("  - "))])
        if fmt == "sessioninfo":
            return "\n".join(["R version 4.4.1 (2024-06-14)", "Platform: x86_64-pc-linux-gnu", "Running under: Rocky Linux 9.4",
                              "", "attached base packages:", "[1] stats4    stats     graphics  grDevices utils     methods   base",
                              "", "other attached packages:", *blocks])
        if fmt == "eln":
            return "\n".join([f"# Core facility notebook — week {rng.randrange(1, 9)}", "", *blocks])
        if fmt == "lims":
            return "\n".join(["entity\tattribute\tvalue\tstate", *blocks])
        if fmt == "runinfo":
            # The filler's read elements sit in RunInfo.xml; anything else (RunParameters) follows as the second file.
            reads = [b for b in blocks if b.startswith("    <Read ")]
            others = [b for b in blocks if not b.startswith("    <Read ")]
            return "\n".join(["==> RunInfo.xml <==", '<?xml version="1.0"?>', '<RunInfo Version="6">',
                              f'  <Run Id="{self._folder()}" Number="{rng.randrange(1, 300)}">',
                              f"    <Flowcell>AAF{rng.randrange(100, 999)}M5</Flowcell>", "    <Instrument>VH00871</Instrument>",
                              "    <Reads>", *reads, "    </Reads>", "  </Run>", "</RunInfo>",
                              *(["", "==> RunParameters.xml <==", *others] if others else [])])
        if fmt == "email":
            return "\n".join([f"From: {rng.choice(('Prof. Ada Serra', 'Dr. Boris Kamenev', 'Prof. Nina Ruggeri'))}",
                              "To: gcf-bioinfo", f"Subject: Re: {rng.choice(('sequencing status', 'delivery', 'invoices', 'next run'))}",
                              "", *blocks])
        return "\n".join(blocks)

    def _multiqc_document(self, blocks: list[str]) -> str:
        """One line of JSON: the filler's general stats, with every planted member merged in under its section."""
        doc: dict[str, object] = {"report_creation_date": "2026-02", "config_title": "GCF run QC",
                                  "report_general_stats_data": {}, "report_saved_raw_data": {}}
        for text in blocks:
            _merge(doc, json.loads(text))
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))

    def _multiqc(self) -> str:
        rng = self.rng
        stats = {"percent_duplicates": round(rng.uniform(5, 60), 1), "percent_gc": rng.randrange(38, 55),
                 "avg_sequence_length": rng.randrange(120, 151), "percent_fails": rng.randrange(0, 30)}
        # Minified like the document it joins, so the blocks' size is the output's.
        return json.dumps({"report_general_stats_data": {self._lib(): stats}}, separators=(",", ":"))

    def _nextflow(self) -> str:
        rng = self.rng
        done = rng.randrange(1, 60)
        return (f"[{rng.getrandbits(8):02x}/{rng.getrandbits(24):06x}] process > NFCORE_PIPE:{rng.choice(_PROCESSES)} "
                f"({self._lib()}) [{rng.randrange(1, 101)}%] {done} of {done + rng.randrange(0, 20)}")

    def _snakemake(self) -> str:
        rng = self.rng
        job = rng.randrange(1, 400)
        lib = self._lib()
        return "\n".join([f"[Wed Feb {rng.randrange(1, 28)} {_hhmmss(rng)} 2026]", f"rule {rng.choice(_RULES)}:",
                          f"    input: work/{lib}.bam", f"    output: work/{lib}.out", f"    jobid: {job}",
                          f"Submitted job {job} with external jobid '{rng.randrange(100000, 999999)}'."])

    def _samplesheet(self) -> str:
        rng = self.rng
        index = "".join(rng.choice("ACGT") for _ in range(8))
        return f"{rng.randrange(1, 9)},{self._lib()},{index}AT,{''.join(rng.choice('ACGT') for _ in range(8))}GC,gcf_misc"

    def _sacct(self) -> str:
        rng = self.rng
        state = rng.choice(("COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED+", "RUNNING"))
        name = f"nf-{rng.choice(_PROCESSES).lower()}"
        return (f"{rng.randrange(100000, 999999):>12} {name[:24]:>24} {rng.choice(('cpu', 'bigmem', 'short')):>10} "
                f"{state:>10} {rng.randrange(0, 24):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d} "
                f"{rng.randrange(100, 90000)}M {rng.randrange(0, 2)}:0")

    def _condayaml(self) -> str:
        rng = self.rng
        tool = rng.choice(("samtools", "bcftools", "htslib", "pysam", "seqkit", "multiqc", "bedtools", "picard",
                           "mosdepth", "pandas", "scanpy", "r-base"))
        return f"  - {tool}={rng.randrange(1, 3)}.{rng.randrange(0, 9)}"

    def _sessioninfo(self) -> str:
        rng = self.rng
        pkgs = rng.sample(("DESeq2", "edgeR", "limma", "Seurat", "SingleCellExperiment", "GenomicRanges", "ggplot2",
                           "dplyr", "tximport", "apeglm", "ComplexHeatmap", "rtracklayer"), 3)
        return f" [{rng.randrange(1, 30)}] " + "  ".join(f"{p}_{rng.randrange(1, 3)}.{rng.randrange(30, 60)}.{rng.randrange(0, 9)}"
                                                        for p in pkgs)

    def _jupyter(self) -> str:
        rng = self.rng
        n = rng.randrange(12, 90)
        lib = self._lib()
        return rng.choice((f"In [{n}]: df.groupby('lane').size()\nOut[{n}]:\nlane\n1    {rng.randrange(20, 90)}\n"
                           f"2    {rng.randrange(20, 90)}\ndtype: int64",
                           f"In [{n}]: adata.shape\nOut[{n}]: ({rng.randrange(2000, 40000)}, {rng.randrange(18000, 36000)})",
                           f"In [{n}]: sc.pp.filter_cells(adata, min_genes={rng.randrange(100, 500)})\n"
                           f"filtered out {rng.randrange(10, 900)} cells that have less than the minimum genes",
                           f"In [{n}]: qc['{lib}'].dup_rate\nOut[{n}]: 0.{rng.randrange(10, 60)}"))

    def _eln(self) -> str:
        rng = self.rng
        lib = self._lib()
        return rng.choice((f"## {lib}\n\n- fragment analysis done, smear from 200 to 900 bp\n- stored at -20",
                           f"- [ ] rerun FastQC on {lib}\n- [x] update the pooling sheet",
                           f"> Note: the {lib} plate was sealed twice, check evaporation in row {rng.choice('ABCDEFGH')}",
                           f"## Pooling {lib}\n\n| lane | libraries | loading pM |\n|---|---|---|\n"
                           f"| {rng.randrange(1, 9)} | {rng.randrange(4, 24)} | {rng.randrange(120, 220)} |"))

    def _lims(self) -> str:
        rng = self.rng
        attribute, value = rng.choice((("received", f"box {rng.randrange(1, 40)}"), ("volume_ul", str(rng.randrange(5, 80))),
                                       ("plate_well", f"{rng.choice('ABCDEFGH')}{rng.randrange(1, 13)}"),
                                       ("prep_kit", rng.choice(("TruSeq Stranded", "Nextera XT", "KAPA HyperPrep"))),
                                       ("qc_state", rng.choice(("pass", "hold", "fail")))))
        return f"{self._lib()}\t{attribute}\t{value}\t{rng.choice(('open', 'done', 'hold'))}"

    def _runinfo(self) -> str:
        rng = self.rng
        cycles = rng.choice((151, 101, 51, 10))
        return f'    <Read Number="{rng.randrange(1, 5)}" NumCycles="{cycles}" IsIndexedRead="{"Y" if cycles == 10 else "N"}"/>'

    def _email(self) -> str:
        rng = self.rng
        return rng.choice(("> Thanks for the quick turnaround on the last batch.",
                           "> Could you also send the QC summary to my postdoc?",
                           "> Спасибо, данные пришли, посмотрим на этой неделе.",
                           "> Grazie, i file sono arrivati, li guardiamo domani.",
                           f"> We will have {rng.randrange(8, 96)} more samples ready next month.",
                           "> Is the invoice for January already out?",
                           "Best wishes,", "Cordiali saluti,", "С уважением,"))

    def _zulip(self) -> str:
        rng = self.rng
        pool = rng.choice((_CHAT_EN, _CHAT_RU, _CHAT_IT))
        return f"**{rng.choice(_NAMES)}** ({rng.randrange(8, 20):02d}:{rng.randrange(0, 60):02d}): {self._line(pool)}"


def _merge(into: dict[str, object], extra: dict[str, object]) -> None:
    """Merge ``extra`` into ``into`` member by member (nested objects merge, other values replace)."""
    for key, value in extra.items():
        here = into.get(key)
        if isinstance(here, dict) and isinstance(value, dict):
            _merge(here, value)
        else:
            into[key] = value
