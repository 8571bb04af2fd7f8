"""¿Cuánto contexto cabe?: tokens of context per user for real models and machines (logic.py: the
chapter's presets and its checks), typed and shown the language's way (app/components/fields.py)."""

from __future__ import annotations

import panel as pn

from model.cost import Architecture, GiB

from ...components.fields import FIELD_WIDTH, WRAP_LABEL, NumberField
from ...figure.parts import esc
from ...i18n import num, plain_number, size
from ..base import Section
from . import logic as calculator


def params_text(n_params: float, lang: str) -> str:
    """A large model's parameters in the unit its sentence names: thousands of millions to the nearest
    hundred million in Spanish, as the lesson writes them ("unos 7 000 millones"); billions with one
    decimal otherwise."""
    if lang == "es":
        return num(round(n_params / 1e8) * 100, lang)
    return num(n_params / 1e9, lang, 1)


class ContextSection(Section):
    """The calculator: a model (its numbers, from a preset or typed) and a machine; the tokens of
    context each user gets, capped at the model's window."""

    key = "context"
    title_key = "ctx_title"
    MODEL = ("layers", "kv_heads", "d_head", "kv_bytes", "params", "bits", "window")
    MACHINE = ("gpu", "overhead", "users")
    LABEL = {
        "layers": "ctx_layers",
        "kv_heads": "ctx_kv_heads",
        "d_head": "ctx_d_head",
        "kv_bytes": "ctx_kv_bytes",
        "params": "ctx_params",
        "bits": "ctx_bits",
        "window": "ctx_window",
        "gpu": "ctx_gpu",
        "overhead": "ctx_overhead",
        "users": "ctx_users",
    }
    PRESET = {
        "7b-mha": "ctx_preset_7b_mha",
        "mini": "ctx_preset_mini",
        "0.5b": "ctx_preset_0_5b",
        "7b-gqa": "ctx_preset_7b_gqa",
        "13b": "ctx_preset_13b",
        "70b": "ctx_preset_70b",
    }  # by the presets' names (logic.py, presets())

    def build(self):
        ex = self.ex
        self.presets = calculator.presets(ex.cfg, next(iter(ex.gpt.params.values())).itemsize)
        self.intro, self.result, self.assumptions = self.pane(), self.pane(), self.pane()
        self.preset = pn.widgets.Select(
            options=list(self.presets),
            value=calculator.DEFAULT,
            sizing_mode="stretch_width",
            max_width=520,
            stylesheets=[WRAP_LABEL],
            css_classes=["ctx-fields"],
        )
        self.fields = {
            "layers": NumberField("layers", 1, 512, integer=True),
            "kv_heads": NumberField("kv_heads", 1, 512, integer=True),
            "d_head": NumberField("d_head", 1, 1024, integer=True),
            "params": NumberField("params", 1, 1e13, integer=True),
            "window": NumberField("window", 1, 1e8, integer=True),
            "gpu": NumberField("gpu", 0, 1e5),
            "overhead": NumberField("overhead", 0, 1e3),
            "users": NumberField("users", 1, 1e6, integer=True),
        }
        self.kv_bytes = pn.widgets.Select(width=FIELD_WIDTH, stylesheets=[WRAP_LABEL])
        self.bits = pn.widgets.Select(width=FIELD_WIDTH, stylesheets=[WRAP_LABEL])
        self.model_heading, self.machine_heading = self.pane(), self.pane()
        self._loading = False
        for w in self.widgets().values():
            w.param.watch(lambda _e: self.render(), "value")
        self.preset.param.watch(lambda e: self.load(e.new), "value")
        row = dict(
            flex_wrap="wrap",
            align_items="flex-end",
            gap="8px 14px",
            sizing_mode="stretch_width",
            css_classes=["ctx-fields"],
        )
        self.card.objects = [
            self.intro,
            self.preset,
            self.model_heading,
            pn.FlexBox(*[self.widgets()[k] for k in self.MODEL], **row),
            self.machine_heading,
            pn.FlexBox(*[self.widgets()[k] for k in self.MACHINE], **row),
            self.result,
            self.assumptions,
        ]
        self.relabel_choices()
        self.load(self.preset.value)

    def widgets(self) -> dict:
        """Every input by its key: the number fields' text inputs and the two selects."""
        return {**{k: f.widget for k, f in self.fields.items()}, "kv_bytes": self.kv_bytes, "bits": self.bits}

    def label(self):
        self._loading = True
        try:
            self.relabel_choices()
            for key, w in self.widgets().items():
                w.name = self.tr(self.LABEL[key])
            for f in self.fields.values():
                if f.value is not None:
                    f.show(f.value, self.lang)  # the same number, written the new language's way
        finally:
            self._loading = False
        self.intro.object = f"<p>{esc(self.tr('ctx_intro'))}</p>"
        self.model_heading.object = f"<h3>{esc(self.tr('ctx_model'))}</h3>"
        self.machine_heading.object = f"<h3>{esc(self.tr('ctx_machine'))}</h3>"
        self.assumptions.object = "".join(f"<p class='explain'>{esc(s)}</p>" for s in self.notes())
        self.render()

    def relabel_choices(self):
        """The presets' names and the selects' options, with the language's numbers."""
        lang, value = self.lang, self.preset.value
        self.preset.options = {
            self.tr(
                self.PRESET[k],
                L=p.model.n_layers,
                d=num(p.model.d_model, lang),
                n=p.model.n_kv_heads,
                dh=p.model.d_head,
            ): k
            for k, p in self.presets.items()
        }
        self.preset.value = value
        self.preset.name = self.tr("ctx_preset")
        bits, kv = self.bits.value, self.kv_bytes.value
        names = {"4-bit": self.tr("ctx_4bit")}
        self.bits.options = {f"{names.get(k, k)} ({plain_number(b, lang)})": b for k, b in calculator.BITS.items()}
        self.kv_bytes.options = {
            f"{'fp16 / bf16' if k == 'fp16' else k} ({plain_number(b, lang)})": b
            for k, b in calculator.KV_BYTES.items()
        }
        self.bits.value, self.kv_bytes.value = bits, kv

    def notes(self) -> list[str]:
        """The assumptions, where each context window comes from, and the chapter's two GBs."""
        lang, P, checks = self.lang, self.presets, calculator.chapter_checks()
        short = lambda x: plain_number(x, lang, 3)  # noqa: E731
        w05 = P["0.5b"].with_(bits=calculator.BITS["fp32"]).weights_bytes()
        return [
            self.tr(
                "ctx_assumptions",
                c13_4bit=num(checks["13b_4bit_8gb"], lang),
                gpu8=calculator.CHAPTER_TABLES["13b_4bit_8gb"][2],
                gpu16=calculator.CHAPTER_TABLES["7b_int8_16gb"][2],
                c7_int8=num(checks["7b_int8_16gb"], lang),
                c13_int8=num(checks["13b_int8_16gb"], lang),
                overhead=short(calculator.OVERHEAD_GIB),
                b7=params_text(P["7b-gqa"].model.n_params, lang),
                b13=params_text(P["13b"].model.n_params, lang),
                bits4=short(calculator.BITS["4-bit"]),
                group=calculator.GROUP,
            ),
            self.tr(
                "ctx_windows",
                **{
                    k: num(P[p].window, lang)
                    for k, p in (
                        ("mini", "mini"),
                        ("l7", "7b-mha"),
                        ("c05", "0.5b"),
                        ("c7", "7b-gqa"),
                        ("c13", "13b"),
                        ("c70", "70b"),
                    )
                },
            ),
            self.tr(
                "ctx_units",
                w7=num(P["7b-gqa"].with_(bits=16).weights_bytes() / GiB, lang, 1),
                w05_gb=num(w05 / 1e9, lang, 2),
                w05_gib=num(w05 / GiB, lang, 2),
            ),
            self.tr("ctx_knobs"),
        ]

    def load(self, key: str):
        p = self.presets[key]
        m, lang = p.model, self.lang
        self._loading = True
        try:
            for k, v in (
                ("layers", m.n_layers),
                ("kv_heads", m.n_kv_heads),
                ("d_head", m.d_head),
                ("params", round(m.n_params)),
                ("window", m.n_ctx),
                ("gpu", p.gpu_gib),
                ("overhead", p.overhead_gib),
                ("users", p.users),
            ):
                self.fields[k].show(v, lang)
            self.kv_bytes.value, self.bits.value = p.kv_bytes, p.bits
        finally:
            self._loading = False
        self.render()

    def current(self):
        """The calculator's model and machine as typed, or the first field that is not a number."""
        lang = self.lang
        for f in self.fields.values():
            if f.read(lang) is None:
                return f
        v = {k: f.value for k, f in self.fields.items()}
        model = Architecture(v["params"], v["layers"], v["kv_heads"], v["kv_heads"], v["d_head"], v["window"])
        return calculator.Preset(
            "custom",
            model,
            bits=self.bits.value,
            kv_bytes=self.kv_bytes.value,
            gpu_gib=v["gpu"],
            overhead_gib=v["overhead"],
            users=v["users"],
        )

    def render(self):
        if self._loading or self.bits.value is None or self.kv_bytes.value is None:
            return
        p, lang = self.current(), self.lang
        if isinstance(p, NumberField):
            text = self.tr("ctx_invalid", field=self.tr(self.LABEL[p.key]), what=p.expected(self.tr, lang))
            self.result.object = f"<p role='status' data-testid='ctx-invalid'>{esc(text)}</p>"
            return
        self.result.object = self.verdict_html(p)

    def verdict_html(self, p: calculator.Preset) -> str:
        lang, tokens = self.lang, p.tokens_per_user()
        verdict = self.tr("ctx_tokens", n=tokens, users=num(p.users, lang))
        cap = (
            f"<p class='explain' data-testid='ctx-cap'>{esc(self.tr('ctx_capped', n=p.window, by_memory=num(p.tokens_by_memory(), lang)))}</p>"
            if p.capped()
            else ""
        )
        detail = self.tr(
            "ctx_detail",
            per_token=size(p.bytes_per_token(), lang),
            weights=size(p.weights_bytes(), lang),
            free=size(max(p.free_bytes(), 0), lang),
            n=p.users * tokens,
            used=size(p.cache_bytes(), lang),
        )
        none = f"<p class='explain'>{esc(self.tr('ctx_none'))}</p>" if tokens == 0 else ""
        return (
            f"<div class='card' role='status'><p class='big num' data-testid='ctx-tokens'>{esc(verdict)}</p>"
            f"{cap}<p class='explain' data-testid='ctx-detail'>{esc(detail)}</p>{none}</div>"
        )
