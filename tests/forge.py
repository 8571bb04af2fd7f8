"""A hostile reader of Panel's server: Bokeh's own websocket protocol, spoken without BokehJS.

A browser is not needed to change the server's document: anyone can open the app's websocket and
send `PATCH-DOC` messages with any value for any property of any model, and events (a click) for
any model. `RawSession` does exactly that, so the tests can check what the server makes of it
(app/intake.py).

    with RawSession("http://127.0.0.1:5006/explorable") as s:
        models = s.models()                      # {id: {"name": type name, "attributes": {...}}}
        s.patch([(model_id, "value", 30000)])    # -> "OK" or "ERROR: ..."
        s.raw_patch('{"events": [...]}')         # content as text: deep or huge JSON included

Values are plain JSON; `NAN`, `INF` stand for Bokeh's encoding of non-finite numbers.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from urllib.parse import urlsplit

from bokeh.util.token import generate_jwt_token, generate_session_id
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

NAN = {"type": "number", "value": "nan"}
INF = {"type": "number", "value": "+inf"}


class RawSession:
    """One session on the server, driven from a thread of its own (sync API for tests)."""

    def __init__(self, url: str, query: str = "", timeout: float = 60, token: str | None = None):
        """A new session of the app at `url`; with `token` (a page's own, from its HTML), a second
        connection to that page's session: what it sets, the page sees."""
        parts = urlsplit(url)
        self.token = token
        self.ws_url = f"ws://{parts.netloc}{parts.path.rstrip('/')}/ws" + (f"?{query.lstrip('?')}" if query else "")
        self.timeout = timeout
        self.session_id = generate_session_id()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.socket = None
        self.doc = None

    # -- plumbing -------------------------------------------------------------------------------
    def _run(self, coro, timeout: float | None = None):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout or self.timeout)

    def __enter__(self) -> RawSession:
        self.thread.start()
        self._run(self._open())
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self.socket is not None:
            self.loop.call_soon_threadsafe(self.socket.close)
            self.socket = None
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _open(self):
        token = self.token or generate_jwt_token(self.session_id)
        self.socket = await websocket_connect(
            HTTPRequest(self.ws_url), subprotocols=["bokeh", token], max_message_size=200 * 1024 * 1024
        )
        self.socket.stream.set_nodelay(True)  # a message is three frames: no waiting between them
        header, _meta, _content = await self._receive()
        assert header["msgtype"] == "ACK", header

    async def _receive(self):
        """One message: (header, metadata, content), its buffers skipped."""
        frames = [await self.socket.read_message() for _ in range(3)]
        if frames[0] is None:
            raise ConnectionError("the server closed the connection")
        header = json.loads(frames[0])
        for _ in range(header.get("num_buffers", 0)):
            await self.socket.read_message()  # buffer header
            await self.socket.read_message()  # buffer bytes
        return header, frames[1], frames[2]

    async def _request(self, msgtype: str, content: str):
        """Send a message; wait for the reply to it (OK, ERROR, PULL-DOC-REPLY), skipping the server's
        own patches in between."""
        msgid = uuid.uuid4().hex
        header = {"msgid": msgid, "msgtype": msgtype}
        await self.socket.write_message(json.dumps(header))
        await self.socket.write_message("{}")
        await self.socket.write_message(content)
        while True:
            head, _meta, body = await self._receive()
            if head.get("reqid") == msgid:
                return head["msgtype"], body

    def next_push(self, timeout: float | None = None) -> str:
        """Wait for the server's next message of its own (a PATCH-DOC when the app changed the
        document); its type. Messages it sent since the last reply wait on the socket: none is missed."""
        header, _meta, _content = self._run(self._receive(), timeout)
        return header["msgtype"]

    # -- what a hostile reader does ---------------------------------------------------------------
    def pull(self) -> dict:
        """The session's document, as the server sends it (plain JSON, nothing resolved)."""
        kind, body = self._run(self._request("PULL-DOC-REQ", "{}"))
        assert kind == "PULL-DOC-REPLY", kind
        self.doc = json.loads(body)["doc"]
        return self.doc

    def models(self) -> dict[str, dict]:
        """Every model of the document: id -> {"name": its type, "attributes": {...}} (first definition)."""
        found: dict[str, dict] = {}

        def walk(x):
            if isinstance(x, dict):
                if x.get("type") == "object" and "id" in x and "name" in x and x["id"] not in found:
                    found[x["id"]] = {"name": x["name"], "attributes": x.get("attributes", {})}
                for v in x.values():
                    walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)

        walk(self.doc if self.doc is not None else self.pull())
        return found

    def patch(self, changes, timeout: float | None = None) -> str:
        """Set (model id, attribute, value) triples in one PATCH-DOC -> 'OK' or 'ERROR: ...'."""
        events = [
            {"kind": "ModelChanged", "model": {"id": mid}, "attr": attr, "new": value} for mid, attr, value in changes
        ]
        return self.raw_patch(json.dumps({"events": events}), timeout)

    def ready(self) -> str:
        """What BokehJS says once it has rendered the document: Panel's session then takes events."""
        content = {
            "events": [
                {
                    "kind": "MessageSent",
                    "msg_type": "bokeh_event",
                    "msg_data": {"type": "event", "name": "document_ready", "values": {"type": "map", "entries": []}},
                }
            ]
        }
        return self.raw_patch(json.dumps(content))

    def raw_patch(self, content: str, timeout: float | None = None) -> str:
        kind, body = self._run(self._request("PATCH-DOC", content), timeout)
        return kind if kind == "OK" else f"{kind}: {body[:300]}"

    def event(self, model_id: str, name: str, values: dict | None = None, timeout: float | None = None) -> str:
        """A UI event of a model, as BokehJS sends a click: e.g. ('p1234', 'button_click')."""
        return self.events([(model_id, name, values)], timeout)

    def events(self, events, timeout: float | None = None) -> str:
        """Several UI events (model id, name, values) in one PATCH-DOC."""
        content = {
            "events": [
                {
                    "kind": "MessageSent",
                    "msg_type": "bokeh_event",
                    "msg_data": {
                        "type": "event",
                        "name": name,
                        "values": {
                            "type": "map",
                            "entries": [["model", {"id": model_id}], *[[k, v] for k, v in (values or {}).items()]],
                        },
                    },
                }
                for model_id, name, values in events
            ]
        }
        return self.raw_patch(json.dumps(content), timeout)


