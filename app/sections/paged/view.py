"""La caché en bloques (PagedAttention): model/paged.py's scenario stepped in the page. Conversations
enter and leave; the pool of blocks, coloured by owner (shared blocks striped, free ones empty);
each conversation's block table; the memory three ways (reserved for the whole window, in blocks,
in blocks with the prompt shared); and the proof that the blocks change no logit. logic.py (and
with it model/paged.py) is imported when the section opens.
"""

from __future__ import annotations

import panel as pn

from ...figure.parts import esc, linked
from ...i18n import num, sci, size
from ..base import Section, Stepper
from ..drawing import swatches, token_text

STATE_KEY = {"waiting": "paged_waiting", "live": "paged_live", "gone": "paged_gone"}
MEMORY_KEY = {"reserved": "paged_mem_reserved", "paged": "paged_mem_paged", "shared": "paged_mem_shared"}


class PagedSection(Section):
    key = "paged"
    title_key = "paged_title"
    current = None

    def build(self):
        from .logic import PagedChoice

        self.choice = PagedChoice()
        self.block = linked(pn.widgets.RadioButtonGroup, self.choice.param.block_size, width=200)
        self.block_label = pn.pane.HTML("", stylesheets=[self.css], margin=(0, 10))
        self.stepper = Stepper(self.step, self.reset, self.view.controls.period)
        self.intro, self.state, self.events, self.texts = (self.pane() for _ in range(4))
        self.pool_head, self.pool, self.tables, self.memory, self.proof = (self.pane() for _ in range(5))
        self.choice.param.watch(lambda _e: self.reset(), "block_size")
        self.session.param.watch(lambda _e: self.reset(), "model")  # another checkpoint: fewer K/V heads
        self.card.objects = [
            self.intro,
            self.control_row(pn.Column(self.block_label, self.block, margin=0)),
            self.state,
            self.events,
            self.texts,
            self.pool_head,
            self.pool,
            self.tables,
            self.memory,
            self.proof,
        ]
        self.reset()

    def label(self):
        tr = self.tr
        from .logic import POOL_POSITIONS

        self.intro.object = f"<p>{esc(tr('paged_intro', p=POOL_POSITIONS))}</p>"
        self.block.name = tr("paged_block")
        self.block_label.object = f"<p class='control-label'>{esc(tr('paged_block'))}</p>"
        self.stepper.label(tr("paged_step"), tr("paged_play"), tr("pause"), tr("paged_reset"))
        self.redraw()

    # -- stepping ----------------------------------------------------------------------------------
    def make(self):
        from .logic import PagedRun

        return PagedRun(self.ex.gpt, self.choice.block_size)

    def reset(self):
        self.current = self.make()
        self.redraw()

    def step(self) -> bool:
        ok = self.current.advance()
        self.redraw()
        return ok and not self.current.done

    def redraw(self):
        """Everything, then the state line last (what a test or a screen reader waits for)."""
        if self.current is not None:
            self.draw_all(
                self.draw_events, self.draw_texts, self.draw_pool, self.draw_tables, self.draw_memory, self.draw_state
            )

    # -- drawing -------------------------------------------------------------------------------------
    def draw_state(self):
        r, tr = self.current, self.tr
        live = ", ".join(r.snap["tables"]) or "–"
        key = "paged_state_done" if r.done else "paged_state"
        self.state.object = (
            f"<p data-testid='paged-state' data-steps='{r.steps}' data-block='{r.block_size}' "
            f"data-done='{r.done}'>{esc(tr(key, steps=r.steps, total=r.total, live=live))}</p>"
        )

    def draw_events(self):
        r, tr = self.current, self.tr
        if r.steps == 0:
            lines = [tr("paged_events_none")]
        else:
            lines = [self.change_text(c) for c in r.changes] or [tr("paged_nothing")]
        copies = [c for c in r.changes if c["kind"] == "copy"]
        cow = tr("paged_cow", n=len(copies)) if copies else tr("paged_no_cow")
        items = "".join(f"<li>{esc(x)}</li>" for x in lines)
        title = f"<h3>{esc(tr('paged_events_title', steps=r.steps))}</h3>" if r.steps else ""
        self.events.object = (
            f"{title}"
            f"<ul class='paged-events' data-testid='paged-events' data-copies='{len(copies)}'>"
            f"{items}</ul><p class='legend-inline' data-testid='paged-cow'>{esc(cow)}</p>"
        )

    def change_text(self, c: dict) -> str:
        tr, kind = self.tr, c["kind"]
        if kind == "leave":
            return tr("paged_leave", name=c["name"])
        if kind == "enter":
            return tr("paged_enter", name=c["name"], blocks=" ".join(map(str, c["blocks"])), n=len(c["blocks"]))
        if kind == "share":
            return tr(
                "paged_share",
                name=c["name"],
                other=c["with"],
                blocks=" ".join(map(str, c["blocks"])),
                n=len(c["blocks"]),
            )
        if kind == "copy":
            return tr("paged_copy", name=c["name"], j=c["logical"], old=c["old"], new=c["new"])
        return tr("paged_grow", name=c["name"], j=c["logical"], b=c["block"])

    def draw_texts(self):
        r, tr, vocab = self.current, self.tr, self.ex.gpt.tokenizer.vocab
        texts, status = r.texts(), r.status()
        items = []
        for name, s in status.items():
            ids, n_prompt = texts.get(name, ([], 0))
            what = tr(STATE_KEY[s["state"]], step=s["enters"], n=s["n_new"])
            body = (
                (
                    f" <span lang='es'><span class='tok prompt'>{esc(token_text(vocab, ids[:n_prompt]))}</span>"
                    f"{esc(token_text(vocab, ids[n_prompt:]))}</span>"
                )
                if ids
                else ""
            )
            items.append(
                f"<li data-testid='paged-text' data-name='{name}' data-state='{s['state']}' "
                f"class='{s['state']}'><span class='who own-{name}'>{name}</span> "
                f"<span class='meta'>{esc(what)}</span>{body}</li>"
            )
        self.texts.object = f"<ol class='convos'>{''.join(items)}</ol>"

    def draw_pool(self):
        from .logic import shared_blocks

        r, tr = self.current, self.tr
        snap, bs = r.snap, r.block_size
        blocks = []
        for b in snap["blocks"]:
            owners, filled = b["owners"], b["filled"]
            if not owners:
                cls, who = "free", tr("paged_free_short")
            else:
                cls = f"own-{owners[0]}" + (f" own2-{owners[1]} shared" if len(owners) > 1 else "")
                who = "+".join(owners)
            slots = "<i class='on'></i>" * filled + "<i></i>" * (bs - filled if owners else bs)
            blocks.append(
                f"<li class='blk {cls}' data-block='{b['block']}' data-refs='{b['refs']}' "
                f"data-owners='{' '.join(owners)}' data-filled='{filled}'>"
                f"<span class='bid'>{b['block']}</span>"
                f"<span class='slots' aria-hidden='true'>{slots}</span>"
                f"<span class='whom'>{esc(who)}</span></li>"
            )
        shared = shared_blocks(snap)
        title = tr(
            "paged_pool_title",
            n=r.n_blocks,
            bs=bs,
            p=r.n_blocks * bs,
            bytes=size(r.scenario.pool.block_nbytes, self.lang),
        )
        self.pool_head.object = (
            f"<h3>{esc(title)}</h3>"
            f"<p class='legend-inline'>{esc(tr('paged_pool_note'))}</p>"
            "<p class='legend-inline'>"
            + swatches(
                tr,
                (
                    ("paged-on", "paged_key_filled"),
                    ("paged-empty", "paged_key_empty"),
                    ("paged-shared", "paged_key_shared"),
                    ("paged-free", "paged_key_free"),
                ),
            )
            + "</p>"
        )
        self.pool.object = (
            f"<ol class='pool' data-testid='paged-pool' data-free='{len(snap['free'])}' "
            f"data-shared='{' '.join(map(str, shared))}' aria-label='{esc(tr('paged_pool_label'))}'>"
            f"{''.join(blocks)}</ol>"
        )

    def draw_tables(self):
        from .logic import shared_blocks

        r, tr = self.current, self.tr
        snap, shared = r.snap, set(shared_blocks(r.snap))
        rows = []
        for name, table in snap["tables"].items():
            chips = "".join(
                f"<span class='chip own-{name}{' shared' if b in shared else ''}'><small>{j}→</small>{b}</span>"
                for j, b in enumerate(table)
            )
            rows.append(
                f"<tr data-name='{name}' data-table='{' '.join(map(str, table))}'>"
                f"<th scope='row'><span class='who own-{name}'>{name}</span></th>"
                f"<td>{snap['lengths'][name]}</td><td class='chips'>{chips}</td></tr>"
            )
        if not rows:
            self.tables.object = (
                f"<h3>{esc(tr('paged_tables_title'))}</h3>"
                f"<p data-testid='paged-tables' data-n='0'>{esc(tr('paged_tables_none'))}</p>"
            )
            return
        head = "".join(f"<th scope='col'>{esc(tr(k))}</th>" for k in ("paged_seq", "paged_positions", "paged_table"))
        self.tables.object = (
            f"<h3>{esc(tr('paged_tables_title'))}</h3>"
            f"<table class='data paged-tables' data-testid='paged-tables' data-n='{len(rows)}'>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def draw_memory(self):
        from .logic import memory_row

        r, tr, lang = self.current, self.tr, self.lang
        m = memory_row(r.snap)
        top = max(m["reserved"], 1)
        rows = "".join(
            f"<tr class='{k}'><th scope='row'>{esc(tr(MEMORY_KEY[k]))}</th>"
            f"<td class='bar'><span style='width: {100 * m[k] / top:.1f}%'></span></td>"
            f"<td>{size(m[k], lang)}</td></tr>"
            for k in MEMORY_KEY
        )
        data = " ".join(f"data-{k}='{m[k]}'" for k in ("reserved", "paged", "shared", "exact", "unused", "live"))
        said = (
            tr("paged_memory_none")
            if not m["live"]
            else tr(
                "paged_memory",
                n=m["live"],
                n_ctx=self.n,
                reserved=size(m["reserved"], lang),
                paged=size(m["paged"], lang),
                shared=size(m["shared"], lang),
                exact=size(m["exact"], lang),
                positions=m["positions"],
                unused=m["unused"],
                x=num(m["reserved"] / m["shared"], lang, 1) if m["shared"] else "–",
            )
        )
        self.memory.object = (
            f"<h3>{esc(tr('paged_mem_title'))}</h3>"
            f"<table class='data paged-memory' data-testid='paged-memory' {data}>"
            f"<tbody>{rows}</tbody></table><p class='explain'>{esc(said)}</p>"
        )
        self.proof.object = (
            f"<p data-testid='paged-proof' data-diff='{r.proof!r}' data-now='{r.proof_now!r}' "
            f"data-compared='{r.compared}'>"
            f"{esc(tr('paged_proof', diff=sci(r.proof, lang), now=sci(r.proof_now, lang), n=r.compared))}"
            "</p>"
        )
