"""``emit_json_list`` writes, an item at a time, exactly what ``emit_json`` writes at once."""

from __future__ import annotations

import json
from typing import Any

import click
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from snap.cli_support import ITEMS_PER_WRITE, emit_json, emit_json_list

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=12)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)


def printed(action: Any) -> str:
    @click.command()
    def command() -> None:
        action()

    result = CliRunner().invoke(command)
    assert result.exit_code == 0, result.output
    return result.output


def both(document: dict[str, Any], key: str, items: list[Any]) -> tuple[str, str]:
    at_once = printed(lambda: emit_json({**document, key: items}))
    streamed = printed(lambda: emit_json_list(document, key, iter(items)))
    return at_once, streamed


@settings(max_examples=150, deadline=None)
@given(
    before=st.dictionaries(st.text(max_size=6), values, max_size=3),
    key=st.text(max_size=8),
    items=st.lists(values, max_size=6),
    after=st.dictionaries(st.text(max_size=6), values, max_size=3),
)
def test_the_same_bytes_as_the_whole_document(
    before: dict[str, Any], key: str, items: list[Any], after: dict[str, Any]
) -> None:
    """Whatever the items (nested, empty, with line breaks and non-ASCII in strings) and
    wherever the key stands among the others."""
    document = {**before, key: [], **{k: v for k, v in after.items() if k != key}}
    at_once, streamed = both(document, key, items)
    assert streamed == at_once


def test_a_report_of_results_as_snap_reverify_prints_it() -> None:
    """More items than one write holds, with the shape of ``snap reverify --json``."""
    results = [
        {"citationId": f"c-{n}", "quote": {"exact": "a\nb “c”"}, "span": None, "details": [n]}
        for n in range(2 * ITEMS_PER_WRITE + 3)
    ]
    document = {"results": [], "refetchFailed": [], "summary": {"total": len(results)}}
    at_once, streamed = both(document, "results", results)
    assert streamed == at_once
    assert json.loads(streamed)["results"] == results


def test_no_items_is_an_empty_list() -> None:
    at_once, streamed = both({"results": [], "summary": {}}, "results", [])
    assert streamed == at_once
    assert '"results": []' in streamed
