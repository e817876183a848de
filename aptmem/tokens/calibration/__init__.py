"""Calibration of what aptmem counts against real counts: provider profiles from transcripts with usage.

:mod:`~aptmem.tokens.calibration.profile_fit` measures a :class:`~aptmem.tokens.profile.ProviderProfile`
from sessions whose replies carry the provider's usage, and scores it on sessions it was not fitted
on; :mod:`~aptmem.tokens.calibration.errors` holds the error figures both report.
"""
