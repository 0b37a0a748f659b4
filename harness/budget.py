"""The CI budget: the fewest events that exercise everything a wider sweep's plans draw.

Seeds draw their events at random, so a sweep of consecutive seeds repeats the common
paths (a daily run, a re-export) many times to meet the rare ones once (a SIGTERM between
chunks, a FIFO in the landing, a fault in a later model). CI runs instead a cover: from a
pool of consecutive seeds, greedily the seed that adds the most features not yet covered
per event it costs, until every feature of the pool is covered, then without any seed the
others cover already. Pure planning (harness.scenarios), so it takes milliseconds and
follows the scenarios when their draw changes. The random sweep stays the long run's
(`python -m harness.run --scenarios N --seed S`, `make harness-long`).

A feature is one thing a plan makes the code under test meet: an event kind, a fault point
(and whether it persists), a kill (its kind, moment and signal), a host time zone, a
hostile landing, a deleted day, a chunk size or order or missing-day rule per event kind, a
plain dbt command, a corrected fx rate, a preview signal between chunks, a re-export while
a publish waits, and how the final chunking-invariance check chunks and orders each of its
two backfills. Timing is not a feature: where a SIGKILL lands differs between two runs of
one seed anyway.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.scenarios import CLASSES, Event, Scenario, plan_scenario

# The pools: seeds 1000..1039 (the default classes) and 1000..1029 (the preview classes).
# Their covers: 19 seeds, 96 events and 107 features, where the 30 seeds CI ran before
# (1000..1029) drew 151 events and 102 of these features; 4 seeds, 32 events and 56
# features, where the 6 before (1000..1005) drew 53 events and 52 (docs/harness.md).
POOL_SEED = 1000
POOL_SIZE = {None: 40, "preview": 30}
# The options of a refill command whose value picks a different path through the code.
_PATH_OPTIONS = ("--order", "--chunk-days", "--on-missing")
_PATH_FLAGS = ("--restate", "--preview", "--from-preview")
# How a chunking-invariance check chunks its two backfills (by days or by lines).
_CHUNKINGS = ("--chunk-days", "--chunk-lines")


def event_features(event: Event) -> set[tuple]:
    features: set[tuple] = {("kind", event.kind)}
    if event.fault:
        features.add(("fault", event.fault, event.fault_persists))
    if event.kill_moment:
        features.add(("kill", event.kind, event.kill_moment, event.kill_signal))
    if event.time_zone:
        features.add(("host time zone", event.time_zone))
    for landing in (event.landing, event.landing_while_waiting, *event.before):
        if landing is None:
            continue
        if landing.hostile:
            features.add(("hostile", landing.hostile.describe()))
        if landing.spec is None:
            features.add(("day deleted", event.kind))
    for option in _PATH_OPTIONS:
        if option in event.argv:
            features.add((event.kind, option, event.argv[event.argv.index(option) + 1]))
    features |= {(event.kind, flag) for flag in _PATH_FLAGS if flag in event.argv}
    if event.dbt_argv:
        options = [part for part in event.dbt_argv if not part.startswith("{")]
        features.add(("dbt", event.kind, " ".join(options)))
    if event.seed:
        features.add(("fx rate corrected", event.seed.currency))
    if event.stops_between_chunks:
        features.add(("signal between chunks", event.kind))
    if event.landing_while_waiting:
        features.add(("re-export while a publish waits",))
    return features


def scenario_features(scenario: Scenario) -> set[tuple]:
    features = set().union(*(event_features(event) for event in scenario.events))
    for label, argv in (("final", scenario.final), ("fresh warehouse", scenario.fresh)):
        chunkings = [option for option in _CHUNKINGS if option in argv]
        features |= {("chunking invariance", label, option) for option in chunkings}
        if "--order" in argv:
            features.add(("chunking invariance", label, argv[argv.index("--order") + 1]))
    return features


def scenario_cost(scenario: Scenario) -> int:
    """Events run, counting the scenario's own set-up and a final check's two backfills."""
    return 1 + len(scenario.events) + (2 if scenario.final else 0)


def covering_seeds(pool: Iterable[int], classes: str | None = None) -> list[int]:
    """The seeds of `pool` whose plans, together, have every feature the pool's plans have,
    chosen for the fewest events (greedy, then pruned); sorted."""
    weights = CLASSES[classes] if classes else None
    plans = {seed: plan_scenario(seed, weights) for seed in pool}
    features = {seed: scenario_features(plan) for seed, plan in plans.items()}
    cost = {seed: scenario_cost(plan) for seed, plan in plans.items()}
    missing = set().union(*features.values())
    chosen: list[int] = []
    while missing:
        best = max(plans, key=lambda seed: (len(features[seed] & missing) / cost[seed], -seed))
        chosen.append(best)
        missing -= features[best]
    # a seed chosen early may be covered by the later ones: drop it, dearest first
    for seed in sorted(chosen, key=lambda seed: (-cost[seed], seed)):
        others = [other for other in chosen if other != seed]
        if features[seed] <= set().union(*(features[other] for other in others)):
            chosen = others
    return sorted(chosen)


def ci_seeds(classes: str | None = None) -> list[int]:
    """The CI budget's seeds (for `classes`, the preview classes' own budget)."""
    return covering_seeds(range(POOL_SEED, POOL_SEED + POOL_SIZE[classes]), classes)
