"""The CI budget's cover, over any pool of seeds: it holds every feature the pool's plans
hold, and no seed of it is covered by the others (harness/budget.py). The oracle is the
union of the pool's features, computed plan by plan, apart from the greedy choice."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.budget import covering_seeds, scenario_features
from harness.scenarios import CLASSES, plan_scenario


@settings(max_examples=30, deadline=None)
@given(
    start=st.integers(min_value=0, max_value=100_000),
    size=st.integers(min_value=1, max_value=45),
    classes=st.sampled_from([None, *CLASSES]),
)
def test_a_cover_of_any_pool_has_every_feature_of_the_pool_and_no_seed_to_spare(
    start, size, classes
):
    weights = CLASSES[classes] if classes else None
    pool = range(start, start + size)
    features = {seed: scenario_features(plan_scenario(seed, weights)) for seed in pool}

    cover = covering_seeds(pool, classes)

    assert cover == sorted(set(cover)) and set(cover) <= set(pool)
    assert set().union(*(features[seed] for seed in cover)) == set().union(*features.values())
    for dropped in cover:
        rest = set().union(*(features[seed] for seed in cover if seed != dropped))
        assert not features[dropped] <= rest, f"seed {dropped} is covered by the others"