def labelled(models: dict, *keys: str) -> list[str]:
    """The ids of the buttons (and button groups) whose label is the app's text for one of `keys`, in
    any language (app/i18n), as Panel's server says it (its measuring buttons name the server)."""
    from app.figure.parts import PLACES
    from app.i18n import LANGS, tr

    def said(lang: str, key: str) -> str:
        text = tr(lang, key)  # a label's text, its fields unfilled
        return text.format(**{f: tr(lang, keys[1]) for f, keys in PLACES.items()}) if "{where" in text else text

    texts = {said(lang, key) for lang in LANGS for key in keys}
    found = []
    for mid, m in models.items():
        a = m["attributes"]
        labels = a.get("labels") if isinstance(a.get("labels"), list) else [a.get("label")]
        if any(isinstance(x, str) and x in texts for x in labels):
            found.append(mid)
    return found


def open_every_section(s: RawSession, timeout: float = 300) -> dict:
    """Open every section of the session's page (the sections' buttons say `presses`), and wait until
    each says expanded: its contents are built (app/components). The document's models, then."""
    import time

    s.patch([(mid, "presses", 1) for mid in s.models()])  # refused but by the sections' buttons
    deadline = time.monotonic() + timeout
    while True:
        s.doc = None
        models = s.models()
        cards = [m["attributes"] for m in models.values() if m["attributes"].get("name", "").startswith("Disclosure")]
        if cards and all(card.get("expanded") for card in cards):
            return models
        left = deadline - time.monotonic()
        assert left > 0, f"{sum(bool(c.get('expanded')) for c in cards)} of {len(cards)} open"
        s.next_push(timeout=left)  # the server builds the rest at its next ticks, and sends what it built


# The measuring buttons of the sections (their labels' keys in app/i18n)
MEASURING = ("lab_run", "prove_run", "prove_65", "batch_run", "spec_run", "wq_run", "cb_run", "small_compare")


def clicks(s: RawSession, stop, count: int = 2000) -> int:
    """The issue's message, again and again until `stop` is set: `count` clicks in one message (Reiniciar,
    then 62 x Avanzar, repeated). How many messages the server answered OK."""
    models = s.models()
    (reset,), (step,) = labelled(models, "reset")[:1], labelled(models, "step")[:1]
    message = ([(reset, "button_click", None)] + [(step, "button_click", None)] * 62) * (count // 63 + 1)
    sent = 0
    while not stop.is_set():
        assert s.events(message[:count], timeout=600) == "OK"
        sent += 1
    return sent


def floods(s: RawSession, models: dict, stop) -> int:
    """Valid values as fast as the server answers, until `stop` is set: the language, the K/V heads (each
    to the next of its choices), and a click on every measuring button. How many rounds it sent."""
    from app.i18n import language_names

    names = set(language_names().values())
    lang = [mid for mid, m in models.items() if set(m["attributes"].get("labels") or []) == names]
    kv = labelled(models, "small_kv_4")
    buttons = labelled(models, *MEASURING)
    assert lang and kv and len(buttons) >= len(MEASURING) - 1, (lang, kv, buttons)
    rounds = 0
    while not stop.is_set():
        rounds += 1
        assert s.patch([(mid, "active", rounds % 3) for mid in lang], timeout=600) == "OK"
        assert s.patch([(mid, "active", rounds % 3) for mid in kv], timeout=600) == "OK"
        assert s.events([(mid, "button_click", None) for mid in buttons], timeout=600) == "OK"
    return rounds
