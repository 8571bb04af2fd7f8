"""Development server: `panel serve app/explorable.py` (from the repository root)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import panel as pn  # noqa: E402

from app.main import create_app  # noqa: E402

# location=False: the app reads the URL once (create_app); Panel's own URL sync would read it again, its
# own way, and fail on a number of 5,000 digits.
create_app(pn.state.session_args).servable(title="La caché de claves y valores", location=False)
