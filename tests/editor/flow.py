"""What a person does in the Baton view, in Playwright terms — the same steps whether the
view is a page (`baton web`) or VS Code's webview (code-server): type a goal, answer the
question, change a task's player, model and effort, approve, run, watch the cards land,
open a file's diff, merge. Runs on the tool chain's Python (playwright is not Baton's)."""

from __future__ import annotations

import json
import re
import subprocess
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


def saved(view):
    """Every edit painted in the plan has been answered by Baton (the view paints an edit at
    once; `aria-busy` on the plan says an answer is still to come)."""
    plan = view.locator("#plan")
    wait_for("the edits saved", lambda: plan.get_attribute("aria-busy") == "false", 120)


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
    saved(view)
    editor.locator("#field-player").select_option("script")
    wait_for("task 3 on script", lambda: "script" in plan_row(view, 3).inner_text())
    saved(view)
    editor.locator("#field-player").select_option("anthropic")
    wait_for("task 3 back on anthropic", lambda: "script" not in plan_row(view, 3).inner_text())
    saved(view)
    models = editor.locator("#field-model option").all_inner_texts()
    seen["anthropic_models"] = models
    editor.locator("#field-model").select_option("claude-haiku-4-5")
    wait_for("task 3's model", lambda: "claude-haiku-4-5" in plan_row(view, 3).inner_text())
    saved(view)
    editor.locator("#field-effort").select_option("high")
    wait_for("task 3's effort", lambda: "high" in plan_row(view, 3).inner_text())
    saved(view)
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


def card(view, task):
    return view.locator(f'#cards [data-card="{task}"]')


def card_state(view, task):
    found = card(view, task)
    return found.get_attribute("data-state") if found.count() else None


def wait_state(view, task, *states, seconds=180):
    def reached():
        now = card_state(view, task)
        if now in ("failed", "landed") and now not in states:
            raise AssertionError(f"task {task} is {now}, not {states}: {card(view, task).inner_text()}")
        return now in states
    wait_for(f"task {task} {'/'.join(states)}", reached, seconds)


def git_in(repo, *args):
    return subprocess.run(["git", "-c", "user.name=You", "-c", "user.email=you@example.com", *args],
                          cwd=repo, capture_output=True, text=True, check=True).stdout


