"""The one input reader: bounded, typed, and one line for every refusal (issue 9)."""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from records.inputs import parse_document
from records.inputs.reader import MAX_DEPTH, load_json_input, max_input_bytes, parse_json
from snap.cli import cli
from snap.errors import ConfigError, InputError
from tests.db_support import ready_home


@pytest.fixture(autouse=True)
def home(tmp_path: Path, sqlite_template: Path) -> Path:
    """A ready home at ``tmp_path / "home"`` for ``run_verify``: verify reads a home that
    exists (a missing one is a mistyped SNAP_HOME, exit 3)."""
    return ready_home(tmp_path / "home", sqlite_template)


def run_verify(tmp_path: Path, *args: str, stdin: bytes | None = None, **env: str) -> Any:
    environment = {"SNAP_HOME": str(tmp_path / "home"), **env}
    return CliRunner().invoke(cli, ["verify", *args], input=stdin, env=environment)


def one_error_line(result: Any) -> str:
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("snap: error: ")
    assert "Traceback" not in result.output
    return lines[0]


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    result = run_verify(tmp_path, str(fifo))
    assert time.monotonic() - started < 5
    assert result.exit_code == 2
    assert "not a regular file" in one_error_line(result)


def test_dev_zero_is_refused_without_reading_it(tmp_path: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = run_verify(tmp_path, "/dev/zero")
    assert result.exit_code == 2
    assert "not a regular file" in one_error_line(result)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 50_000


def test_standard_input_past_the_limit_is_refused(tmp_path: Path) -> None:
    big = json.dumps({"url": "http://127.0.0.1:9/", "quote": "x" * 5000}).encode()
    result = run_verify(tmp_path, "-", stdin=big, SNAP_MAX_INPUT_BYTES="1000")
    assert result.exit_code == 2
    assert "larger than the input limit of 1000 bytes" in one_error_line(result)


def test_a_file_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"url": "http://127.0.0.1:9/", "quote": "y" * 300}))
    with pytest.raises(InputError, match="input limit of 100 bytes"):
        load_json_input(path, limit=100)


@pytest.mark.parametrize("raw", ["0", "-5", "lots", "1e9", "99999999999999999999999"])
def test_a_bad_limit_setting_is_a_config_error(raw: str) -> None:
    with pytest.raises(ConfigError, match="SNAP_MAX_INPUT_BYTES"):
        max_input_bytes({"SNAP_MAX_INPUT_BYTES": raw})


def test_a_5000_digit_integer_is_an_input_error_not_an_internal_one(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    path.write_text('{"url": "http://127.0.0.1:9/", "quote": "q", "page": ' + "9" * 5000 + "}")
    result = run_verify(tmp_path, str(path))
    assert result.exit_code == 2
    assert "more than 100 digits" in one_error_line(result)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused(literal: str) -> None:
    with pytest.raises(InputError):
        parse_json('{"a": ' + literal + "}")


def test_nesting_past_the_limit_is_refused_without_recursion() -> None:
    with pytest.raises(InputError, match="nested more than"):
        parse_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(InputError, match="nested more than"):
        parse_json("[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\u0000"])
def test_lone_surrogates_and_nul_are_refused_in_values_and_keys(escape: str) -> None:
    for text in (f'{{"quote": "a{escape}"}}', f'{{"k{escape}": 1}}'):
        with pytest.raises(InputError, match="not text snap can store"):
            parse_json(text)


ANY_TEXT = st.text(alphabet=st.characters(codec=None), max_size=8)


