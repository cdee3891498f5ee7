"""Chat-template renderers that know which request component produced each piece of text."""


class TemplateError(Exception):
    """A request cannot be rendered with the chosen template; the message says why."""
