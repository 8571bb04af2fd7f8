# The panel convert baseline's app (tests/bench_sites.py): app/explorable.py as a script Panel can convert.
import sys

sys.path.insert(0, "/home/pyodide")  # where Panel unpacks data archives in the browser
import panel as pn  # noqa: E402

from app.main import create_app  # noqa: E402

create_app(pn.state.session_args).servable(title="La caché de claves y valores")
