"""The parts of the figure that are words: the title and introduction, the notices about the URL,
the text so far, and the error of the last step."""

from __future__ import annotations

from ..style import show_token
from .parts import Part, esc, html_pane

MAX_NOTICES = 3  # notices listed one by one; the rest are counted in one line
MAX_NOTICE_VALUE = 60  # characters of a bad value shown


class Header(Part):
    """The title and the introduction, unless the course page has its own (embed=1)."""

    def build(self):
        self.layout = html_pane(visible=not self.session.settings.embed)

    def relabel(self):
        if not self.session.settings.embed:
            intro = self.tr("intro", n=self.ex.cfg.n_layers)
            self.layout.object = f"<h1>{esc(self.tr('title'))}</h1><p>{esc(intro)}</p>"


class Notices(Part):
    """URL parameters that were ignored, and why (a few, then how many more)."""

    def build(self):
        self.layout = html_pane(visible=False)

    def relabel(self):
        notices = self.session.settings.notices
        items = [
            self.tr("notice_bad", key=cut(k), value=cut(v), why=self.tr(why, **kw))
            for k, v, why, kw in notices[:MAX_NOTICES]
        ]
        if len(notices) > MAX_NOTICES:
            items.append(self.tr("notice_more", n=len(notices) - MAX_NOTICES))
        self.layout.object = "".join(f"<div class='notice' role='note'>{esc(s)}</div>" for s in items)
        self.layout.visible = bool(items)


def cut(s: str, limit: int = MAX_NOTICE_VALUE) -> str:
    return s if len(s) <= limit else s[:limit] + "…"


class TokenText(Part):
    """The text so far, one box per token: the prompt's dashed, the newest highlighted. A box never
    breaks across lines; its spaces show as faint dots (still spaces for screen readers and copying);
    a newline shows as ⏎ at the end of its line, then the line breaks; two or more in a row end the
    paragraph (one gap, not a line holding a lone ⏎)."""

    def build(self):
        self.layout = html_pane()

    def redraw(self):
        ex = self.ex
        toks = ex.tokens()
        spans = []
        for i, s in enumerate(toks):
            cls = ["tok"] + (["prompt"] if i < ex.n_prompt else []) + (["current"] if i == len(toks) - 1 else [])
            if s.strip("\n") == "":
                cls.append("nl")
            title = self.tr("prompt_token" if i < ex.n_prompt else "sampled_token") + f" {i + 1}"
            spans.append(f"<span class='{' '.join(cls)}' title='{esc(title)}'>{token_html(s)}</span>")
            spans.append(line_break(toks, i))
        self.layout.object = (
            f"<p><span class='tpos'>{self.tr('position', t=ex.t, n=self.n)}</span></p>"
            f"<div class='text' lang='es'>{''.join(spans)}</div>{self.legend()}"
        )

    def legend(self) -> str:
        """What the boxes and marks mean, each beside an example box (hidden from screen readers,
        which read the words; the text's own boxes carry titles)."""
        examples = (
            ("tok prompt", "La", "legend_prompt"),
            ("tok", "una", "legend_sampled"),
            ("tok", "<span class='sp-dot'>·</span>", "legend_space"),
            ("tok nl", "⏎", "legend_newline"),
            ("tok current", "esto", "legend_newest"),
        )
        items = (
            f"<span class='item'><span class='{cls}' aria-hidden='true'>{box}</span> {esc(self.tr(key))}</span>"
            for cls, box, key in examples
        )
        return f"<p class='legend-inline tok-legend' data-testid='token-legend'>{' · '.join(items)}</p>"


def token_html(s: str) -> str:
    """A token's text: newlines as ⏎, each space a real space drawn as a faint dot."""
    return esc(show_token(s)).replace(" ", "<span class='sp'> </span>")


def line_break(toks: list[str], i: int) -> str:
    """What follows token i: nothing, a line break after the last of a run of newlines, or the end of
    a paragraph after two or more."""
    if not toks[i].endswith("\n") or (i + 1 < len(toks) and toks[i + 1].startswith("\n")):
        return ""
    run = 0
    for s in reversed(toks[: i + 1]):
        if s.strip("\n"):
            run += len(s) - len(s.rstrip("\n"))
            break
        run += len(s)
    return "<br>" if run == 1 else "<span class='para'></span>"


class ErrorBox(Part):
    """The error of the last step: the lesson's IndexError at n_ctx + 1, or a failure as what it is."""

    def build(self):
        self.layout = html_pane(visible=False)

    def redraw(self):
        e = self.ex.error
        if e is None:
            self.layout.visible = False
            self.layout.object = ""
            return
        self.layout.object = error_html(self.tr, e, self.n)
        self.layout.visible = True


def error_html(tr, e, n: int, testid: str = "error", explain: str = "error_explain") -> str:
    """A step's error as the reader sees it: the lesson's IndexError past the window (with `explain`),
    or a failure as what it is. `t`: the language's tr."""
    heading, explain = ("error_heading", explain) if e.lesson else ("step_failed_heading", "step_failed_explain")
    return (
        f"<div class='error' role='alert' data-testid='{testid}' data-lesson='{str(e.lesson).lower()}'>"
        f"<h2>{esc(tr(heading, pos=e.position))}</h2>"
        f"<p><code>{esc(e.type_name)}: {esc(e.message)}</code></p>"
        f"<p>{esc(tr(explain, n=n, pos=e.position))}</p></div>"
    )
