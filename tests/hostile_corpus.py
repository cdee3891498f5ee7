"""Adversarial inputs written for the hostile-input tests: name -> file bytes.

Each shape once crashed, hung or blew up a parser somewhere (deep nesting, long operator
chains, alias bombs, huge numbers, sandbox escapes by size); the names say which.
"""

from __future__ import annotations

import json

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def _nest(opener: str, closer: str, depth: int, inner: str = "1") -> str:
    return opener * depth + inner + closer * depth


def _templates() -> dict[str, str]:
    return {
        "unclosed.j2": "Hi {{ name\n{% for x in y %}\n",
        "paren80.j2": "Hi {{ " + _nest("(", ")", 80, "x") + " }}\n",
        "paren80.txt": "Hi {{ " + _nest("(", ")", 80, "x") + " }}\n",
        "tilde_chain.j2": "{{ a" + " ~ a" * 5000 + " }}\n",
        "filter_chain.j2": "{{ a" + "|trim" * 3000 + " }}\n",
        "many_placeholders.txt": "{{ x }}" * 20000 + "\n",
        "open_braces.txt": "{{" * 20000 + "\n",
        "mustache_sections.mustache": "{{#a}}" * 500 + "x" + "{{/a}}" * 500 + "\n",
        "format_braces.prompt": "{" * 5000 + "x" + "}" * 5000 + "\n",
        "format_nested_spec.prompt": "{0:{1:{2:{3}}}}\n",
        "dollar.txt": "${" * 5000 + "\n",
        "long_line.md": "a" * 1_000_000 + "\n",
        "mixed_endings.txt": "a\r\nb\nc\rd\r\n{{ now }}\r",
        "bom_crlf.txt": "\ufeffSystem\r\n{{ today }}\r\n",
        "zero_width.txt": "Hi\u200b\u200d\u00a0{{ x }}\ufeff\n",
        "comment_nest.j2": "{#" * 3000 + "#}" * 3000 + "\n",
        "raw_block.j2": "{% raw %}" * 1000 + "{{ x }}\n",
    }


def _prompt_files() -> dict[str, str]:
    return {
        "laughs.yaml": "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + LAUGHS
        + "system: hi\nmessages: [*i]\n",
        "recursive_alias.yaml": "system: &a [hi, *a]\n",
        "recursive_map.yaml": "system: &a {x: *a}\n",
        "deep_flow.yaml": "system: hi\nx: " + _nest("[", "]", 1000) + "\n",
        "deep_block.yaml": "system: hi\n"
        + "".join("  " * i + f"k{i}:\n" for i in range(500))
        + "  " * 500
        + "v\n",
        "huge_int.yaml": "system: hi\nmessages: []\nx: " + "9" * 5000 + "\n",
        "tags.yaml": "system: !!python/object/apply:os.system ['echo hi']\n",
        "many_docs.yaml": "---\nsystem: hi\n" * 5000,
        "deep.json": '{"system": "hi", "x": ' + _nest("[", "]", 100_000) + "}",
        "huge_int.json": '{"system": "hi {{ x }}", "n": ' + "9" * 5000 + "}",
        "many_keys.json": json.dumps(
            {f"prompt_{i}": f"text {{{{ v{i} }}}}" for i in range(50_000)}
        ),
        "dup_keys.json": '{"system": "a {{ now }}", "system": "b"}',
        "lone_surrogate.json": '{"system": "hi \\ud800 {{ x }}"}',
        "deep.toml": 'system = "hi"\nx = ' + _nest("[", "]", 1000) + "\n",
        "deep_inline.toml": 'system = "hi"\nx = ' + "{a = " * 1000 + "1" + "}" * 1000 + "\n",
        "huge_int.toml": 'system = "hi"\nn = ' + "9" * 5000 + "\n",
        "tables.toml": "".join(f"[t{i}]\nsystem = 'x {{{{ now }}}}'\n" for i in range(3000)),
    }


