"""Replays of logged requests: on cache models (``sim``), on a real transformer with a paged KV
block pool (``torch``), and against a running engine server (``server``)."""


class ReplayError(Exception):
    """Bad replay input or setup; the command line prints it on one line and exits 2."""
