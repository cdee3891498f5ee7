"""``python -m prefixlint.replay LOGS ...``: the ``prefixlint replay`` command on its own."""

from prefixlint.cli.replay import replay

replay(prog_name="python -m prefixlint.replay")
