"""The reader's state, in plain Python and `param` (no Panel): testable without a browser.

settings.py (what a reader or a URL sets, with its bounds), explorer.py (the Explorer: the text, the
cache, each step computed both ways), session.py (settings + explorer + the revision the views
watch), clock.py (what the clock says, in numbers and in words), checkpoints.py (the other
checkpoints, loaded when the reader asks).
"""
