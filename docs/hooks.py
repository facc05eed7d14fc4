"""MkDocs hooks: the parts of the manual that are taken from the code when the site is built.

- ``<!-- snap-help: NAME -->`` in a page becomes ``snap NAME --help``, run through click, so the
  options listed can never differ from the command's own.
- ``<!-- snap-openapi -->`` becomes the operations of the HTTP service's OpenAPI document,
  rendered as Markdown (no OpenAPI renderer that works offline, without scripts from a CDN, is
  packaged for MkDocs), and the document itself is written into the site as ``openapi.json``.

Nothing generated is committed: it is made again on every build.

One spelling is translated: GitHub needs ``\\|`` for a pipe inside code in a table cell, while
Python-Markdown keeps the backslash there and takes a pipe inside backticks as text, so in table
rows ``\\|`` within a code span becomes ``|``. The pages then read right in both places.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click
from click.testing import CliRunner
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from snap.cli import cli
from snap.service.app import openapi_document

HELP_MARKER = re.compile(r"<!-- snap-help: ([a-z][a-z ]*?) -->")
OPENAPI_MARKER = "<!-- snap-openapi -->"
CODE_SPAN = re.compile(r"`[^`\n]*`")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def command_help(name: str) -> str:
    """``snap NAME --help`` as a fenced block; an unknown NAME fails the build."""
    result = CliRunner().invoke(cli, [*name.split(), "--help"], prog_name="snap")
    if result.exit_code != 0 or "Usage:" not in result.output:
        raise click.ClickException(f"snap {name} --help failed: {result.output.strip()}")
    return "```text\n" + result.output.rstrip() + "\n```"


def cell(text: object) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def schema_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(schema_name(option) for option in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {schema_name(schema.get('items', {}))}"
    return str(schema.get("type", "any"))


def content_kinds(content: dict[str, Any]) -> str:
    """``application/json`` (``CaptureRequest``): each media type, with its schema's name."""
    kinds = []
    for kind, media in content.items():
        schema = media.get("schema", {})
        named = f" ({schema_name(schema)})" if "$ref" in schema else ""
        kinds.append(f"`{kind}`{named}")
    return ", ".join(kinds)


def schema_markdown(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"#### {name}", ""]
    if schema.get("description"):
        lines += [cell(schema["description"]), ""]
    properties = schema.get("properties", {})
    if properties:
        required = set(schema.get("required", []))
        lines += ["| field | type | required | meaning |", "|---|---|---|---|"]
        for field, spec in properties.items():
            lines.append(
                f"| `{field}` | {cell(schema_name(spec))} | {'yes' if field in required else 'no'} "
                f"| {cell(spec.get('description', ''))} |"
            )
        lines.append("")
    return lines


def operation_markdown(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    lines = [f"### {method.upper()} {path}", ""]
    if operation.get("summary"):
        lines += [cell(operation["summary"]), ""]
    if operation.get("description"):
        lines += [str(operation["description"]).strip(), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | type | required | meaning |", "|---|---|---|---|---|"]
        for parameter in parameters:
            lines.append(
                f"| `{parameter['name']}` | {parameter.get('in', '')} "
                f"| {cell(schema_name(parameter.get('schema', {})))} "
                f"| {'yes' if parameter.get('required') else 'no'} "
                f"| {cell(parameter.get('description', ''))} |"
            )
        lines.append("")
    body = operation.get("requestBody")
    if body:
        required = "required" if body.get("required") else "optional"
        lines += [f"Request body ({required}): {content_kinds(body.get('content', {}))}", ""]
    lines += ["| status | meaning | content |", "|---|---|---|"]
    for status, response in operation.get("responses", {}).items():
        kinds = content_kinds(response.get("content", {}))
        lines.append(f"| {status} | {cell(response.get('description', ''))} | {kinds} |")
    return [*lines, ""]


def openapi_markdown(document: dict[str, Any]) -> str:
    info = document.get("info", {})
    lines = [f"OpenAPI {document.get('openapi')}, {info.get('title')} {info.get('version')}.", ""]
    for path, item in document.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                lines += operation_markdown(method, path, item[method])
    schemas = document.get("components", {}).get("schemas", {})
    if schemas:
        lines += ["### Schemas", "", "The named schemas the operations above refer to.", ""]
        for name, schema in schemas.items():
            lines += schema_markdown(f"Schema {name}", schema)
    return "\n".join(lines)


def unescape_table_code(markdown: str) -> str:
    """``\\|`` inside a code span of a table row, as GitHub wants it, as Python-Markdown does."""

    def unescape(span: re.Match[str]) -> str:
        return span.group(0).replace("\\|", "|")

    return "\n".join(
        CODE_SPAN.sub(unescape, line) if line.startswith("|") else line
        for line in markdown.split("\n")
    )


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Put the OpenAPI document into the site, so the HTTP page can link to it."""
    document = json.dumps(openapi_document(), indent=2, ensure_ascii=False) + "\n"
    files.append(File.generated(config, "openapi.json", content=document))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    markdown = unescape_table_code(markdown)
    markdown = HELP_MARKER.sub(lambda found: command_help(found.group(1)), markdown)
    if OPENAPI_MARKER in markdown:
        markdown = markdown.replace(OPENAPI_MARKER, openapi_markdown(openapi_document()))
    return markdown
