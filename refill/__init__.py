"""refill: safe backfills and reruns of partitioned data (the Python side).

Its layers, and the one direction of their imports: docs/design.md, "The Python side, in
layers" (tools/layers.py checks them).
"""