def actions_flow(view, seen, world, took, opened, timeout=240):
    """The run's own actions on the plan of editor_kit.actions_world, as a person clicks them:
    a checkpoint answered yes and one answered no, a task stopped then retried, a task taken
    over (`took(task)` checks what the host opened), merge up to here, the stop at a merge
    conflict (`opened(path)` checks the file the host opened), and a player signed in after
    the run started joining at Refresh players, the plan kept."""
    repo, files = world["repo"], world["files"]
    rows = view.locator("#plan-list [data-task]")
    wait_for("the plan", lambda: rows.count() == 5, timeout)
    plan_row(view, 2).click()
    editor = view.locator("#task-editor")
    wait_for("task 2's editor", lambda: editor.locator("h3").inner_text() == "Task 2")
    codex = editor.locator('#field-player option[value="codex"]')
    seen["codex_before"] = codex.inner_text()
    seen["codex_disabled_before"] = codex.is_disabled()

    view.get_by_role("button", name=re.compile("^Approve…")).click()
    view.locator("#confirm").get_by_role("button", name=re.compile("^Approve")).click()
    wait_for("approval", lambda: view.get_by_role("button", name=re.compile("^Run…")).is_enabled(), 60)
    view.get_by_role("button", name=re.compile("^Run…")).click()
    view.locator("#confirm").get_by_role("button", name=re.compile("^Yes")).click()

    # guarded: both agents ask at their checkpoint, with their evidence
    for task in (1, 2):
        wait_state(view, task, "checkpoint", seconds=timeout)
    seen["checkpoint_1"] = card(view, 1).locator(".checkpoint").inner_text()
    seen["checkpoint_2"] = card(view, 2).locator(".checkpoint").inner_text()
    view.get_by_role("button", name="Yes: task 1 may go on").click()
    view.get_by_role("button", name="No: task 2 stops").click()
    wait_state(view, 1, "landed", seconds=timeout)
    wait_state(view, 2, "failed", seconds=timeout)
    seen["card_2_after_no"] = card(view, 2).inner_text()

    # stop a running task (confirmed), then retry it once its signal is there
    wait_state(view, 3, "running")
    view.get_by_role("button", name="Stop task 3").click()
    view.locator("#confirm").get_by_role("button", name=re.compile("^Yes, stop")).click()
    wait_state(view, 3, "failed", "paused")
    seen["card_3_stopped"] = card(view, 3).inner_text()
    Path(world["go"]).write_text("go\n")
    view.get_by_role("button", name="Retry task 3").click()
    wait_for("task 3 started again", lambda: card_state(view, 3) != "failed", 120)
    wait_state(view, 3, "landed", seconds=timeout)

    # take a task over: the host opens the agent's interactive command
    wait_state(view, 4, "running")
    view.get_by_role("button", name="Take task 4 over in a terminal").click()
    seen["took"] = took(4)
    wait_state(view, 4, "paused")
    wait_state(view, 5, "landed", seconds=timeout)

    # merge up to the second landed task of the handoff's merge order
    order_items = view.locator("#handoff [data-handoff-task]")
    wait_for("the handoff's landed tasks", lambda: order_items.count() == 3, 60)
    order = [int(n) for n in order_items.evaluate_all("els => els.map(e => e.dataset.handoffTask)")]
    seen["merge_order"] = order
    view.get_by_role("button", name=re.compile(f"^Merge up to task {order[1]}…")).click()
    seen["merge_question"] = view.locator("#confirm p").inner_text()
    view.locator("#confirm").get_by_role("button", name=re.compile("^Merge")).click()
    onto = view.locator(".msg", has_text="onto your branch")
    wait_for("the merge up to here", lambda: onto.count() > 0, timeout)
    seen["merged_up_to"] = onto.last.inner_text()
    seen["main_after_up_to"] = git_in(repo, "log", "--format=%s", "main")

    # the person commits on their branch what the last task also wrote: merge all stops there
    last_file = files[str(order[2])]
    Path(repo, last_file).write_text("the person's own\n")
    git_in(repo, "add", last_file)
    git_in(repo, "commit", "-q", "-m", f"my own {last_file}")
    view.get_by_role("button", name=re.compile("^Merge all…")).click()
    view.locator("#confirm").get_by_role("button", name=re.compile("^Merge")).click()
    wait_for("the conflict", lambda: view.locator(".msg.error", has_text="conflict").count() > 0, timeout)
    seen["conflict"] = view.locator(".msg.error", has_text="conflict").last.inner_text()
    seen["opened"] = opened(last_file)

    # codex signs in after the run started: Refresh players, and it joins the same plan
    Path(world["codex_home"], "auth.json").write_text('{"tokens": {}}\n')
    view.get_by_role("button", name=re.compile("^Refresh players")).click()
    wait_for("codex ready", lambda: view.locator(".msg", has_text="players ready").count() > 0
             and "codex" in view.locator(".msg", has_text="players ready").last.inner_text(), 120)
    plan_row(view, 2).click()
    wait_for("task 2's editor", lambda: editor.locator("h3").inner_text() == "Task 2")
    wait_for("codex offered", lambda: not codex.is_disabled(), 30)
    seen["codex_after"] = codex.inner_text()
    editor.locator("#field-player").select_option("codex")
    wait_for("task 2 on codex", lambda: "codex" in plan_row(view, 2).inner_text(), 60)
    saved(view)
    seen["task_2_saved"] = plan_row(view, 2).inner_text()
    seen["rows_after"] = rows.count()
    seen["card_states"] = view.locator("#cards [data-card]").evaluate_all(
        "els => els.map(e => [Number(e.dataset.card), e.dataset.state])")
    return seen
