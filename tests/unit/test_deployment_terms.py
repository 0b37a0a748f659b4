"""One vocabulary for the command line and the deployments (refill.options.PARAMETERS)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from refill import options

WORDS = st.text(alphabet="abc 0123456789.,;()", max_size=12)


@given(st.lists(st.tuples(WORDS, st.sampled_from(sorted(options.PARAMETERS))), max_size=5), WORDS)
def test_every_flag_a_message_names_is_said_as_its_parameter(pieces, tail):
    message = "".join(f"{text} {flag} " for text, flag in pieces) + tail
    said = options.in_deployment_terms(message)
    expected = "".join(f"{text} {options.PARAMETERS[flag]} " for text, flag in pieces) + tail
    assert said == expected


def test_every_option_with_a_rule_has_a_parameter_name():
    flags = {option.flag for option in options.OPTIONS}
    assert flags <= set(options.PARAMETERS)
    assert options.in_deployment_terms("rerun with --yes, --start and --chunk-days") == (
        "rerun with confirm: true, start and chunk_days"
    )
