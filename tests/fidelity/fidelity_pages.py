"""The hand-written pages of the fidelity suite and what each is for.

Each page has the shape of a kind of documentation page the HTTP extractor met and got
wrong (Sphinx, mdBook, DocBook, a function table, a page with hidden parts, a page whose
script writes a paragraph).  The text is written for these tests.  For each page:

- ``furniture``: a CSS selector of the page's navigation, menus and footers, which snap
  leaves out on purpose; their lines of Chromium's text are not counted;
- ``hidden``: sentences that are in the page's HTML but that a reader never sees;
- ``script_only``: sentences only the page's JavaScript writes, which an extractor reading
  the HTTP response cannot have (the reason the browser capture exists).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PAGES = Path(__file__).resolve().parent / "pages"
MIN_SHARE = 0.98  # of Chromium's visible lines that must be found in snap's text


@dataclass(frozen=True)
class FidelityPage:
    name: str
    shape: str  # what real pages this one stands for, for the report
    furniture: str = ""
    hidden: tuple[str, ...] = ()
    script_only: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return PAGES / f"{self.name}.html"


FIDELITY_PAGES = (
    FidelityPage(
        "sphinx_api",
        "Sphinx API page: ¶ permalinks hidden by a <style> rule, footnote and sidebar asides",
        furniture=".related, .sphinxsidebar, .footer",
        hidden=("¶",),
    ),
    FidelityPage(
        "docbook_fallback",
        "DocBook (PostgreSQL-style) page without landmark: nested <code>, titled sections",
        furniture=".navheader, .navfooter",
    ),
    FidelityPage(
        "table_cells",
        "function table whose cells hold several paragraphs, <br> lines and a listing",
        furniture="nav, footer",
    ),
    FidelityPage(
        "hidden_elements",
        "page with parts hidden by <style> rules, hidden, inline visibility:hidden",
        hidden=(
            "Sign up for our newsletter and never miss a planting day.",
            "Use the map above to find a free plot near the gate.",
            "The old borehole by the north fence was closed in the spring after a failed test.",
            "that children cannot lift",
            "Printed copies of these rules are out of date once the committee amends them.",
            "Only with the written consent of every holder of a neighbouring plot.",
        ),
    ),
    FidelityPage(
        "mdbook_hidden",
        "mdBook chapter: hidden code lines (hidden by the theme's linked stylesheet)",
        furniture="#sidebar, #menu-bar, .nav-wrapper",
        hidden=(
            "#![allow(unused)]",
            "    let mut lanterns = vec![true, false, true];",
            "assert!(lanterns.iter().all(|on| !on));",
        ),
    ),
    FidelityPage(
        "script_inserted",
        "article with a paragraph its script writes after loading",
        furniture="header",
        script_only=(
            "Today the 14:30 sailing is cancelled because of a swell above three metres.",
        ),
    ),
)
