"""The ENTRYPOINT of the engines' published container images, for a compose service or a
Kubernetes container that gives only arguments (``command: -m /models/x.gguf ...``).

llama.cpp: .devops/cpu.Dockerfile (and cuda, rocm, vulkan, musa, intel, openvino, s390x, all
with the same stages) of the llama.cpp vendored in llama-cpp-python 0.3.36: the ``server``
stage ``ENTRYPOINT [ "/app/llama-server" ]`` with ``ENV LLAMA_ARG_HOST=0.0.0.0``, ``light``
``ENTRYPOINT [ "/app/llama-cli" ]``, ``full`` ``ENTRYPOINT ["/app/tools.sh"]`` (whose first
argument picks the program: ``--server``/``-s`` llama-server, ``--run``/``-r`` llama-cli,
.devops/tools.sh); docs/docker.md names the tags (``server``, ``server-cuda``, ``light-rocm``, ...).
The images were published as ghcr.io/ggerganov/llama.cpp before the move to ggml-org.

vLLM: docker/Dockerfile of vllm-project/vllm at 0000977eaf873be6a295cf73017976d49ca2fb9d, the
``vllm-openai`` stage (the image ``vllm/vllm-openai``): ``ENTRYPOINT ["python3", "-m",
"vllm.entrypoints.openai.api_server"]`` from ``WORKDIR /vllm-workspace``, which takes the model
as ``--model`` (vLLM's
docs/deployment/docker.md: ``docker run ... vllm/vllm-openai:latest --model ...``).
"""

from __future__ import annotations

from dataclasses import dataclass

from paircheck.preflight.files.found import Word

REPOSITORIES = ("ghcr.io/ggml-org/llama.cpp", "ghcr.io/ggerganov/llama.cpp")
STAGES = {"server": ["/app/llama-server"], "light": ["/app/llama-cli"], "full": ["/app/tools.sh"]}
STAGE_ENV = {"server": {"LLAMA_ARG_HOST": "0.0.0.0"}}
# tools.sh: its first argument -> the program it execs (the rest of the arguments follow).
VLLM_REPOSITORIES = ("vllm/vllm-openai", "docker.io/vllm/vllm-openai")
VLLM_ENTRYPOINT = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
TOOLS_SH = {"--server": "./llama-server", "-s": "./llama-server", "--run": "./llama-cli", "-r": "./llama-cli",
            "--run-legacy": "./llama-completion", "-l": "./llama-completion"}


def _name_and_tag(image: str) -> tuple[str, str]:
    name, _, tag = image.partition("@")[0].rpartition(":")
    if not name or "/" in tag:
        return image.partition("@")[0], "latest"
    return name, tag


def image_stage(image: str) -> str | None:
    """'server', 'light' or 'full' for a llama.cpp image reference, else None."""
    name, tag = _name_and_tag(image)
    if name not in REPOSITORIES:
        return None
    stage = tag.split("-", 1)[0]
    return stage if stage in STAGES else None


@dataclass(frozen=True)
class Image:
    """What a published image's Dockerfile sets for the container it starts."""

    entrypoint: list[str]
    env: dict[str, str]
    workdir: str


def known_image(image: str) -> Image | None:
    """The image's ENTRYPOINT, the environment and WORKDIR its Dockerfile sets, when paircheck knows it."""
    if _name_and_tag(image)[0] in VLLM_REPOSITORIES:
        return Image(list(VLLM_ENTRYPOINT), {}, "/vllm-workspace")
    stage = image_stage(image)
    if stage is None:
        return None
    return Image(list(STAGES[stage]), dict(STAGE_ENV.get(stage, {})), "/app")


def through_tools_sh_words(words: list[Word]) -> list[Word]:
    """``through_tools_sh`` on words that keep their place."""
    if words and words[0].text == "/app/tools.sh" and words[1:2] and words[1].text in TOOLS_SH:
        return [Word(TOOLS_SH[words[1].text], words[1].pos), *words[2:]]
    return words
