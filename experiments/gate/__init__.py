"""The regression gate: every measurement's metrics, and ``python -m experiments check`` against a baseline."""
