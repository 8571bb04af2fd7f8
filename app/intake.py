"""Trust nothing a browser sends: what reaches the app from the page, and how much of it.

Under Panel's server anyone can open the app's websocket and send any value for any property of
any model, and events for any model (tests/forge.py does). One door stands between that and the
app, `apply_patch`, for every patch a browser sends (Panel's server: `gated_patch`; the static
site's worker: app/wasm.py). Each change is checked on its own, before it touches the document:

1. Someone listens: the app reads that property of that model (Panel's links) or that event of
   that model (a click); nothing else is applied: not a plot's range, a label, a new root, a data
   source, a layout's children.
2. A reader could have made it (`settable`): a widget's value, never its label, options, size or
   state; the page's own components say theirs (`_from_browser`); a layout or a pane, nothing.
3. It is small: a value's JSON is bounded in size and depth (`MAX_BYTES`, `MAX_DEPTH`; the
   sandbox's answer may be larger, `LARGER`).
4. Its declarations take it: Bokeh's property (its type) and the parameter it goes to (its type,
   its bounds, finite: no NaN, no infinity; its choices), and the one the widget is linked to
   (`parts.linked`, `RangeInput.linked`: `widgets.declared`), whose bounds the widget shows: one
   declaration, on the page and here.

A UI event goes to a model that listens to it; a ReactiveHTML component's DOM event, only to a node
and an event type the component declares (`declared_dom_events`): Panel would otherwise call any
method named after them. A message is bounded as a whole too (and its answer paced, `paced_patch`):
the clicks the app takes itself (`command_of`) are queued and coalesced by the app, and Panel handles
at most `MAX_EVENTS` other UI events of one message.

What is refused never reaches the document, so neither the app nor the reader's other pages see
it; each refusal is one line in the log ("refused from the browser: ..."), never a traceback, and
the browser's error reply carries none either. Under Panel's server a session's refusals take at
most `LINES_PER_SECOND` lines a second; one line says how many more there were (app/serverlog.py). The
work a forged value can cause is the work the page itself allows, and a session's document holds
at most a few kilobytes a browser chose.

The URL's arguments are a browser's too: before Bokeh, Panel or the app reads them
(`url_arguments`), each key has its last value only, as the app reads it (app/state/settings.py),
bytes that are not UTF-8 become U+FFFD (the app then shows its notice for a wrong value), and
Bokeh's and Panel's own keys (`bokeh-*`: where the page loads its scripts from) are dropped.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import re
import time

import param

from . import serverlog
from .serverlog import LINES_PER_SECOND, REFUSED, LogQuota, OneLine, quota_for, served  # noqa: F401
from .state.session import message_seen

log = logging.getLogger("app.intake")

MAX_BYTES = 64 * 1024  # a value's JSON: a reader's code fits many times over
MAX_DEPTH = 16  # nesting of lists and objects in one value
LARGER = {"response": 3 * 1024 * 1024}  # the sandbox's answer (app/sandbox reads at most 2 MB of it)
SHOWN = 80  # characters of a refused value in the log line
MAX_EVENTS = 32  # UI events of one message Panel handles (each is a tick of the server's loop and a reply)
READER_SETS = ("value", "value_input", "value_throttled")  # what a reader does with a widget
FOREIGN_KEYS = b"bokeh-"  # URL keys Bokeh and Panel act on; the app's own page never needs them


class Refused(Exception):
    """Why a change or an event from the browser is not applied."""


class Ignored(Refused):
    """What BokehJS itself reports of its layout (a plot's size, an automatic range), which the app
    never reads: not applied, and not worth a line in the log."""


def descriptor(model, attr: str):
    """The Bokeh property `attr` of `model`, or None: Bokeh's own lookup answers with any attribute
    of the class (a method's name finds the method)."""
    from bokeh.core.property.descriptors import PropertyDescriptor

    prop = model.lookup(attr, raises=False)
    return prop if isinstance(prop, PropertyDescriptor) else None


def reported_by_bokehjs(model, attr: str, raw) -> bool:
    """BokehJS sends a plot's measured size (read-only properties) and the automatic ranges it
    computed; with a value of the property's own type that is the page working, not an attack."""
    from bokeh.models import DataRange

    prop = descriptor(model, attr)
    if prop is None or not (prop.readonly or (isinstance(model, DataRange) and attr in ("start", "end"))):
        return False
    return isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw)


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= SHOWN else text[:SHOWN] + f"… ({len(text)} characters)"


def refuse(what: str, why: str, value=None, doc=None) -> None:
    args = ("%s: %s: %s%s", REFUSED, what, why, "" if value is None else f" ({_short(value)})")
    (quota_for(doc) or log.warning)(*args)


# -- what is small ----------------------------------------------------------------------------------


def too_big(value, limit: int) -> str | None:
    """Why a JSON value is too big or too deep (None if it is not), walked without recursion."""
    stack, seen = [(value, 1)], 0
    while stack:
        x, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH}"
        if isinstance(x, str):
            seen += len(x)
        elif isinstance(x, dict):
            seen += len(x)
            for k, v in x.items():
                seen += len(str(k))
                stack.append((v, depth + 1))
        elif isinstance(x, list):
            seen += len(x)
            stack.extend((v, depth + 1) for v in x)
        else:
            seen += 8
        if seen > limit:
            return f"larger than {limit:,} bytes"
    return None


