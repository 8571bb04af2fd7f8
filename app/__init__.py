"""The explorable: state and logic in plain Python, thin Panel/Bokeh views on top."""
