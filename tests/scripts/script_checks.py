"""What the tests of the repository's scripts share: where the sources are, and how a test stops
at its first failed expectation."""
import os
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def expect(condition, what, output=""):
    """Exits non-zero naming `what`, with the output that showed it, unless `condition` holds."""
    if not condition:
        sys.exit(f"FAILED: {what}" + (f"\n--- output:\n{output}" if output else ""))