# -- who listens, and what a reader can set --------------------------------------------------------


def listeners(model, attr: str) -> list:
    """The Panel objects that read `attr` of a Bokeh model, with the name Panel gives the property
    (their links are functools.partial(obj._server_change, doc, ref, subpath)); a callback of
    another kind counts as a listener with no Panel object (None)."""
    out = []
    for cb in model._callbacks.get(attr, []):
        func = cb.func if isinstance(cb, functools.partial) else cb
        owner = getattr(func, "__self__", None)
        if isinstance(cb, functools.partial) and owner is not None and len(cb.args) == 3:
            subpath = cb.args[2]
            out.append((owner, f"{subpath}.{attr}" if subpath else attr))
        else:
            out.append((None, attr))
    return out


def settable(obj) -> tuple[str, ...] | None:
    """The parameters a browser may set on a Panel object (None: any, within its declarations)."""
    from panel.layout.base import ListLike
    from panel.pane.base import PaneBase
    from panel.widgets.base import Widget

    own = getattr(type(obj), "_from_browser", None)
    if own is not None:
        return own
    if isinstance(obj, Widget):
        return READER_SETS
    if isinstance(obj, (PaneBase, ListLike)):
        return ()
    return None


def refusal(p: param.Parameter, value) -> str | None:
    """Why the parameter `p` does not take `value` from a browser (None: it does)."""
    if p.constant or p.readonly:
        return "not settable"
    if isinstance(p, param.Number) and not isinstance(p, param.Boolean):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "not a number"
        if not math.isfinite(value):
            return "not finite"
        if isinstance(p, param.Integer) and not float(value).is_integer():
            return "not an integer"
        lo, hi = p.bounds or (None, None)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            return f"outside {lo}..{hi}"
    try:
        p._validate(value)
    except Exception as e:  # the declaration's own check: its type, its choices
        return f"{type(e).__name__}: {str(e)[:160]}"
    return None


def named(obj, key: str) -> str:
    """The parameter a property of a Panel object's model stands for (Panel's mapping, inverted)."""
    return next((p for p, prop in obj._property_mapping.items() if prop == key), key)


def check_param(obj, key: str, value) -> None:
    """Raise Refused unless the Panel object takes `value` for its property `key` from a browser."""
    allowed = settable(obj)
    if key == "active" and not isinstance(value, bool):  # a toggle's is a bool; a group's, an index into
        # its options, and Python would read -1 as the last
        indexes = value if isinstance(value, list) else [value]
        if any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in indexes if i is not None):
            raise Refused("not an index of the options")
    try:
        params = obj._process_property_change({key: value})
    except Exception as e:  # Panel's own mapping failed (an index past the options)
        raise Refused(f"{type(e).__name__}: {str(e)[:160]}") from None
    if not params:
        raise Refused("it sets nothing")
    for name, v in params.items():
        if "." in name or name not in obj.param or (allowed is not None and name not in allowed):
            raise Refused("the browser may not set it")
        why = refusal(obj.param[name], v)
        target = getattr(obj, "_browser_declares", {}).get(name)  # the parameter it is linked to
        if why is None and target is not None:
            why = refusal(target, v)
        if why:
            raise Refused(why)


