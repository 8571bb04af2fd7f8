"""Pesos cuantizados: the mini-GPT's projection matrices in 8 and 4 bits (model/wquant.py). The three
lines of absmax quantization; the scheme the reader picks (per tensor, per output unit, per group of
32, NF4); every matrix's relative error and largest weight in sigmas; every scheme side by side (bits,
bytes, held-out loss, agreement, acceptance: which measured here, which committed); the quantized
model writing beside the full one; and the chosen scheme's agreement and acceptance measured here.
logic.py (and with it model/wquant.py) is imported when the section opens.
"""

from __future__ import annotations

import panel as pn

from ...figure.parts import esc, linked, scroll_region
from ...i18n import num
from ...state import clock
from ..base import MeasuringSection
from ..drawing import token_text

TERRITORY = {"tensor": "wq_terr_tensor", "row": "wq_terr_row", "group": "wq_terr_group", "nf4": "wq_terr_nf4"}


def table(tr, label: str, head: list[str], rows: list[list[str]], testid: str, data: str = "", current=None) -> str:
    """drawing.lab_table's table (cells are HTML, headings message keys, in a scroll region named
    `label`), with data attributes for tests and row `current` marked."""
    th = "".join(f"<th scope='col'>{esc(tr(k))}</th>" for k in head)
    mark = {current: " class='current'"}
    body = "".join(f"<tr{mark.get(i, '')}>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for i, r in enumerate(rows))
    head = f"<table class='data quantized' data-testid='{testid}' {data}><thead><tr>{th}</tr></thead>"
    return scroll_region(label, f"{head}<tbody>{body}</tbody></table>")


class QuantizedSection(MeasuringSection):
    key = "quantized"
    title_key = "wq_title"
    running_key, done_key, cancelled_key = "wq_running", "wq_done", "wq_cancelled"

    def build(self):
        from .logic import WqChoice

        self.choice = WqChoice()
        self.scheme = linked(pn.widgets.Select, self.choice.param.scheme, width=200)
        self.prompt = linked(pn.widgets.RadioButtonGroup, self.choice.param.prompt, max_width=300)
        self.prompt_label = pn.pane.HTML("", stylesheets=[self.css], margin=(0, 10))
        self.intro, self.code, self.scheme_note, self.matrices, self.outliers = (self.pane() for _ in range(5))
        self.schemes, self.texts_head, self.texts = (self.pane() for _ in range(3))
        controls = self.measure_controls()
        self.lab_intro, self.status, self.measured = (self.pane() for _ in range(3))
        self.choice.param.watch(lambda _e: self.rescheme(), "scheme")
        self.choice.param.watch(lambda _e: self.draw_texts(), "prompt")
        # another checkpoint: the texts compared again, at the section's turn (Session.in_turns)
        self.session.param.watch(lambda _e: self.rescheme(self.session.in_turns), "model")
        self.card.objects = [
            self.intro,
            self.code,
            self.scheme,
            self.scheme_note,
            self.matrices,
            self.outliers,
            self.schemes,
            self.texts_head,
            pn.Column(self.prompt_label, self.prompt, margin=0),
            self.texts,
            self.lab_intro,
            controls,
            self.status,
            self.measured,
        ]

    def label(self):
        from .logic import CODE, N_PROMPTS, committed, n_new

        tr = self.tr
        self.code.object = f"<pre class='code quantized' lang='en' tabindex='0'>{esc(CODE)}</pre><p class='explain'>{esc(tr('wq_code_note'))}</p>"
        self.scheme.name = tr("wq_scheme")
        self.prompt_label.object = f"<p class='control-label'>{esc(tr('wq_prompt', n=N_PROMPTS))}</p>"
        c = committed()
        self.lab_intro.object = (
            f"<h3>{esc(tr('wq_lab_title'))}</h3>"
            f"<p>{esc(tr('wq_lab_intro', p=len(c['prompts']), new=n_new(), k=c['k']))}</p>"
        )
        self.run_button.name, self.cancel_button.name = tr("wq_run"), tr("lab_cancel")
        self.redraw()

    # -- a new scheme: everything but the prompt -----------------------------------------------------
    def rescheme(self, run=lambda draw: draw()):
        if self.lab is not None:
            self.lab.cancel()  # measured for another scheme (or model): not shown any more
            self.lab = None
        run(self.redraw)

    def redraw(self):
        self.draw_all(self.draw_intro, self.draw_scheme, self.draw_schemes, self.draw_texts, self.show)

    def draw_intro(self):
        from .logic import what_is_quantized

        w = what_is_quantized(self.ex.gpt)  # the model the figure runs: 2 or 1 K/V heads have fewer parameters
        said = self.tr(
            "wq_intro",
            matrices=w["matrices"],
            quantized=num(w["quantized"], self.lang),
            params=num(w["params"], self.lang),
        )
        self.intro.object = f"<p data-testid='quantized-intro'>{esc(said)}</p>"

    def draw_scheme(self):
        from .logic import matrix_rows, mean_error, scheme_facts, sizes

        tr, lang, scheme = self.tr, self.lang, self.choice.scheme
        f = scheme_facts(scheme)
        bpw = sizes(self.ex.gpt)[scheme]["bits_per_weight"]
        how = tr(TERRITORY[f["territory"]], g=f["group"])
        says = tr("wq_scheme_says", scheme=scheme, bits=f["bits"], how=how, bpw=num(bpw, lang, 3))
        self.scheme_note.object = (
            f"<p class='explain' data-testid='quantized-scheme' data-scheme='{scheme}'>{esc(says)}</p>"
        )
        rows = matrix_rows(self.ex.gpt, scheme)
        worst, median = mean_error(rows)
        body = [
            [
                f"<code>{r['matrix']}</code>",
                "×".join(map(str, r["shape"])),
                num(r["max_sigmas"], lang, 1),
                f"{r['beyond_6_sigma']}",
                num(r["error"], lang, 4),
            ]
            for r in rows
        ]
        label = tr("wq_matrices_title", scheme=scheme)
        head = ["wq_col_matrix", "wq_col_shape", "wq_col_sigmas", "wq_col_beyond", "wq_col_error"]
        data = f"data-scheme='{scheme}' data-worst='{worst!r}' data-median='{median!r}'"
        html = table(tr, label, head, body, "quantized-matrices", data)
        said = tr("wq_matrices_sum", worst=num(worst, lang, 4), median=num(median, lang, 4), scheme=scheme)
        self.matrices.object = f"<h3>{esc(label)}</h3>{html}<p class='explain'>{esc(said)}</p>"
        self.draw_outliers(rows)

    def draw_outliers(self, rows):
        from .logic import CHAPTER_MEDIAN, CHAPTER_OUTLIER, SIGMAS, activation_facts, weight_outliers

        tr, lang = self.tr, self.lang
        w, a = weight_outliers(rows), activation_facts()
        key = "wq_weights_none" if not w["beyond"] else "wq_weights_some"
        weights = tr(key, max=num(w["max_sigmas"], lang, 1), matrix=w["matrix"], n=w["beyond"], s=num(SIGMAS, lang))
        if a["outliers"]:
            dims = "; ".join(f"{layer}: {', '.join(map(str, d))}" for layer, d in a["outliers"].items())
            acts = tr("wq_acts_some", dims=dims, windows=a["windows"], s=num(SIGMAS, lang))
        else:
            acts = tr(
                "wq_acts_none",
                low=num(a["low"], lang, 1),
                high=num(a["high"], lang, 1),
                windows=a["windows"],
                s=num(SIGMAS, lang),
                layers=a["layers"],
                outlier=num(CHAPTER_OUTLIER, lang, 1),
                median=num(CHAPTER_MEDIAN, lang, 1),
            )
        self.outliers.object = (
            f"<p class='explain' data-testid='quantized-outliers' data-weights='{w['beyond']}' "
            f"data-sigmas='{w['max_sigmas']!r}' data-acts='{sum(map(len, a['outliers'].values()))}'>"
            f"{esc(weights)} {esc(acts)}</p>"
        )

    def percent(self, share: float) -> str:
        """0.987 -> '98.7%' (en), '98.7\u00a0%' (es, pt): the catalogs' `percent` after the number."""
        return num(100 * share, self.lang, 1) + self.tr("percent")

    def draw_schemes(self):
        from .logic import REFERENCE, SCHEME_NAMES, committed, committed_rows, is_measured_model, sizes

        tr, lang, chosen = self.tr, self.lang, self.choice.scheme
        here, rows, c = sizes(self.ex.gpt), committed_rows(), committed()
        pct = self.percent
        body = []
        for s in (REFERENCE, *SCHEME_NAMES):
            r, z = rows[s], here[s]
            name = f"<strong>{esc(s)}</strong> ◀" if s == chosen else esc(s)
            body.append(
                [
                    name,
                    num(z["bits_per_weight"], lang, 3),
                    num(z["total"], lang),
                    num(r["held_out_loss"], lang, 4),
                    f"{r['agree']}/{r['total']} ({pct(r['agreement'])})",
                    f"{r['accepted']}/{r['tested']} ({pct(r['alpha'])})",
                ]
            )
        label = tr("wq_schemes_title")
        head = ["wq_col_scheme", "wq_col_bits", "wq_col_bytes", "wq_col_loss", "wq_col_agree", "wq_col_accept"]
        html = table(
            tr,
            label,
            head,
            body,
            "quantized-schemes",
            f"data-chosen='{chosen}'",
            current=(REFERENCE, *SCHEME_NAMES).index(chosen),
        )
        note = tr(
            "wq_schemes_note",
            windows=c["windows"],
            n=rows[REFERENCE]["total"],
            p=len(c["prompts"]),
            new=c["n_new"],
            k=c["k"],
            python=c["python"],
            numpy=c["numpy"],
        )
        other = "" if is_measured_model(self.ex.gpt) else f" {tr('wq_other_model')}"
        self.schemes.object = f"<h3>{esc(label)}</h3>{html}<p class='explain'>{esc(note + other)}</p>"

    def draw_texts(self):
        from .logic import compare

        if not self.built:
            return
        tr, scheme, i = self.tr, self.choice.scheme, self.choice.prompt - 1
        vocab = self.ex.gpt.tokenizer.vocab
        c = compare(self.ex.gpt, scheme, i)
        P, first = c["prompt"], c["first"]
        misses = [j for j, ok in enumerate(c["agree"]) if not ok]

        def line(ids, who, cls, mark_misses):
            spans = []
            for j, tok in enumerate(ids[P:]):
                k = ["g"]
                if j == first:
                    k.append("first")
                if mark_misses and j in misses:
                    k.append("miss")
                elif cls == "quant" and first is not None and j > first:
                    k.append("after")
                spans.append(f"<span class='{' '.join(k)}'>{esc(token_text(vocab, [tok]))}</span>")
            return (
                f"<li class='{cls}'><span class='who'>{esc(who)}</span> <span lang='es'>"
                f"<span class='tok prompt'>{esc(token_text(vocab, ids[:P]))}</span>{''.join(spans)}</span></li>"
            )

        n = len(c["agree"])
        self.texts_head.object = f"<h3>{esc(tr('wq_texts_title', new=n, scheme=scheme))}</h3>"
        if first is None:
            said = tr("wq_same_text", n=n, scheme=scheme)
        else:
            said = tr(
                "wq_first_diff",
                i=first + 1,
                n=n,
                scheme=scheme,
                a=token_text(vocab, [c["full"][P + first]]),
                b=token_text(vocab, [c["quant"][P + first]]),
            )
        marks = tr("wq_marks", k=len(misses), n=n, scheme=scheme)
        self.texts.object = (
            f"<ol class='quantized-texts' data-testid='quantized-texts' data-scheme='{scheme}' data-prompt='{i + 1}' "
            f"data-first='{'' if first is None else first + 1}' data-misses='{len(misses)}'>"
            f"{line(c['full'], tr('wq_full'), 'full', True)}{line(c['quant'], scheme, 'quant', False)}</ol>"
            f"<p class='explain'>{esc(said)}</p><p class='legend-inline'>{esc(marks)}</p>"
        )

    # -- measured here ---------------------------------------------------------------------------------
    def new_lab(self):
        from .logic import AgreementLab

        return AgreementLab(self.ex.gpt, self.choice.scheme)

    def status_values(self) -> dict:
        lab = self.lab
        return {"done": lab.done, "total": lab.total, "scheme": lab.scheme}

    def render(self):
        from .logic import committed_rows, is_measured_model, same_as_committed

        lab, tr, lang = self.lab, self.tr, self.lang
        if lab is None or not lab.results:
            self.measured.object = ""
            return
        ms = lambda x: clock.ms_text(x, lang)  # noqa: E731
        pct = self.percent
        s = lab.totals()
        row = committed_rows()[lab.scheme]
        body = [
            [
                tr("wq_here"),
                f"{s['prompts']}",
                f"{s['agree']}/{s['total']} ({pct(s['rate'])})",
                f"{s['accepted']}/{s['tested']} ({pct(s['alpha'])})",
                f"{ms(s['agreement_s'])} + {ms(s['acceptance_s'])}",
            ],
            [
                "<code>python -m model.wquant</code>",
                f"{len(lab.items)}",
                f"{row['agree']}/{row['total']} ({pct(row['agreement'])})",
                f"{row['accepted']}/{row['tested']} ({pct(row['alpha'])})",
                "",
            ],
        ]
        label = tr("wq_measured_title", scheme=lab.scheme)
        finished = s["prompts"] == len(lab.items)
        same = finished and same_as_committed(s, lab.scheme)
        data = (
            f"data-scheme='{lab.scheme}' data-agree='{s['agree']}' data-total='{s['total']}' "
            f"data-accepted='{s['accepted']}' data-tested='{s['tested']}' data-same='{same}'"
        )
        head = ["wq_col_where", "wq_col_prompts", "wq_col_agree", "wq_col_accept", "wq_col_ms"]
        html = table(tr, label, head, body, "quantized-measured", data)
        if not finished:
            said = ""
        elif not is_measured_model(self.ex.gpt):
            said = tr("wq_other_model")
        else:
            said = tr("wq_same_yes" if same else "wq_same_no", scheme=lab.scheme)
        self.measured.object = f"<h4>{esc(label)}</h4>{html}<p class='explain'>{esc(said)}</p>"
