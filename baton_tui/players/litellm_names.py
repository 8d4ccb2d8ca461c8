"""Which model names litellm (and so Aider) can start: `provider/model`, or a known bare name.

Aider hands `--model` to litellm, which routes `provider/anything` by its provider prefix and
knows bare names (`gpt-4o`, `claude-sonnet-4-5`) from its model map. The provider list below is
litellm 1.81 (the one aider-chat 0.86.2 pins); the bare names are read from the model map that
the installed Aider itself uses — its download cache in ~/.aider/caches, else the copy inside
its own environment — so the catalog is Aider's own. Where neither can be read (Aider is not
installed here) a bare name is not judged: the catalog is not authoritative on this machine.
"""

from __future__ import annotations

import json
import os
import shutil
from functools import lru_cache
from pathlib import Path

PROVIDERS = frozenset("""
a2a a2a_agent ai21 ai21_chat aiml aiohttp_openai amazon_nova anthropic anthropic_text apertis
assemblyai auto_router aws_polly azure azure_ai azure_text baseten bedrock bytez cerebras chatgpt
chutes clarifai cloudflare codestral cohere cohere_chat cometapi compactifai custom custom_openai
dashscope databricks datarobot deepgram deepinfra deepseek docker_model_runner dotprompt
elevenlabs empower fal_ai featherless_ai fireworks_ai friendliai galadriel gemini gigachat github
github_copilot gradient_ai groq helicone heroku hosted_vllm huggingface humanloop hyperbolic
infinity jina_ai lambda_ai langfuse langgraph lemonade litellm_proxy llamafile lm_studio manus
maritalk meta_llama milvus minimax mistral moonshot morph nano-gpt nebius nlp_cloud novita nscale
nvidia_nim oci ollama ollama_chat oobabooga openai openai_like openrouter ovhcloud perplexity
petals pg_vector poe predibase publicai ragflow recraft replicate runwayml s3_vectors sagemaker
sagemaker_chat sambanova sap snowflake stability synthetic text-completion-codestral
text-completion-openai together_ai topaz triton v0 vercel_ai_gateway vertex_ai vertex_ai_beta
vllm volcengine voyage wandb watsonx watsonx_text xai xiaomi_mimo xinference zai
""".split())
MAP_NAME = "model_prices_and_context_window.json"


def _map_files(home: Path) -> list[Path]:
    files = [home / ".aider" / "caches" / MAP_NAME]
    aider = shutil.which("aider")
    if aider:
        try:
            first = Path(aider).read_bytes()[:300].split(b"\n", 1)[0].decode("utf-8", "replace")
        except OSError:
            first = ""
        if first.startswith("#!"):
            env = Path(first[2:].strip().split()[0]).parent.parent
            files += sorted(env.glob(f"lib/python3*/site-packages/litellm/{MAP_NAME[:-5]}*.json"))
    return files


@lru_cache(maxsize=4)
def _bare_names(home: str) -> frozenset[str] | None:
    for path in _map_files(Path(home)):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and len(data) > 10:
            return frozenset(k for k in data if k != "sample_spec")
    return None


def can_judge_bare_names() -> bool:
    """Whether a model map (Aider's own) can be read here to judge a bare name."""
    return _bare_names(os.environ.get("HOME") or str(Path.home())) is not None


def known_model(name: str) -> bool:
    """Whether litellm can route `name` (a bare name is accepted where no map can be read)."""
    provider, _, rest = name.partition("/")
    if rest:
        return provider in PROVIDERS and bool(rest.strip())
    names = _bare_names(os.environ.get("HOME") or str(Path.home()))
    return names is None or name in names
