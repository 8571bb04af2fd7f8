"""The page's own components, each with its browser side in files beside it (files.py reads them):
widgets.py (the sections' disclosure buttons, labelled native sliders: disclosure.*, range.*,
widgets.css), a11y.py (the live region, the keyboard, the focus ring: a11y.*), fields.py (numbers
typed the language's way).
"""
