"""``python -m prefixlint``: the same command line as the ``prefixlint`` script."""

from prefixlint.cli import main

main(prog_name="prefixlint")
