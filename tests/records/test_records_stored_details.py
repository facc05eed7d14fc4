"""A check's details as its verification row keeps them: the seal is held typed (a SealState)
and written as its document in its place among the other details; a run continued from its
records reads the stored seal back, and writes it again byte for byte."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from records.attest.checks import SealState
from records.outcome import Outcome, details_of_row, stored_details
from records.wire_attest import seal_state_json
from verifier import Status

words = st.text(max_size=20)
seals = st.builds(
    SealState,
    signature=words,
    timestamp=words,
    problems=st.tuples(words) | st.just(()),
    capture_id=st.none() | st.integers(min_value=1, max_value=2**31),
    manifest=st.none() | words,
    signed=st.booleans(),
    stamped=st.booleans(),
    notes=st.tuples(words) | st.just(()),
)
other_details = st.dictionaries(
    st.text(min_size=1, max_size=12).filter(lambda key: key != "seal"),
    st.none() | st.integers() | words | st.lists(st.integers(), max_size=3),
    max_size=4,
)


@given(seals)
def test_a_stored_seal_reads_back_as_the_seal_it_was(seal: SealState) -> None:
    assert SealState.of_document(seal_state_json(seal)) == seal


@given(other_details, seals, other_details)
def test_details_are_stored_and_read_back_in_order(
    before: dict[str, object], seal: SealState, after: dict[str, object]
) -> None:
    held = {**before, "seal": seal, **{k: v for k, v in after.items() if k not in before}}
    stored = stored_details(held)
    assert list(stored) == list(held)  # the seal keeps its place among the others
    assert stored["seal"] == seal_state_json(seal)
    row = json.loads(json.dumps(stored))  # as the database gives it back
    again = details_of_row(row)
    assert again == held
    assert json.dumps(stored_details(again)) == json.dumps(stored)
    assert Outcome(Status.QUOTE_FOUND, details=again).seal == seal


def test_an_outcome_without_a_seal_has_none() -> None:
    assert Outcome(Status.NOT_FOUND, details={"foundAt": [[1, 2]]}).seal is None
