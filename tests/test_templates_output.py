"""How template findings read: long source lines cut to a window, counts in the singular,
fix texts that name the character."""

from prefixlint import registry
from prefixlint.context import RuleContext
from prefixlint.linting.engine import FileResult
from prefixlint.output import Report, render
from prefixlint.output.full import MAX_SHOWN
from prefixlint.sources import source_module
from prefixlint.types import Span


def full_output(path, text, line, column, end_column):
    span = Span(path, line, column, line, end_column)
    found = registry.diagnostic("PFX902", "m", span, stable_prefix_tokens=1, unstable_tokens=2)
    return render(Report([FileResult(path, diagnostics=[found], text=text)]), "full")


def snippet(output):
    """The source line and the caret line of a one-finding full report."""
    lines = output.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("1 | "))
    return lines[row].removeprefix("1 | "), lines[row + 1].removeprefix("  | ")


def test_a_long_line_is_cut_to_a_window_around_the_finding():
    text = "x" * 3000 + "HERE" + "y" * 3000 + "\n"
    shown, carets = snippet(full_output("t.json", text, 1, 3001, 3005))
    assert len(shown) <= MAX_SHOWN + 2
    assert shown.startswith("…") and shown.endswith("…")
    assert shown[carets.index("^") :].startswith("HERE")
    assert carets.strip() == "^^^^"


def test_a_finding_that_spans_a_long_line_gets_a_bounded_underline():
    text = "z" * 5000 + "\n"
    shown, carets = snippet(full_output("t.json", text, 1, 1, 5001))
    assert shown.endswith("…") and not shown.startswith("…")
    assert carets.count("^") == MAX_SHOWN


def test_short_lines_are_shown_whole():
    shown, carets = snippet(full_output("t.txt", "short line\n", 1, 7, 11))
    assert (shown, carets) == ("short line", "      ^^^^")


def test_the_prefix_note_says_one_token():
    output = full_output("t.txt", "short line\n", 1, 1, 2)
    assert "stable prefix: 1 token, then 2 tokens that" in output


def test_invisible_character_fixes_name_the_character():
    text = "a\u00a0b\ufeffc\n"
    found = source_module("p.txt", text).check(text, RuleContext("p.txt", frozenset({"PFX403"})))
    assert [d.fix.message for d in found] == [
        "Write a plain space for the no-break space (U+00A0)",
        "Remove the byte-order mark (U+FEFF)",
    ]
