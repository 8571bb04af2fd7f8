"""A reader's clicks on the text's controls, coalesced: what one message (or a burst) of them asks is
at most a window's worth of work, and leaves the explorer in the state running them one by one would.

Plain Python, no Panel: `coalesce` reads only positions. The rules it keeps:

- `reset` starts over from the seed: whatever stepping or stepping back came before it leaves no trace
  (the mode switches and the animation's toggles before it still count: they stay).
- `step` at the window's end fails with the lesson's error and changes nothing else; a second failing
  step in a row is the same state again: dropped.
- `back` right after a step that advanced undoes it exactly (Explorer.back) when the step appended to
  the cache (the cache's mode, or a cache of fewer bits): both are dropped. Without the cache (the
  lesson's float64 one), the step keeps the full pass's K and V, so the pair is kept, and the same pair
  again at once leaves the same state: dropped. After a failing step a back is the same as the back
  alone; at the prompt it changes nothing: dropped.
- `toggle` (the mode) and `play` (the animation) are kept in place; between two other commands they
  commute, and two of the same kind cancel.

So after a burst the explorer runs at most one reset, the steps back the text already had, and the
steps to the window's end and one more: bounded by the window, whatever the number of clicks.
"""

from __future__ import annotations

from dataclasses import dataclass

STEP, BACK, RESET, TOGGLE, PLAY = "step", "back", "reset", "toggle", "play"
COMMANDS = (STEP, BACK, RESET, TOGGLE, PLAY)
SWITCHES = (TOGGLE, PLAY)  # each one undoes another of its kind


@dataclass
class Position:
    """What coalescing reads of the explorer: its position, the window, the prompt's length, and how
    many tokens it can step back (drawn since the prompt)."""

    t: int
    n_ctx: int
    n_prompt: int
    past: int
    failed: bool = False  # the last step failed at the window's end
    appends: bool = True  # a step appends to the cache (its mode, or fewer bits): a back undoes it to the bit
    fewer_bits: bool = False  # the cache keeps fewer bits: a step appends to it in either mode


def coalesce(commands, where: Position) -> list[str]:
    """The commands that leave the explorer as `commands`, run one by one from `where`, would."""
    kept: list[tuple[str, object]] = []  # (command, whether it moved the text, or "pair": a back kept)
    t, past, failed, appends = where.t, where.past, where.failed, where.appends
    for command in commands:
        if command == RESET:
            kept = [k for k in kept if k[0] in SWITCHES] + [(RESET, True)]
            t, past, failed = where.n_prompt, 0, False
        elif command == STEP:
            if t < where.n_ctx:
                kept.append((STEP, True))
                t, past, failed = t + 1, past + 1, False
            elif not failed:
                kept.append((STEP, False))
                failed = True
        elif command == BACK:
            if kept and kept[-1] == (STEP, False):  # the failed step leaves nothing the back keeps
                kept.pop()
            failed = False
            if kept and kept[-1] == (STEP, True):
                kept.pop()
                if not appends and kept[-2:] != [(STEP, True), (BACK, "pair")]:
                    kept += [(STEP, True), (BACK, "pair")]
                t, past = t - 1, past - 1
            elif past > 0:
                kept.append((BACK, True))
                t, past = t - 1, past - 1
        elif command in SWITCHES:
            kept.append((command, False))
            if command == TOGGLE:
                appends = where.fewer_bits or not appends
        else:
            raise ValueError(f"not a command: {command!r}")
    return switched_once([command for command, _moved in kept])


def switched_once(commands: list[str]) -> list[str]:
    """Each run of switches between two other commands as at most one of each kind (they commute, and
    two of a kind cancel)."""
    out: list[str] = []
    for command in commands:
        if command in SWITCHES:
            run = len(out)
            while run and out[run - 1] in SWITCHES:
                run -= 1
            if command in out[run:]:
                del out[out.index(command, run)]
                continue
        out.append(command)
    return out
