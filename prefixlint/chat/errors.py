"""The one error a renderer raises."""


class TemplateError(Exception):
    """A request cannot be rendered with the chosen template; the message says why."""