def _python() -> dict[str, str]:
    prompt = 'SYSTEM_PROMPT = "You are helpful."\n'
    return {
        "parens.py": prompt + "prompt = " + _nest("(", ")", 2000, '"a"') + "\n",
        "lists.py": prompt + "messages = " + _nest("[", "]", 1500, "") + "\n",
        "dicts.py": prompt + "messages = " + "{'a': " * 1500 + "1" + "}" * 1500 + "\n",
        "concat.py": prompt + "prompt = " + " ".join(['"a"'] * 10000) + "\n",
        "plus_concat.py": prompt + "prompt = " + " + ".join(['"a"'] * 10000) + "\n",
        "binop.py": prompt + "prompt = " + " + ".join(["a"] * 10000) + "\n",
        "unary.py": prompt + "prompt = " + "-" * 10000 + "1\n",
        "nots.py": prompt + "prompt = " + "not " * 5000 + "x\n",
        "attributes.py": prompt + "prompt = a" + ".b" * 10000 + "\n",
        "calls.py": prompt + "prompt = f" + "()" * 10000 + "\n",
        "lambdas.py": prompt + "prompt = " + "lambda: " * 10000 + "1\n",
        "fstring_parens.py": prompt + 'prompt = f"{' + _nest("(", ")", 3000, "x") + '}"\n',
        "ifs.py": prompt
        + "".join("    " * i + "if x:\n" for i in range(300))
        + "    " * 300
        + "pass\n",
        "decorators.py": prompt + "@d\n" * 5000 + "def f(): pass\n",
        "elifs.py": prompt + "if a:\n    pass\n" + "elif a:\n    pass\n" * 20000,
        "fstrings.py": prompt + 'prompt = f"{' + "f'{" * 3 + "x" + "}'" * 3 + '}"\n',
        "huge_int.py": prompt + "n = " + "9" * 5000 + "\n",
        "big_dict.py": "messages = [{"
        + ", ".join(f"'k{i}': {i}" for i in range(10000))
        + "}]\nSYSTEM_PROMPT = 'x'\n",
        "form_feed.py": "\x0c" * 100 + prompt,
        "bad_indent.py": prompt + "def f():\n\tif x:\n        pass\n",
        "unterminated.py": prompt + 'prompt = """never closed\n',
    }


def _chat_templates() -> dict[str, str]:
    hostile = {
        "nested_range": "{% for i in range(100000) %}{% for j in range(100000) %}"
        "{% endfor %}{% endfor %}",
        "repeat": "{{ 'a' * 10**9 }}",
        "center": "{{ 'a'.center(10**9) }}",
        "format_width": "{{ '{:>1000000000}'.format('x') }}",
        "printf_width": "{{ '%1000000000d' % 5 }}",
        "doubling": "{% set ns = namespace(s='ab') %}{% for i in range(60) %}"
        "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "macro_recursion": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
        "power": "{{ 7 ** 1000000000 }}",
        "paren80": "{{ " + _nest("(", ")", 80) + " }}",
        "escape_attr": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "escape_globals": "{{ raise_exception.__globals__ }}",
        "deep_for": "{% for a in messages %}" * 200 + "{% endfor %}" * 200,
    }
    found = {f"{name}.jinja": body + "\n" + CHATML for name, body in hostile.items()}
    found["tokenizer_config.json"] = json.dumps(
        {"bos_token": "<s>", "chat_template": hostile["repeat"] + CHATML}
    )
    return found


def corpus() -> dict[str, bytes]:
    """Every adversarial input, by file name (the suffix picks the checker)."""
    texts = {**_templates(), **_prompt_files(), **_python(), **_chat_templates()}
    found = {name: text.encode("utf-8", "surrogatepass") for name, text in texts.items()}
    found["binary.txt"] = b"Hello\x00\x01\x02{{ x }}\n"
    found["latin1.txt"] = b"caf\xe9 {{ x }}\n"
    found["truncated_utf8.md"] = "Hi {{ x }} é".encode()[:-1]
    found["utf16.txt"] = "\ufeffHello {{ now }}\r\n".encode("utf-16-le")
    found["bad_utf16.txt"] = b"\xff\xfe\x00\xd8"
    return found
