"""Chat-template renderers that know which request component produced each piece of text."""
