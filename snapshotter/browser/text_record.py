"""What a browser capture's text leaves out, adds and cannot read, as counts and in words.

The page script (``page_text.js``) reports it in full in the browser document
(``textReading``: excerpts, waits, scroll pass); the capture's provenance keeps the counts
(``browser.text``), and ``snap show`` and the evidence page say them in words, so a reader of
the evidence learns what the stored text is not.
"""

from __future__ import annotations

from typing import Any

# Each rule of page_text.js, as the words after "N characters".
RULE_WORDS = {
    "off-page": "off the page",
    "clipped": "clipped away",
    "size": "in boxes under 2 px",
    "font-size": "of font size 0",
    "opacity": "of opacity 0",
    "colour": "in the colour of what is behind them, or transparent",
}


def text_summary(reading: dict[str, Any]) -> dict[str, Any]:
    """The counts of a browser document's ``textReading`` that a reader of the evidence needs
    beside the text: characters left out by each rule, characters added from ::before and
    ::after, characters kept under an element fixed over the whole viewport, characters whose
    colour could not be compared, frames not read, characters in shadow trees not read."""
    left_out = reading.get("leftOut") or {}
    covered = reading.get("covered") or {}
    return {
        "leftOut": {rule: int(entry.get("characters", 0)) for rule, entry in left_out.items()},
        "generated": int((reading.get("generated") or {}).get("characters", 0)),
        "covered": int(covered.get("characters", 0)),
        "coveredBy": covered.get("by"),
        "colourUndecided": int((reading.get("colourUndecided") or {}).get("characters", 0)),
        "framesNotRead": int((reading.get("frames") or {}).get("notReadCount", 0)),
        "shadowNotRead": int((reading.get("shadowNotRead") or {}).get("characters", 0)),
    }


def text_summary_words(summary: dict[str, Any]) -> list[str]:
    """The summary as sentences, one a fact; none for a capture with nothing to say (or made
    before snap-browser@2 recorded it)."""
    said = []
    left_out = summary.get("leftOut") or {}
    if left_out:
        parts = [
            f"{count} characters {RULE_WORDS.get(rule, rule)}" for rule, count in left_out.items()
        ]
        said.append("left out, as no reader sees them: " + "; ".join(parts))
    if summary.get("generated"):
        said.append(f"added: {summary['generated']} characters of CSS ::before/::after text")
    if summary.get("covered"):
        by = f" ({summary['coveredBy']})" if summary.get("coveredBy") else ""
        said.append(
            f"kept, though under an element fixed over the whole viewport{by}:"
            f" {summary['covered']} characters"
        )
    if summary.get("colourUndecided"):
        said.append(
            f"kept, colour against the background not decidable: "
            f"{summary['colourUndecided']} characters"
        )
    if summary.get("framesNotRead"):
        said.append(f"not read: {summary['framesNotRead']} frames of another origin or too deep")
    if summary.get("shadowNotRead"):
        said.append(f"not read: {summary['shadowNotRead']} characters in shadow trees")
    return said
