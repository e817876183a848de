"""The benchmark harness: ``python -m experiments run|report|check``."""