# -- one change, one event --------------------------------------------------------------------------


def _model(doc, rep):
    mid = rep.get("id") if isinstance(rep, dict) else None
    return doc.get_model_by_id(mid) if isinstance(mid, str) else None


def _event_target(rep: dict):
    """A UI event's (model reference, name), as BokehJS encodes it."""
    data = rep.get("msg_data")
    if not isinstance(data, dict) or data.get("type") != "event" or not isinstance(data.get("name"), str):
        raise Refused("not an event")
    values = data.get("values")
    entries = values.get("entries") if isinstance(values, dict) else None
    model = None
    if isinstance(entries, list):
        model = next((e[1] for e in entries if isinstance(e, list) and len(e) == 2 and e[0] == "model"), None)
    return model, data["name"]


def decoded(doc, rep: dict, buffers):
    """The event with its values decoded as Bokeh decodes them (NaN, references to known models)."""
    from bokeh.core.serialization import Deserializer, Serialized

    try:
        return Deserializer(list(doc.models)).deserialize(Serialized(rep, buffers))
    except Exception as e:
        raise Refused(f"{type(e).__name__}: {str(e)[:160]}") from None


def check_change(doc, rep: dict, buffers) -> None:
    """Raise Refused unless a ModelChanged event passes every gate (the module's docstring)."""
    model, attr = _model(doc, rep.get("model")), rep.get("attr")
    if model is None:
        raise Refused("no such model")
    who = listeners(model, attr) if isinstance(attr, str) else []
    if not who:
        if reported_by_bokehjs(model, attr, rep.get("new")):
            raise Ignored("BokehJS's own report")
        raise Refused("the app does not listen to it")
    for owner, key in who:  # before anything is decoded: who may set it at all
        allowed = settable(owner) if owner is not None else None
        if allowed is not None and named(owner, key) not in allowed:
            raise Refused("the browser may not set it")
    why = too_big(rep.get("new"), LARGER.get(attr, MAX_BYTES))
    if why:
        raise Refused(why)
    new = decoded(doc, rep, buffers)["new"]
    prop = descriptor(model, attr)
    if prop is None or not prop.property.is_valid(new):
        raise Refused(f"not a valid {type(model).__name__}.{attr}")
    for owner, key in who:
        if owner is not None:
            check_param(owner, key, new)


def page_ready(doc) -> bool:
    """Under Panel's server: the page has said it is ready (BokehJS's document_ready). Before that,
    Panel runs an event's callbacks outside the document's lock, where any change they make fails."""
    if not served(doc):
        return True
    from panel.io.state import state

    return bool(state._connected.get(doc))


def declared_dom_events(obj) -> set[tuple[str, str]]:
    """The (node, event type) pairs a ReactiveHTML component sends its server: Panel's `_dom_events`
    and `on_event` callbacks (as it tells BokehJS: `_get_events`) and its template's `${method}`
    bindings (`_inline_callbacks`: their type is the attribute, "onclick", as BokehJS sends it)."""
    pairs = {(node, kind) for node, kinds in obj._get_events().items() for kind in kinds}
    pairs.update((node, attr) for node, attr, _method in getattr(obj, "_inline_callbacks", ()))
    return pairs


LOOP_INDEX = re.compile(r"\{\{.*?loop\.index.*?\}\}")


def _node_matches(pattern: str, node: str) -> bool:
    """A node of the template; one named in a loop ("cell-{{ loop.index0 }}") stands for each copy."""
    return re.fullmatch(r"\d+".join(map(re.escape, LOOP_INDEX.split(pattern))), node) is not None


def check_dom_event(doc, model, rep: dict) -> None:
    """Raise Refused unless a DOM event goes to a node and an event type its component declares."""
    values = decoded(doc, rep, None)["msg_data"]
    node, data = getattr(values, "node", None), getattr(values, "data", None)
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(node, str) or not isinstance(kind, str):
        raise Refused("not a DOM event")
    owners = [getattr(getattr(cb, "func", cb), "__self__", None) for cb in model._event_callbacks.get("dom_event", [])]
    for owner in owners:
        declared = declared_dom_events(owner) if hasattr(owner, "_get_events") else set()
        if not any(_node_matches(n, node) for n, k in declared if k == kind):
            raise Refused(f"the component does not declare the DOM event {node[:40]!r} {kind[:40]!r}")


