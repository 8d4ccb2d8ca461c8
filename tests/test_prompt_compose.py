"""The composed prompt says nothing under an empty heading."""

from __future__ import annotations

from baton_tui.plan.model import PlanDocument
from baton_tui.run.collecting import retry_feedback
from baton_tui.run.prompt import compose


def doc() -> PlanDocument:
    return PlanDocument.model_validate({"version": 1, "goal": "g", "tasks": [
        {"id": 1, "title": "T", "prompt": "Do it.", "player": "claude-code"}]})


def test_blank_feedback_and_resume_message_give_no_heading():
    plan = doc()
    text = compose(plan, plan.task(1), [], {}, feedback=" \n\t", resume_message="\n")
    assert "## Feedback on the previous attempt" not in text and "## Resuming" not in text
    text = compose(plan, plan.task(1), [], {}, feedback="use the other API")
    assert "## Feedback on the previous attempt\nuse the other API\n" in text


def test_retry_feedback_has_the_tail_of_the_failures_output():
    output = "".join(f"line {n}\n" for n in range(1, 201)) + "FAILED test_x - KeyError\n"
    text = retry_feedback("check `pytest` exited 1", output)
    assert text.startswith("The previous attempt failed: check `pytest` exited 1.")
    assert "FAILED test_x - KeyError" in text and "line 200" in text
    assert "line 100\n" not in text  # the tail only
    assert retry_feedback("it failed", "  \n") == "The previous attempt failed: it failed. " \
        "Fix that and finish."
