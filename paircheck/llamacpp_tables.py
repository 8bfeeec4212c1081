"""Facts about the reference llama.cpp (vendored in llama-cpp-python 0.3.36, 2026-10-01).

Plain tables, read from ``src/llama-vocab.cpp``, ``src/llama-arch.cpp`` and
``common/speculative.cpp`` of that tree. They change upstream often; keeping them
together makes the version they describe obvious.
"""

from __future__ import annotations

REFERENCE_VERSION = "llama.cpp as vendored in llama-cpp-python 0.3.36 (2026-10-01)"

# enum llama_vocab_type (include/llama.h)
VOCAB_NONE, VOCAB_SPM, VOCAB_BPE, VOCAB_WPM, VOCAB_UGM, VOCAB_RWKV, VOCAB_PLAMO2, VOCAB_TEST = range(8)

VOCAB_TYPE_NAMES = {
    VOCAB_NONE: "NONE",
    VOCAB_SPM: "SPM",
    VOCAB_BPE: "BPE",
    VOCAB_WPM: "WPM",
    VOCAB_UGM: "UGM",
    VOCAB_RWKV: "RWKV",
    VOCAB_PLAMO2: "PLAMO2",
    VOCAB_TEST: "TEST",
}

# tokenizer.ggml.model -> (vocab type, default bos, default eos, default add_bos, default add_eos)
TOKENIZER_MODELS: dict[str, tuple[int, int, int, bool, bool]] = {
    "no_vocab": (VOCAB_NONE, -1, -1, False, False),
    "none": (VOCAB_NONE, -1, -1, False, False),
    "llama": (VOCAB_SPM, 1, 2, True, False),
    "gpt2": (VOCAB_BPE, 11, 11, False, False),
    "hybriddna": (VOCAB_BPE, 11, 11, False, False),
    "whitespace": (VOCAB_BPE, 11, 11, False, False),
    "gemma4": (VOCAB_BPE, -1, -1, False, False),
    "bert": (VOCAB_WPM, 101, -1, True, False),
    "t5": (VOCAB_UGM, -1, 1, False, True),
    "rwkv": (VOCAB_RWKV, -1, -1, False, False),
    "plamo2": (VOCAB_PLAMO2, 1, 2, False, False),
    "test": (VOCAB_TEST, -1, -1, False, False),
}

# Tokenizer models whose BPE merges must be present.
NEEDS_MERGES = frozenset({"gpt2", "hybriddna", "whitespace", "gemma4"})

# Every tokenizer.ggml.pre value the BPE loader accepts; any other fails the load.
BPE_PRE_ADD_BOS = frozenset(
    {
        "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
        "lfm2", "jina-v5-nano", "tekken", "chameleon",
    }
)
BPE_PRE_NO_BOS = frozenset({"chatglm-bpe", "glm4", "glm5"})
BPE_PRE_GEMMA4 = frozenset({"gemma4", "granite-embed-multi-311m"})
BPE_PRE_PLAIN = frozenset(
    {
        "default", "minicpm5", "deepseek-llm", "deepseek-coder", "deepseek-v3", "spark2_5",
        "youtu", "falcon", "mpt", "starcoder", "gpt-2", "phi-2", "jina-es", "jina-de",
        "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "jais-2",
        "sarvam-moe", "jina-v1-en", "jina-v2-code", "roberta-bpe", "whitespace", "refact",
        "command-r", "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "qwen35", "stablelm2",
        "olmo", "dbrx", "smaug-bpe", "poro-chat", "viking", "jais", "smollm", "codeshell",
        "bloom", "gpt3-finnish", "exaone", "exaone4", "exaone-moe", "minerva-7b", "megrez",
        "gpt-4o", "llama4", "kanana2", "talkie", "granite-embed-multi-97m", "tiny_aya",
        "cohere2moe", "superbpe", "trillion", "granite-docling", "bailingmoe", "bailingmoe2",
        "llada-moe", "seed-coder", "hunyuan", "hunyuan-dense", "hy_v4", "joyai-llm",
        "kimi-k2", "ufakzeka", "grok-2", "afmoe", "laguna", "minimax-m2", "solar-open",
        "mellum2",
    }
)
BPE_PRE_KNOWN = BPE_PRE_ADD_BOS | BPE_PRE_NO_BOS | BPE_PRE_GEMMA4 | BPE_PRE_PLAIN

# general.architecture values llama.cpp knows (src/llama-arch.cpp); others fail the load.
ARCHITECTURES = frozenset(
    ["clip", "llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt", "baichuan", "starcoder", "refact", "bert", "modern-bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2", "jina-bert-v3", "eurobert", "bloom", "stablelm", "qwen", "qwen2", "qwen2moe", "qwen2vl", "qwen3", "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "qwen4exp", "phi2", "phi3", "phimoe", "plamo", "plamo2", "plamo3", "codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma", "gemma2", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "gemma-embedding", "starcoder2", "mamba", "mamba2", "maple", "jamba", "falcon-h1", "xverse", "command-r", "cohere2", "cohere2moe", "dbrx", "olmo", "olmo2", "olmoe", "muse-glimmer", "openelm", "arctic", "deepseek", "deepseek2", "deepseek2-ocr", "deepseek32", "deepseek4", "chatglm", "glm4", "glm4moe", "glm-dsa", "bitnet", "t5", "t5encoder", "jais", "jais2", "nemotron", "nemotron_h", "nemotron_h_moe", "exaone", "exaone4", "exaone-moe", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "granite", "granitemoe", "granitehybrid", "graniteswitch", "granite_swa", "chameleon", "wavtokenizer-dec", "plm", "bailingmoe", "bailingmoe2", "bailingmoe3", "dots1", "dots3note", "arcee", "afmoe", "laguna", "ernie4_5", "ernie4_5-moe", "hunyuan-moe", "hunyuan-dense", "hunyuan_vl", "hy_v3", "hy_v4", "smollm3", "gpt-oss", "lfm2", "lfm2moe", "dream", "smallthinker", "llada", "llada-moe", "seed_oss", "grovemoe", "apertus", "minimax-01", "hrm_text", "minimax-m2", "minimax-m3", "cogvlm", "rnd1", "pangu-embedded", "mistral3", "eagle3", "dflash", "mistral4", "paddleocr", "mimo2", "step35", "spark2_5", "llama-embed", "maincoder", "kimi-linear", "kimi-k3", "glm5-next", "talkie", "mellum", "nanbeige", "qwen3tts", "pockettts"]
)

# Texts that make a token end generation (llama_vocab::impl::load, special_eog_ids).
EOG_TEXTS = frozenset(
    {
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
        "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>",
        "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>",
        "<turn|>", "<|tool_response>", "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
    }
)

# Constants of common_speculative_are_compatible (common/speculative.cpp).
SPEC_VOCAB_MAX_SIZE_DIFFERENCE = 128
SPEC_VOCAB_CHECK_START_TOKEN_ID = 5

# GGUF_MAX_STRING_LENGTH in ggml/src/gguf.cpp: longer strings make the file unreadable.
GGUF_MAX_STRING_LENGTH = 1024 * 1024 * 1024