def check_event(doc, rep: dict) -> None:
    """Raise Refused unless a UI event goes to a model (or the document) that listens to it (a DOM
    event: to a node and an event type its component declares)."""
    if rep.get("msg_type") != "bokeh_event":
        raise Refused(f"a browser may not send the message {str(rep.get('msg_type'))[:40]!r}")
    ref, name = _event_target(rep)
    if name != "document_ready" and not page_ready(doc):
        raise Refused(f"the event {name[:40]!r} came before the page said it was ready")
    model = None
    if ref is None:
        listening = doc.callbacks.event_callbacks_for_event_name(name)
    else:
        model = _model(doc, ref)
        listening = model is not None and model._event_callbacks.get(name)
    if not listening:
        raise Refused(f"the app does not listen to the event {name[:40]!r}")
    why = too_big(rep, MAX_BYTES)
    if why:
        raise Refused(why)
    if name == "dom_event":
        if model is None:
            raise Refused("a DOM event names no component")
        check_dom_event(doc, model, rep)


def command_of(doc, rep: dict):
    """The app's own command for a click (a button the app gave `_command`: app/figure/controls.py), or
    None. It gets the click at once, and queues and coalesces it (app/state/commands.py): Panel would
    handle each click at a tick of its own and send its count back to the browser, some 8 ms a click."""
    ref, name = _event_target(rep)
    model = _model(doc, ref) if name == "button_click" else None
    for cb in model._event_callbacks.get(name, []) if model is not None else []:
        owner = getattr(cb.func if isinstance(cb, functools.partial) else cb, "__self__", None)
        if getattr(owner, "_command", None) is not None:
            return owner._command
    return None


def _what(doc, rep) -> str:
    if not isinstance(rep, dict):
        return "?"
    if rep.get("kind") == "ModelChanged":
        model, attr = _model(doc, rep.get("model")), str(rep.get("attr"))[:40]
        owners = [o for o, _key in listeners(model, attr)] if model is not None else []
        if owners and owners[0] is not None:  # the Panel object, as the app names it
            return f"{type(owners[0]).__name__}.{attr}"
        return f"{type(model).__name__ if model is not None else '?'}.{attr}"
    return str(rep.get("kind"))[:40]


def apply_patch(doc, patch, setter=None, strict: bool = False) -> int:
    """Apply the admitted events of a browser's patch ({"events": [...]}, or Bokeh's Serialized), one
    at a time; refuse the rest, a line each. Returns how many were applied. Something that is not a
    patch at all is refused too, or, `strict` (the static site's worker, whose patches come from the
    page's own loader), raised: there it is a bug of the page, shown as one."""
    from bokeh.core.serialization import Serialized

    buffers = patch.buffers if isinstance(patch, Serialized) else None
    content = patch.content if isinstance(patch, Serialized) else patch
    events = content.get("events") if isinstance(content, dict) else None
    if not isinstance(events, list):
        if strict:
            raise ValueError(f"not a patch: {_short(content)}")
        refuse("patch", "no list of events", content, doc)
        return 0
    applied, handled, seen = 0, 0, {}
    for rep in events:
        try:
            if not isinstance(rep, dict):
                raise Refused("not an event")
            if rep.get("kind") == "ModelChanged":
                check_change(doc, rep, buffers)
            elif rep.get("kind") == "MessageSent":
                key = repr(rep)  # the same click again in one message: checked once
                if key not in seen:
                    check_event(doc, rep)
                    seen[key] = command_of(doc, rep)
                command = seen[key]
                if command is not None:
                    command()
                    applied += 1
                    continue
                handled += 1
                if handled > MAX_EVENTS:
                    raise Refused(f"more than {MAX_EVENTS} UI events in one message")
            else:
                raise Refused(f"a browser may not send {str(rep.get('kind'))[:40]!r}")
            doc.apply_json_patch(Serialized({"events": [rep]}, buffers), setter=setter)
            applied += 1
        except Ignored:
            pass
        except Refused as e:
            refuse(_what(doc, rep), str(e), rep.get("new") if isinstance(rep, dict) else rep, doc)
    return applied


