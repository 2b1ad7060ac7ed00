"""How tokenizers write token text: GPT-2's byte-to-character table and the texts of
end-of-turn tokens. Shared by the vocabulary loaders; knows nothing of grammars."""

from __future__ import annotations

#: Texts of tokens that end a turn or a document. llama.cpp recognises them by text, whatever
#: their token type, and stops on them; so they are EOS here too (never allowed inside a document).
END_OF_GENERATION_TEXTS = frozenset(t.encode("utf-8") for t in (
    "</s>", "<eos>", "<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "<|eom_id|>", "<|im_end|>",
    "<|end|>", "<end_of_turn>", "<turn|>", "<EOT>", "_<EOT>", "<end_of_utterance>", "[EOT]", "[EOS]",
    "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<|tool_response>", "[e~[",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
    # fill-in-the-middle padding and separators, which llama.cpp also treats as ends
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
    "<repo_name>", "<|file_sep|>", "<file_sep>", "<fim-sep>", "<FILE_SEP>",
))


def gpt2_unicode_to_bytes() -> dict[str, int]:
    """The inverse of GPT-2's bytes→unicode table: byte-level BPE writes each byte as one
    printable character (printable Latin-1 bytes as themselves, the rest shifted to U+0100+)."""
    printable = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table = {chr(b): b for b in printable}
    shift = 0
    for byte in range(256):
        if byte not in table.values():
            table[chr(0x100 + shift)] = byte
            shift += 1
    return table
