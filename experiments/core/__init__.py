"""Shared plumbing of the harness; it imports no measurement, report or gate module.

The Measurement interface and its run context (:mod:`.measurement`), the run schema built from
the registry (:mod:`.config`), typed strategy specs (:mod:`.strategy`), the run folder
(:mod:`.runfolder`), child processes (:mod:`.children`, :mod:`.procmem`), the timing lock
(:mod:`.timing`), and what the crash measurements share (:mod:`.crashsim`).
"""
