"""The binary's one file (scripts/self_unpacking.py) on a small stand-in bundle: its first start
unpacks into the cache folder (two halves side by side) and runs, later starts only run;
several first starts at once end with one copy; a deleted copy is unpacked again; a damaged
file stops with one line and leaves nothing behind; on Linux the header hands the bundle the
environment PyInstaller's loader would otherwise exec itself a second time to set. The real
bundle is built and run in test_install_binary.py.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("self_unpacking",
                                               ROOT / "scripts" / "self_unpacking.py")
assert _spec is not None and _spec.loader is not None
self_unpacking = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(self_unpacking)


def bundle(tmp_path: Path, word: str = "one") -> Path:
    """A folder like PyInstaller's: an executable `baton` and `_internal/` beside it."""
    folder = tmp_path / f"bundle-{word}"
    (folder / "_internal" / "deep").mkdir(parents=True)
    (folder / "_internal" / "deep" / "data.txt").write_text(word)
    (folder / "_internal" / "noise.bin").write_bytes(os.urandom(200_000))  # most of the file
    exe = folder / "baton"
    exe.write_text('#!/bin/sh\nhere="$(dirname "$0")"\n'
                   'echo "ran $(cat "$here/_internal/deep/data.txt") from $here with $*"\n'
                   'exit "${EXIT_WITH:-0}"\n')
    exe.chmod(0o755)
    return folder


def make(tmp_path: Path, word: str = "one") -> tuple[Path, str]:
    out = tmp_path / f"baton-{word}"
    ident = self_unpacking.assemble(bundle(tmp_path, word), out, f"baton test {word}")
    return out, ident


def start(binary: Path, *args: str, cache: Path | None = None,
          extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("BATON_CACHE_DIR", "XDG_CACHE_HOME")}
    if cache is not None:
        env["BATON_CACHE_DIR"] = str(cache)
    env.update(extra or {})
    return subprocess.run([str(binary), *args], capture_output=True, text=True, env=env,
                          timeout=60)


def copies(cache: Path, ident: str) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if p.name.startswith(ident))


def test_the_first_start_unpacks_and_later_ones_only_run(tmp_path):
    binary, ident = make(tmp_path)
    assert binary.read_bytes().startswith(b"#!/bin/sh\n# baton test one as one file")
    assert os.access(binary, os.X_OK)
    cache = tmp_path / "cache"
    first = start(binary, "--version", "a b", cache=cache)
    assert first.returncode == 0, first.stderr
    assert first.stdout == f"ran one from {cache}/{ident} with --version a b\n"
    assert (cache / ident).is_symlink()
    (unpacked,) = [name for name in copies(cache, ident) if name != ident]
    assert os.readlink(cache / ident) == unpacked
    assert (cache / unpacked).stat().st_mode & 0o777 == 0o700  # the person's own
    mtime = (cache / unpacked / "baton").stat().st_mtime_ns
    again = start(binary, "status", cache=cache)
    assert again.stdout == f"ran one from {cache}/{ident} with status\n"
    assert copies(cache, ident) == [ident, unpacked]
    assert (cache / unpacked / "baton").stat().st_mtime_ns == mtime  # not unpacked again


def test_the_payload_is_two_halves_unpacked_side_by_side(tmp_path):
    """Every file in one half, every folder in both, the halves about even (unpacked)."""
    import io
    import tarfile

    folder = bundle(tmp_path)
    (folder / "_internal" / "more.bin").write_bytes(os.urandom(150_000))
    halves = []
    for data in self_unpacking.payload(folder):
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            halves.append({m.name: m.size for m in tar.getmembers() if m.isfile()})
            assert {m.name for m in tar.getmembers() if m.isdir()} == {"_internal",
                                                                       "_internal/deep"}
    assert not set(halves[0]) & set(halves[1])
    assert set(halves[0]) | set(halves[1]) == {"baton", "_internal/deep/data.txt",
                                               "_internal/noise.bin", "_internal/more.bin"}
    assert sorted(sum(h.values()) for h in halves)[0] > 150_000  # not all in one


def test_the_exit_status_is_the_bundles(tmp_path):
    binary, _ = make(tmp_path)
    assert start(binary, cache=tmp_path / "c", extra={"EXIT_WITH": "3"}).returncode == 3


def test_the_cache_is_under_xdg_cache_home_or_home(tmp_path):
    binary, ident = make(tmp_path)
    xdg = tmp_path / "xdg"
    assert start(binary, extra={"XDG_CACHE_HOME": str(xdg)}).returncode == 0
    assert (xdg / "baton" / ident / "baton").is_file()
    home = tmp_path / "home"
    assert start(binary, extra={"HOME": str(home)}).returncode == 0
    assert (home / ".cache" / "baton" / ident / "baton").is_file()


def test_another_build_unpacks_beside_it(tmp_path):
    one, one_id = make(tmp_path, "one")
    two, two_id = make(tmp_path, "two")
    assert one_id != two_id
    cache = tmp_path / "cache"
    assert start(one, cache=cache).stdout.startswith("ran one")
    assert start(two, cache=cache).stdout.startswith("ran two")
    assert start(one, cache=cache).stdout.startswith("ran one")


