"""What a person does in the Baton view, in Playwright terms — the same steps whether the
view is a page (`baton web`) or VS Code's webview (code-server): type a goal, answer the
question, change a task's player, model and effort, approve, run, watch the cards land,
open a file's diff, merge. Runs on the tool chain's Python (playwright is not Baton's)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path


def record(out, seen, messages_of, screenshot=None):
    """Write what a driver saw to `out`, with the conversation's lines (`messages_of()`), and
    a screenshot (`screenshot()`) when the run did not finish: best effort, since the page may
    be what failed."""
    try:
        seen["messages"] = messages_of()
        if screenshot and not seen.get("ok"):  # what the page showed when it failed
            screenshot()
    except Exception as err:  # noqa: BLE001 — the record of a failed run, best effort
        seen["messages"] = [f"(unreadable: {err})"]
    Path(out).write_text(json.dumps(seen, indent=1))


def wait_for(what, probe, seconds=120.0, every=0.25):
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)


def plan_row(view, task):
    return view.locator(f'#plan-list [data-task="{task}"]')


def person_flow(view, seen, shoot=None, open_diff=None, timeout=240):
    """`view` is a Page or a FrameLocator; `seen` collects what was observed; `shoot(name)`
    takes a screenshot at the moments worth one; `open_diff(path)` checks the diff shown."""
    goal = view.get_by_placeholder(re.compile("goal"))
    goal.fill("add word and line counts with a command line")
    goal.press("Enter")
    asks = view.locator("#questions")
    asks.get_by_text("The planner asks").wait_for(timeout=timeout * 1000)
    seen["question"] = asks.locator(".q").first.inner_text()
    seen["recommendation"] = asks.locator(".rec").first.inner_text()
    planner = view.locator("#planner")
    seen["planner_steps"] = planner.locator(".steps li").count() if planner.is_visible() else None
    view.get_by_role("textbox", name="Your answer").fill("both: words and lines")
    view.get_by_role("button", name="Send the answer").click()
    rows = view.locator("#plan-list [data-task]")
    wait_for("the plan", lambda: rows.count() == 6, timeout)
    seen["tasks"] = rows.count()

    # change task 3's player (the picker lists the machine's players), then model and effort
    plan_row(view, 3).click()
    editor = view.locator("#task-editor")
    wait_for("task 3's editor", lambda: editor.locator("h3").inner_text() == "Task 3")
    players = editor.locator("#field-player option").all_inner_texts()
    seen["player_choices"] = players
    seen["not_ready_disabled"] = editor.locator("#field-player option[disabled]").count()
    # a script task is its check: give it one first (a text field), then the player
    editor.locator("#field-check").fill("python3 -m unittest -q")
    editor.locator("#field-check").press("Enter")
    wait_for("task 3's check", lambda: "check" in plan_row(view, 3).inner_text())
    editor.locator("#field-player").select_option("script")
    wait_for("task 3 on script", lambda: "script" in plan_row(view, 3).inner_text())
    editor.locator("#field-player").select_option("anthropic")
    wait_for("task 3 back on anthropic", lambda: "script" not in plan_row(view, 3).inner_text())
    models = editor.locator("#field-model option").all_inner_texts()
    seen["anthropic_models"] = models
    editor.locator("#field-model").select_option("claude-haiku-4-5")
    wait_for("task 3's model", lambda: "claude-haiku-4-5" in plan_row(view, 3).inner_text())
    editor.locator("#field-effort").select_option("high")
    wait_for("task 3's effort", lambda: "high" in plan_row(view, 3).inner_text())
    seen["task3"] = plan_row(view, 3).inner_text()

    # single keys on the plan: k moves up, t goes to the title, Escape comes back
    view.locator("#plan-list").focus()
    view.locator("#plan-list").press("k")
    wait_for("task 2 selected", lambda: plan_row(view, 2).get_attribute("aria-selected") == "true")
    view.locator("#plan-list").press("t")
    wait_for("the title field focused", lambda: view.locator("#field-title").evaluate(
        "el => el === el.ownerDocument.activeElement"))
    seen["keys"] = True
    if shoot:
        shoot("plan")

    view.get_by_role("button", name=re.compile("^Approve…")).click()
    view.locator("#confirm").get_by_role("button", name=re.compile("^Approve")).click()
    wait_for("approval", lambda: view.get_by_role("button", name=re.compile("^Run…")).is_enabled(), 60)
    view.get_by_role("button", name=re.compile("^Run…")).click()
    view.locator("#confirm").get_by_role("button", name=re.compile("^Yes")).click()
    cards = view.locator("#cards [data-card]")
    wait_for("the cards", lambda: cards.count() == 6, 60)
    if shoot:
        shoot("running")

    def landed():
        states = cards.evaluate_all("els => els.map(e => e.dataset.state)")
        if "failed" in states:
            raise AssertionError(f"a task failed: {states}")
        modes = cards.evaluate_all("els => els.map(e => e.dataset.mode)")
        return all(s == ("done" if m == "research" else "landed") for s, m in zip(states, modes))

    wait_for("every card landed", landed, timeout)
    seen["card_states"] = cards.evaluate_all("els => els.map(e => e.dataset.state)")

    files = view.locator("#handoff button.file")
    wait_for("the handoff's files", lambda: files.count() > 0, 60)
    seen["files"] = files.all_inner_texts()
    if shoot:
        shoot("handoff")
    view.locator("#handoff").get_by_role("button", name="Open the diff of textstats/words.py").click()
    if open_diff:
        seen["diff"] = open_diff("textstats/words.py")

    view.get_by_role("button", name=re.compile("^Merge all…")).click()
    view.locator("#confirm").get_by_role("button", name=re.compile("^Merge")).click()
    wait_for("the merge", lambda: view.locator(".msg", has_text="onto your branch").count() > 0, timeout)
    seen["merged"] = view.locator(".msg", has_text="onto your branch").last.inner_text()
    return seen
