"""``prefixlint tokens``: token boundaries of a text, or where two texts stop sharing a prefix."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from prefixlint.cli.group import UserError
from prefixlint.output.style import to_text, wants_color
from prefixlint.plural import counted
from prefixlint.textio import UnreadableText, decode
from prefixlint.tokenizers import DEFAULT_TOKENIZER, get_tokenizer
from prefixlint.tokenview import (
    divergence,
    model_text,
    render_tokens,
    token_pieces,
    unescape,
    visible,
    window,
)


def _text_argument(value: str, raw: bool) -> tuple[str, str]:
    """``(label, text)``: a file's contents if ``value`` names a file, else the value itself."""
    path = Path(value)
    if path.is_file():
        try:
            return value, decode(path.read_bytes()).text
        except UnreadableText as exc:
            raise UserError(f"{value}:{exc.line}:{exc.column}: {exc.message}") from None
        except OSError as exc:
            raise UserError(f"{value}: cannot read: {exc.strerror or exc}") from None
    return "text", value if raw else unescape(value)


@click.command()
@click.argument("first")
@click.argument("second", required=False)
@click.option("--tokenizer", "spec", default=DEFAULT_TOKENIZER, show_default=True)
@click.option("--block-size", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--raw", is_flag=True, help="Take TEXT literally (no \\n, \\t, \\uXXXX escapes).")
def tokens(first: str, second: str | None, spec: str, block_size: int, raw: bool) -> None:
    """Show the token boundaries of TEXT_OR_FILE, or where two texts stop sharing a prefix.

    Literal TEXT understands \\n, \\r, \\t, \\\\, \\xNN and \\uNNNN escapes.
    """
    tokenizer = get_tokenizer(spec)
    color = wants_color(sys.stdout)
    label_a, text_a = _text_argument(first, raw)
    if second is None:
        shown = model_text(text_a, tokenizer)
        pieces = token_pieces(shown, tokenizer)
        count = counted(len(pieces), "token")
        lines = [render_tokens(pieces, color), "", f"{count} ({tokenizer.name})"]
        if shown != text_a:
            lines.append("note: the tokenizer normalises this text (NFC) before encoding")
        click.echo(to_text("\n".join(lines) + "\n", color), nl=False)
        return
    label_b, text_b = _text_argument(second, raw)
    if label_a == label_b == "text":
        label_a, label_b = "first", "second"
    found = divergence(text_a, text_b, tokenizer, block_size)
    click.echo(f"tokenizer: {tokenizer.name}, block size {block_size}")
    counts = counted(found.tokens_a, "token"), counted(found.tokens_b, "token")
    click.echo(f"{label_a}: {counts[0]}; {label_b}: {counts[1]}")
    if found.char_offset is None:
        click.echo("identical texts: the whole prompt is a shared prefix")
        return
    click.echo(
        f"first different character: offset {found.char_offset}"
        f" (line {found.line}, column {found.column})"
    )
    click.echo(f"  {label_a}: {window(text_a, found.char_offset)}")
    click.echo(f"  {label_b}: {window(text_b, found.char_offset)}")
    if found.token_index is None:
        click.echo("token sequences are identical (the tokenizer normalises the difference away)")
        return
    shown_a, shown_b = model_text(text_a, tokenizer), model_text(text_b, tokenizer)
    offsets_a = tokenizer.offsets(shown_a)
    index = found.token_index
    click.echo(f"first different token: #{index} (engine block {found.block_index})")
    for label, shown, offsets in (
        (label_a, shown_a, offsets_a),
        (label_b, shown_b, tokenizer.offsets(shown_b)),
    ):
        piece = shown[slice(*offsets[index])] if index < len(offsets) else None
        click.echo(f"  {label}: " + (f"'{visible(piece, False)}'" if piece else "(end of text)"))
    if index < len(offsets_a) and offsets_a[index][0] < found.char_offset:
        before = found.char_offset - offsets_a[index][0]
        click.echo(
            f"  the token starts {before} character(s) before the first difference:"
            " BPE merged the changed text with what precedes it"
        )
    click.echo(
        f"shared prefix: {counted(found.shared_tokens, 'token')};"
        f" {found.reusable_block_tokens} in full blocks of {block_size}"
    )
