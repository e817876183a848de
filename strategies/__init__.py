"""Storage strategies under comparison, each a small module behind :class:`aptmem.store.SessionStore`.

A strategy is plugged in by a YAML file in ``configs/strategy/`` whose ``store._target_`` names
its class; adding one means writing one module here and one YAML file there.
"""
