"""refill's fault-injection harness: seeded scenarios, an invariant checker, broken variants.

`python -m harness.run --scenarios N --seed S [--variant NAME]` drives the real command
line and flows through random sequences of events on small generated landing data and
checks every invariant after every event. See docs/harness.md.
"""
