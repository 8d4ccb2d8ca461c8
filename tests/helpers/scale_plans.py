"""The big plan the scale tests share: half one chain, half rows hanging off a wide root."""

from __future__ import annotations

ROW = 50


def chain_and_rows(n: int) -> list[dict]:
    """n tasks on the `script` player (check `true`): a chain of n/2 (any walk that recursed
    along it would pass Python's recursion limit at 10,000), then a wide root with rows of
    fifty below it, each task depending on two of the row above."""
    chain = n // 2
    tasks = []
    for i in range(1, n + 1):
        if i <= chain:
            deps = [i - 1] if i > 1 else []
        elif i == chain + 1:
            deps = []
        else:
            row, col = divmod(i - chain - 2, ROW)  # rows of ROW below the wide root
            above = chain + 2 + (row - 1) * ROW
            deps = [chain + 1] if row == 0 else sorted({above + col, above + (col + 7) % ROW})
        tasks.append({"id": i, "title": f"Step {i}", "prompt": f"Step {i}.", "player": "script",
                      "check": "true", "depends_on": deps})
    return tasks
