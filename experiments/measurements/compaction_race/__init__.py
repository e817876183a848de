"""Compaction racing writers: real processes append while others compact, and nothing acknowledged may be lost.

For each strategy that several processes may share and each way to persist a compaction, one
session is raced by writer processes (a long-lived library store, a new library store per
append, and for aptmem's JSONL log one ``aptmem append`` per entry and one long-lived ``aptmem
append`` fed a line at a time) against compactor processes (a library Session compacting in a
loop, and for the JSONL log ``aptmem compact --force`` processes). Then every acknowledged entry
is looked for: in the session, or among what a committed compaction summarized
(:mod:`.oracle` says exactly what counts). The rows (:class:`~.spec.RaceRow`, one per
participant) are tidy: ready for a table or a report section.

* :func:`~.driver.run_race` runs cells one after the other; :func:`~.driver.run_cell` one cell;
* sizes (:data:`~.spec.SIZES`): ``ci`` takes seconds a cell; ``full`` makes at least 1,000
  compactions race at least 10,000 appends per cell;
* ``python -m experiments.measurements.compaction_race --size full`` runs it from the shell.

The workload is seeded (which entries, of which type and length, with ids or without); the
interleaving is whatever the processes and the kernel make of it, which is the point.
"""

from experiments.measurements.compaction_race.driver import plan_cells, run_cell, run_race
from experiments.measurements.compaction_race.spec import SIZES, RaceCell, RaceRow, RaceSize

__all__ = ["SIZES", "RaceCell", "RaceRow", "RaceSize", "plan_cells", "run_cell", "run_race"]
