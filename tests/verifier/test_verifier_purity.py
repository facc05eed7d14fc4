"""The verifier is a pure library: it imports nothing of the application above it."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import verifier, verifier.errors, verifier.matcher, verifier.oneoff, verifier.resolve
import verifier.text_fragments
from verifier import check_quote, resolve, TextQuoteSelector, TextOffsets, Status
check_quote("a b", "x a b")
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("snap", "records", "snapshotter"))
print(",".join(loaded))
"""


def test_the_verifier_loads_nothing_of_the_app() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == ""


def test_importing_the_error_classes_does_not_compile_the_tokenizer() -> None:
    probe = "import sys, snap.errors; print('verifier.tokenizer' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False"


def test_resolve_is_the_function_whatever_was_imported_first() -> None:
    probe = (
        "import verifier.resolve\n"
        "from verifier import resolve, CONTEXT_MISMATCH\n"
        "import verifier\n"
        "print(callable(resolve), callable(verifier.resolve))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "True True"
