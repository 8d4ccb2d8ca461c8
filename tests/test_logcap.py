"""An attempt's log keeps its head and its tail; readers follow it by the agent's own offset."""

from __future__ import annotations

from baton_tui.runners import logcap
from baton_tui.runners.logcap import HEAD, MARK_LEN, TAIL, CappedLog


def lines(start: int, count: int) -> bytes:
    return b"".join(b"line %09d\n" % i for i in range(start, start + count))  # 15 bytes each


def test_a_small_log_is_kept_whole_and_read_back_in_chunks(tmp_path):
    path = tmp_path / "output.log"
    log = CappedLog(path)
    log.write(lines(0, 1000))
    assert log.cuts == 0 and path.read_bytes() == lines(0, 1000)
    data, offset, cut = logcap.read_from(path, 0, 4000)
    assert (data, offset, cut) == (lines(0, 1000)[:4000], 4000, 0)
    assert logcap.logical_size(path) == 15000


def test_a_flood_is_cut_in_the_middle_and_followed_without_rereading(tmp_path):
    path = tmp_path / "output.log"
    log = CappedLog(path)
    chunk = 4369                          # lines per write: about 64 KiB, as the shim reads
    writes = (HEAD + 7 * TAIL) // (chunk * 15) + 1
    follower, seen = 0, bytearray()
    for n in range(writes):
        log.write(lines(n * chunk, chunk))
        data, follower, cut = logcap.read_from(path, follower, 1 << 20)
        assert cut == 0  # it kept up: a cut never took anything it had not read
        seen += data
    total = writes * chunk * 15
    assert log.cuts >= 2 and path.stat().st_size <= HEAD + MARK_LEN + 3 * TAIL
    assert logcap.logical_size(path) == total == follower
    assert bytes(seen) == lines(0, writes * chunk)
    # A reader from the start gets the head, learns how much was cut, then the tail.
    head, after, cut = logcap.read_from(path, 0, HEAD)
    assert head == seen[:HEAD] and after == HEAD and cut == 0
    rest, end, cut = logcap.read_from(path, after, 64 << 20)
    assert cut > 0 and end == total and rest == seen[after + cut:]
    assert len(rest) >= TAIL - (1 << 16)
    text = logcap.head_and_tail(path, head=1000, tail=1000)
    assert text.startswith("line 000000000") and text.endswith(
        f"line {writes * chunk - 1:09d}\n")


def test_a_logs_stamp_changes_with_every_write_and_only_then(tmp_path):
    path = tmp_path / "output.log"
    assert logcap.stamp(path) is None  # no log yet: nothing to skip
    log = CappedLog(path)
    log.write(lines(0, 10))
    first = logcap.stamp(path)
    assert first == logcap.stamp(path) == (150, path.stat().st_mtime_ns)
    log.write(lines(10, 1))
    assert logcap.stamp(path) != first and logcap.stamp(path)[0] == 165