def test_first_starts_at_once_keep_one_copy(tmp_path):
    binary, ident = make(tmp_path)
    cache = tmp_path / "cache"
    env = {**os.environ, "BATON_CACHE_DIR": str(cache)}
    procs = [subprocess.Popen([str(binary), str(i)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for i in range(8)]
    results = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
    for i, (out, err, code) in enumerate(results):
        assert code == 0, err
        assert out == f"ran one from {cache}/{ident} with {i}\n"
    assert len(copies(cache, ident)) == 2  # the link and the one folder it names


def test_a_deleted_copy_is_unpacked_again(tmp_path):
    binary, ident = make(tmp_path)
    cache = tmp_path / "cache"
    assert start(binary, cache=cache).returncode == 0
    target = cache / os.readlink(cache / ident)
    subprocess.run(["rm", "-rf", str(target)], check=True)
    result = start(binary, "x", cache=cache)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"ran one from {cache}/{ident} with x\n"
    assert len(copies(cache, ident)) == 2


@pytest.mark.parametrize("keep", [0.5, 0.999])
def test_a_damaged_file_stops_with_one_line_and_leaves_nothing(tmp_path, keep):
    binary, ident = make(tmp_path)
    data = binary.read_bytes()
    binary.write_bytes(data[: int(len(data) * keep)])
    cache = tmp_path / "cache"
    result = start(binary, cache=cache)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"baton: cannot unpack into {cache}: a short or damaged file?"]
    assert copies(cache, ident) == []


def test_an_unwritable_cache_stops_with_one_line(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    binary, _ = make(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    result = start(binary, cache=locked / "cache")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"baton: cannot unpack into {locked}/cache"]


def test_a_flipped_byte_stops_with_one_line_and_leaves_nothing(tmp_path):
    binary, ident = make(tmp_path)
    data = bytearray(binary.read_bytes())
    data[-len(data) // 4] ^= 0xFF  # inside the gzip stream: its CRC no longer holds
    binary.write_bytes(bytes(data))
    cache = tmp_path / "cache"
    result = start(binary, cache=cache)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"baton: cannot unpack into {cache}: a short or damaged file?"]
    assert copies(cache, ident) == []


LOADER_ENV = ("LD_LIBRARY_PATH", "LD_LIBRARY_PATH_ORIG", "_PYI_ARCHIVE_FILE",
              "_PYI_PARENT_PROCESS_LEVEL", "PYINSTALLER_RESET_ENVIRONMENT")


def loader_env(tmp_path: Path, linux: bool) -> tuple[Path, str]:
    """A stand-in bundle whose `baton` prints the environment PyInstaller's loader reads."""
    folder = bundle(tmp_path)
    lines = "".join(f'echo "{name}=${{{name}-unset}}"\n' for name in LOADER_ENV)
    (folder / "baton").write_text(f"#!/bin/sh\n{lines}")
    out = tmp_path / f"baton-{linux}"
    return out, self_unpacking.assemble(folder, out, "baton test", linux=linux)


def printed(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert result.returncode == 0, result.stderr
    return dict(line.split("=", 1) for line in result.stdout.splitlines())


def test_on_linux_the_header_sets_what_the_loader_would_restart_for(tmp_path):
    binary, ident = loader_env(tmp_path, linux=True)
    cache = tmp_path / "cache"
    plain = printed(start(binary, cache=cache, extra={"LD_LIBRARY_PATH": ""}))  # unpacks too
    real = os.path.realpath(cache / ident)
    assert plain["LD_LIBRARY_PATH"] == f"{real}/_internal"
    assert plain["LD_LIBRARY_PATH_ORIG"] == "unset"
    assert plain["_PYI_ARCHIVE_FILE"] == f"{real}/baton"
    assert plain["_PYI_PARENT_PROCESS_LEVEL"] == "0"
    # a person's library path is kept for Baton to put back; a reset asked by a Baton process
    # that started this one is done here
    kept = printed(start(binary, cache=cache, extra={
        "LD_LIBRARY_PATH": "/opt/lib", "PYINSTALLER_RESET_ENVIRONMENT": "1",
        "_PYI_PARENT_PROCESS_LEVEL": "1"}))
    assert kept["LD_LIBRARY_PATH"] == f"{real}/_internal:/opt/lib"
    assert kept["LD_LIBRARY_PATH_ORIG"] == "/opt/lib"
    assert kept["PYINSTALLER_RESET_ENVIRONMENT"] == "unset"
    assert kept["_PYI_PARENT_PROCESS_LEVEL"] == "0"


def test_a_folder_whose_recorded_path_is_stale_leaves_the_restart_to_the_loader(tmp_path):
    binary, ident = loader_env(tmp_path, linux=True)
    cache = tmp_path / "cache"
    assert start(binary, cache=cache).returncode == 0
    (cache / ident / ".path").write_text(f"{tmp_path}/elsewhere\n")
    stale = printed(start(binary, cache=cache, extra={"LD_LIBRARY_PATH": "/opt/lib"}))
    assert stale["LD_LIBRARY_PATH"] == "/opt/lib"
    assert stale["_PYI_ARCHIVE_FILE"] == "unset"
    assert stale["_PYI_PARENT_PROCESS_LEVEL"] == "unset"


def test_elsewhere_the_header_leaves_the_environment_to_the_loader(tmp_path):
    binary, _ = loader_env(tmp_path, linux=False)
    other = printed(start(binary, cache=tmp_path / "cache", extra={"LD_LIBRARY_PATH": ""}))
    assert other["LD_LIBRARY_PATH"] == "" and other["_PYI_ARCHIVE_FILE"] == "unset"