def gated_patch(self, message, connection):
    """bokeh.server.session.ServerSession._handle_patch, through the door (`install` puts it under
    the document's lock, as Bokeh's own)."""
    from bokeh.document.callbacks import invoke_with_curdoc

    self._current_patch_connection = connection
    try:
        invoke_with_curdoc(self.document, lambda: apply_patch(self.document, message.payload, setter=self))
    finally:
        self._current_patch_connection = None
    return connection.ok(message)


# -- the URL's arguments -------------------------------------------------------------------------------


def _utf8(x) -> bytes | None:
    """One value as UTF-8 bytes (bad bytes and lone surrogates replaced); None if it is no text."""
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace").encode("utf-8")
    if isinstance(x, str):
        return x.encode("utf-8", "replace").decode("utf-8", "replace").encode("utf-8")
    return None


def url_arguments(arguments) -> dict[str, list[bytes]]:
    """A request's arguments ({key: [bytes, ...]}, from the URL or a session's token, which a browser
    writes too) as every reader of them takes them (the module's docstring)."""
    out: dict[str, list[bytes]] = {}
    for key, values in arguments.items() if isinstance(arguments, dict) else ():
        key = _utf8(key)
        texts = [v for v in map(_utf8, values if isinstance(values, list) else [values]) if v is not None]
        if key is not None and texts and not key.startswith(FOREIGN_KEYS):
            out[key.decode("utf-8")] = texts[-1:]
    return out


def checked_request(init):
    """bokeh.server.contexts._RequestProxy.__init__, whose arguments are a session's (Panel's
    `state.session_args`), then `url_arguments`."""

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._arguments = url_arguments(self._arguments)

    __init__.checked = True
    return __init__


def check_session_arguments(doc) -> None:
    """The arguments of a session whose request came before `install` (the first of plain `panel serve
    app/explorable.py`, which installs it with its first session), checked as every later one's."""
    request = doc.session_context.request if served(doc) else None
    if request is not None and isinstance(getattr(request, "_arguments", None), dict):
        request._arguments = url_arguments(request._arguments)


def plain_error(self, message, text: str):
    """bokeh.server.connection.ServerConnection.error: the reply names the error, never the server's
    traceback (its files and lines)."""
    reply = self.protocol.create("ERROR", message.header["msgid"], str(text)[:200])
    reply.content["traceback"] = None
    return reply


locked_patch = None  # gated_patch under the document's lock (install)
PACE = 5  # a session's patch that took the loop a while is answered after PACE times as long again
PACED_FROM = 0.01  # seconds: a reader's own patches take less, and are answered at once


async def paced_patch(self, message, connection):
    """`gated_patch` under the document's lock; then, if it took the server's loop PACED_FROM or more, the
    answer waits PACE times as long, outside the lock. A session's next message waits for the answer
    (Bokeh's client does; and the server reads a connection's messages one at a time), so one session's
    patches take at most 1 / (1 + PACE) of the loop, however large each is."""
    start = time.perf_counter()
    try:
        reply = await locked_patch(self, message, connection)
    finally:
        message_seen()  # the sessions' costly work waits for a pause in the messages (app/state/session.py)
    took = time.perf_counter() - start
    if took >= PACED_FROM:
        await asyncio.sleep(PACE * took)
    return reply


def install() -> None:
    """The door for Panel's server, once per process, before it takes a request: patches, the URL's
    arguments, error replies; Bokeh's messages about a browser's message it cannot read (JSON nested
    too deep, say) in one line."""
    from bokeh.server import contexts
    from bokeh.server.connection import ServerConnection
    from bokeh.server.session import ServerSession, _needs_document_lock

    if not getattr(contexts._RequestProxy.__init__, "checked", False):
        contexts._RequestProxy.__init__ = checked_request(contexts._RequestProxy.__init__)
    ServerConnection.error = plain_error
    global locked_patch  # gated_patch under the document's lock, answered by paced_patch
    if ServerSession._handle_patch is not paced_patch:
        locked_patch = _needs_document_lock(gated_patch)
        ServerSession._handle_patch = paced_patch
    serverlog.install()
