"""Baton's native agent loop: one task, one worktree, the official Anthropic or OpenAI SDK.

Run by the attempt shim like any agent CLI, in the task's worktree with the BATON_* environment:

    python -m baton_tui.native_agent --provider anthropic|openai --model M
        --mode build|research --prompt-file P --transcript T [--effort E]
        [--resume PREVIOUS_TRANSCRIPT [--resume-message TEXT]] [--max-turns N]

Tools: read_file, list_files, grep, baton_report, baton_checkpoint, and in build mode also
write_file, edit_file and run_command (`specs`, `tools`, `shell`). Research mode does not offer
the writing tools at all, and refuses a call to one. Every path must stay inside the worktree.

Output: JSON lines on stdout (see `baton_tui.players.native` for the events). The transcript
(the provider's own message list plus the session id) is saved after every turn, so `--resume`
continues it (`loop`). A 429 stops the loop with an `error` event carrying the reset time, or
null when the response has none (`limits`). Exit 0 after the final answer: the report decides
done. The SDKs are imported only when a provider is built (`providers`).
"""

from baton_tui.native_agent.limits import (
    RATE_LIMITED_EXIT,
    TRANSIENT_RETRIES,
    call_with_retries,
    reset_time,
)
from baton_tui.native_agent.loop import (
    BUILD_NOTE,
    MAX_TURNS,
    RESEARCH_NOTE,
    SYSTEM,
    build_parser,
    main,
)
from baton_tui.native_agent.pricing import PRICES, cost_of, price_of
from baton_tui.native_agent.providers import (
    MAX_TOKENS,
    AnthropicProvider,
    OpenAIProvider,
    make_provider,
)
from baton_tui.native_agent.shell import Shell
from baton_tui.native_agent.specs import (
    COMMAND_TIMEOUT,
    COMMAND_TIMEOUT_MAX,
    READ_LIMIT,
    READ_TOOLS,
    TOOL_OUTPUT_LIMIT,
    TOOL_SPECS,
    WRITE_TOOLS,
    ToolError,
    summarize,
)
from baton_tui.native_agent.tools import Toolbox
from baton_tui.native_agent.wire import ApiFailure, Call, Reply, Usage, emit

__all__ = [
    "BUILD_NOTE", "COMMAND_TIMEOUT", "COMMAND_TIMEOUT_MAX", "MAX_TOKENS", "MAX_TURNS", "PRICES",
    "RATE_LIMITED_EXIT", "READ_LIMIT", "READ_TOOLS", "RESEARCH_NOTE", "SYSTEM",
    "TOOL_OUTPUT_LIMIT", "TOOL_SPECS", "TRANSIENT_RETRIES", "WRITE_TOOLS", "AnthropicProvider",
    "ApiFailure", "Call", "OpenAIProvider", "Reply", "Shell", "ToolError", "Toolbox", "Usage",
    "build_parser", "call_with_retries", "cost_of", "emit", "main", "make_provider", "price_of",
    "reset_time", "summarize",
]
