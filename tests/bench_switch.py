"""Benchmark: what a costly switch holds the server for, with every section built.

    python -m tests.bench_switch [--rounds 6]

In-process, as under Panel's server but without a browser: the page (app/main.py create_view) with
every section built, its models in a Bokeh document as a session's are, and the document's changes
collected as Bokeh's server collects them. Times, in ms (median and max of the rounds):

- a language switch: the page's own labels and figure (at once), then each section's relabel (on a
  server each is a turn of its own: app/state/session.py `in_turns`): the longest turn is what another
  reader's message can wait behind;
- a K/V-heads switch (another checkpoint: the cache filled again, every part rebuilt, at once);
- how many times Bokeh walked every model of the document during them (a new model set on another,
  `DocumentModelManager.recompute`): each walk costs in proportion to the whole page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def page_in_a_document():
    """The page with every section built, its models in a document; the session runs switches in
    turns collected here (a server's next ticks)."""
    import panel as pn
    from bokeh.document import Document

    from app.main import create_view

    doc = Document()
    pn.state.curdoc = doc
    view = create_view("?lang=es")
    doc.add_root(view.__panel__().get_root(doc))
    for s in view.sections:
        s.ensure_built()
    turns = []
    view.session.schedule = lambda _seconds, fn: turns.append(fn)
    return view, turns


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    from bokeh.document import models

    view, turns = page_in_a_document()
    walks = [0]
    walk = models.DocumentModelManager.recompute

    def counted(self):
        walks[0] += 1
        walk(self)

    models.DocumentModelManager.recompute = counted
    rows: dict[str, list[float]] = {}
    slowest: dict[str, str] = {}

    def switch(name: str, change) -> None:
        rows.setdefault(f"{name}, at once", []).append(timed(change))
        each = {}
        while turns:
            job = next(iter(view.session.turns))  # the job this turn runs: a section's relabel or redraw
            each[type(getattr(job, "__self__", job)).__name__] = timed(turns.pop(0))
        if each:  # none: everything ran at once (a session without turns)
            worst = max(each, key=each.get)
            rows.setdefault(f"{name}: the longest turn", []).append(each[worst])
            rows.setdefault(f"{name}: every turn, together", []).append(sum(each.values()))
            slowest[name] = worst

    for r in range(args.rounds):
        switch("language switch", lambda r=r: setattr(view.session.settings, "lang", ("en", "pt", "es")[r % 3]))
        switch("K/V-heads switch", lambda r=r: setattr(view.session.settings, "kv_heads", (2, 1, 4)[r % 3]))
    print(f"Every section built ({len(view.sections)}), {args.rounds} rounds, ms: median (max)\n")
    for name, times in rows.items():
        print(f"| {name} | {statistics.median(times):.0f} ({max(times):.0f}) |")
    print("\nthe longest turn, last round: " + ", ".join(f"{k}: {v}" for k, v in slowest.items()))
    print(f"\nBokeh walked every model of the document {walks[0]} times in {args.rounds * 2} switches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
