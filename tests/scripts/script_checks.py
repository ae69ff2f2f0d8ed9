"""What the tests of the repository's scripts share: where the sources are, how a test runs or
imports a script, and how it stops at its first failed expectation."""
import importlib
import os
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(SOURCE, "scripts")


def expect(condition, what, output=""):
    """Exits non-zero naming `what`, with the output that showed it, unless `condition` holds."""
    if not condition:
        sys.exit(f"FAILED: {what}" + (f"\n--- output:\n{output}" if output else ""))


def run_script(script, *arguments):
    """Runs the Python script `script` with `arguments`, capturing its output as text."""
    return subprocess.run([sys.executable, script, *arguments], capture_output=True, text=True)


def import_script(name):
    """Imports scripts/`name`.py as a module, its folder on the path as when it runs, so the
    scripts it imports in turn are found."""
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    return importlib.import_module(name)
