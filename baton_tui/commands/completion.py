"""`baton completion bash|zsh|fish`: the shell code that completes `baton`'s commands and
options (argcomplete), and the hook `cli.main` calls when a shell asks for completions.

    eval "$(baton completion bash)"       # ~/.bashrc
    eval "$(baton completion zsh)"        # ~/.zshrc
    baton completion fish | source        # ~/.config/fish/config.fish
"""

from __future__ import annotations

from argparse import ArgumentParser, Namespace

import argcomplete


def complete(parser: ArgumentParser) -> None:
    """Answer a completing shell and exit (argcomplete reads `_ARGCOMPLETE` and COMP_LINE)."""
    argcomplete.autocomplete(parser)


def cmd_completion(args: Namespace) -> int:
    print(argcomplete.shellcode(["baton"], shell=args.shell))
    return 0
