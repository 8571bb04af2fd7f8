"""The figure above the sections, in thin Panel/Bokeh parts over one Session (app/state/session.py).

parts.py (what every part stands on), text.py (title, notices, the text, the error), grid.py (the
cache grid, zoomed on a phone), plots.py (what the query reads, the cost bars, the clock), readouts.py (the numbers, the data
table, the page's state), controls.py (buttons, keyboard, advanced settings); snapshot.py draws the
first paint the build writes into the static page.
"""
