"""Run a piece of Python in a fresh interpreter (nothing imported yet, as on a new page) and read
the JSON it prints last: what a section imports only when it opens is checked this way."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def in_fresh_python(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])