@given(
    st.recursive(
        ANY_TEXT | st.integers(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
        max_leaves=10,
    ),
    st.booleans(),
)
def test_text_is_refused_exactly_when_some_string_cannot_be_stored(
    document: Any, ascii_only: bool
) -> None:
    def strings(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, dict):
            return [s for k, v in value.items() for s in [k, *strings(v)]]
        if isinstance(value, list):
            return [s for item in value for s in strings(item)]
        return []

    def storable(text: str) -> bool:
        return "\x00" not in text and not any(0xD800 <= ord(c) < 0xE000 for c in text)

    text = json.dumps(document, ensure_ascii=ascii_only)
    if all(map(storable, strings(document))):
        assert parse_json(text) == document
    else:
        with pytest.raises(InputError, match="not text snap can store"):
            parse_json(text)


@pytest.mark.parametrize(
    ("unit", "kind"), [(["utf16"], "a list"), ({"u": 1}, "an object"), (3, "a number")]
)
def test_a_unit_of_the_wrong_type_names_its_path(unit: Any, kind: str) -> None:
    claim = {"url": "http://127.0.0.1:9/", "selector": {"quote": {"exact": "q"}}}
    bad = {
        **claim,
        "selector": {"quote": {"exact": "q"}, "position": {"start": 0, "end": 1, "unit": unit}},
    }
    with pytest.raises(InputError) as caught:
        parse_document({"claims": [claim, claim, claim, bad]})
    assert caught.value.message == (
        f"claims[3].selector.position.unit: expected a string, got {kind}"
    )


JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
JSON = st.recursive(
    JSON_LEAVES,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "url",
                    "quote",
                    "selector",
                    "claims",
                    "content",
                    "citations",
                    "type",
                    "role",
                    "text",
                    "output",
                    "choices",
                    "candidates",
                    "search_results",
                    "snapshotId",
                    "exact",
                    "position",
                    "start",
                    "end",
                    "unit",
                    "page",
                    "target",
                    "message",
                    "annotations",
                    "document_index",
                    "cited_text",
                    "groundingMetadata",
                ]
            )
            | st.text(max_size=5),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)
PROVIDER_SHAPES = st.sampled_from(
    [
        "claude.json",
        "claude_web_search.json",
        "openai_responses.json",
        "openai_chat.json",
        "gemini.json",
        "perplexity.json",
        "openai_file_search.json",
        "claude_pdf_pages.json",
    ]
)


@settings(max_examples=400, deadline=None)
@given(JSON)
def test_any_json_shape_parses_or_is_one_input_error(document: Any) -> None:
    try:
        parse_document(document)
    except InputError as error:
        problem = error.message
    else:
        problem = ""
    assert "\n" not in problem


def mutate(value: Any, path: list[int], replacement: Any) -> Any:
    """``value`` with the node reached by ``path`` (indices into children) replaced."""
    if not path:
        return replacement
    if isinstance(value, dict) and value:
        keys = list(value)
        key = keys[path[0] % len(keys)]
        return {**value, key: mutate(value[key], path[1:], replacement)}
    if isinstance(value, list) and value:
        index = path[0] % len(value)
        return [*value[:index], mutate(value[index], path[1:], replacement), *value[index + 1 :]]
    return replacement


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROVIDER_SHAPES, st.lists(st.integers(0, 50), max_size=8), JSON)
def test_provider_responses_with_any_field_replaced_parse_or_fail_in_one_line(
    name: str, path: list[int], replacement: Any
) -> None:
    from tests.inputs.conftest import fixture

    document = mutate(fixture(name), path, replacement)
    try:
        parse_document(document)
    except InputError as error:
        problem = error.message
    else:
        problem = ""
    assert "\n" not in problem


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(JSON)
def test_the_cli_ends_every_input_in_exit_0_1_or_2_with_no_traceback(
    tmp_path: Path, document: Any
) -> None:
    path = tmp_path / "input.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = run_verify(tmp_path, str(path))
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output
    assert "internal error" not in result.output
    if result.exit_code == 2:
        one_error_line(result)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(PROVIDER_SHAPES, st.lists(st.integers(0, 50), max_size=8), JSON)
def test_the_cli_ends_every_mutated_provider_response_in_exit_0_1_or_2(
    tmp_path: Path, name: str, path: list[int], replacement: Any
) -> None:
    from tests.inputs.conftest import fixture

    target = tmp_path / "response.json"
    target.write_text(json.dumps(mutate(fixture(name), path, replacement)), encoding="utf-8")
    result = run_verify(tmp_path, str(target))
    assert result.exit_code in (1, 2), result.output  # nothing is captured: never all found
    assert "Traceback" not in result.output
    assert "internal error" not in result.output
    if result.exit_code == 2:
        one_error_line(result)
