"""Development server: `panel serve app/explorable.py` (from the repository root)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.main import create_app  # noqa: E402
import panel as pn  # noqa: E402

create_app(pn.state.session_args).servable(title="La caché de claves y valores")
