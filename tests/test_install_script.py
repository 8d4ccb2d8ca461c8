"""`install.sh` against a local HTTP server on 127.0.0.1, with a small stand-in for the binary.

A good checksum installs it as `baton` (and a second run upgrades it in place); a bad checksum,
a failed download or an unknown platform stops with one line and a non-zero exit, leaving
nothing written. The platform is what a fake `uname` first on PATH says, so the same cases
run on any machine. The script runs under `sh` (and under `dash` too, where it is installed
and is not already `sh`), as `curl … | sh` would run it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from helpers.folder_server import FolderServer as Server

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "install.sh"
NAME = "baton-linux-x86_64"

SHELLS = ["sh"] + [s for s in ("dash",) if shutil.which(s) and
                   os.path.realpath(shutil.which(s) or "") != os.path.realpath(
                       shutil.which("sh") or "")]


def stand_in(version: str) -> bytes:
    """A small executable that answers `--version` as Baton does."""
    return f'#!/bin/sh\necho "baton {version}"\n'.encode()


def publish(folder: Path, content: bytes, *, checksum: str | None = None) -> None:
    """Put a release into `folder`: the executable and its `.sha256` (sha256sum format)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / NAME).write_bytes(content)
    digest = checksum or hashlib.sha256(content).hexdigest()
    (folder / f"{NAME}.sha256").write_text(f"{digest}  {NAME}\n")


@pytest.fixture
def release(tmp_path):
    folder = tmp_path / "release"
    folder.mkdir()
    server = Server(folder)
    yield folder, server.url
    server.close()


def fake_uname(folder: Path, system: str = "Linux", machine: str = "x86_64") -> Path:
    """A `uname` that reports this platform (put first on PATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "uname"
    path.write_text("#!/bin/sh\n"
                    f'case "$1" in -s) echo "{system}" ;; -m) echo "{machine}" ;; '
                    f'*) echo "{system}" ;; esac\n')
    path.chmod(0o755)
    return folder


def install(tmp_path: Path, url: str, *, shell: str = "sh", target: Path | None = None,
            system: str = "Linux", machine: str = "x86_64", on_path: bool = False,
            home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run install.sh as `sh install.sh` with only the system's tools on PATH, talking to
    127.0.0.1 without any proxy."""
    fake = fake_uname(tmp_path / f"uname-{system}-{machine}", system, machine)
    path = [str(fake), "/usr/local/bin", "/usr/bin", "/bin"]
    if on_path and target is not None:
        path.insert(0, str(target))
    env = {k: v for k, v in os.environ.items()
           if not k.lower().endswith("_proxy") and not k.startswith("BATON_")}
    env.update({"PATH": os.pathsep.join(path), "BATON_INSTALL_URL": url,
                "HOME": str(home or tmp_path / "home"), "NO_PROXY": "127.0.0.1,localhost"})
    if target is not None:
        env["BATON_INSTALL_DIR"] = str(target)
    return subprocess.run([shell, str(SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, cwd=tmp_path)


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single line a refused install prints (to stderr), with nothing on stdout."""
    assert result.returncode != 0, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("baton install: ")
    return lines[0]


def test_the_script_is_posix_sh_and_executable():
    assert SCRIPT.read_text().startswith("#!/bin/sh\n")
    assert SCRIPT.stat().st_mode & stat.S_IXUSR
    for shell in SHELLS:
        assert subprocess.run([shell, "-n", str(SCRIPT)]).returncode == 0


@pytest.mark.parametrize("shell", SHELLS)
def test_a_good_checksum_installs_baton_and_it_runs(tmp_path, release, shell):
    folder, url = release
    publish(folder, stand_in("1.2.3"))
    target = tmp_path / "bin"
    result = install(tmp_path, url, shell=shell, target=target)
    assert result.returncode == 0, result.stderr
    installed = target / "baton"
    assert installed.read_bytes() == stand_in("1.2.3")
    assert installed.stat().st_mode & 0o777 == 0o755
    assert subprocess.run([str(installed), "--version"], capture_output=True,
                          text=True).stdout == "baton 1.2.3\n"
    assert f"installed baton 1.2.3 to {installed}" in result.stdout
    assert f"{target} is not on your PATH" in result.stdout
    assert f'export PATH="{target}:$PATH"' in result.stdout
    assert sorted(p.name for p in target.iterdir()) == ["baton"]  # nothing else left behind


def test_it_says_when_the_folder_is_on_path(tmp_path, release):
    folder, url = release
    publish(folder, stand_in("1.2.3"))
    target = tmp_path / "bin"
    target.mkdir()
    result = install(tmp_path, url, target=target, on_path=True)
    assert result.returncode == 0, result.stderr
    assert f"{target} is on your PATH" in result.stdout


def test_the_default_folder_is_local_bin_in_home(tmp_path, release):
    folder, url = release
    publish(folder, stand_in("1.2.3"))
    home = tmp_path / "someone"
    result = install(tmp_path, url, home=home)
    assert result.returncode == 0, result.stderr
    assert (home / ".local" / "bin" / "baton").read_bytes() == stand_in("1.2.3")
    assert f"to {home}/.local/bin/baton" in result.stdout


def test_running_it_again_upgrades_in_place(tmp_path, release):
    folder, url = release
    target = tmp_path / "bin"
    publish(folder, stand_in("1.0.0"))
    assert install(tmp_path, url, target=target).returncode == 0
    publish(folder, stand_in("1.1.0"))
    result = install(tmp_path, url, target=target)
    assert result.returncode == 0, result.stderr
    assert "installed baton 1.1.0" in result.stdout
    assert (target / "baton").read_bytes() == stand_in("1.1.0")
    assert sorted(p.name for p in target.iterdir()) == ["baton"]


def test_an_upgrade_replaces_the_file_while_the_old_one_runs(tmp_path, release):
    """A rename, not a write into the running file (which Linux refuses: text file busy)."""
    folder, url = release
    target = tmp_path / "bin"
    target.mkdir()
    old = target / "baton"
    old.write_text("#!/bin/sh\nsleep 30\n")
    old.chmod(0o755)
    running = subprocess.Popen([str(old)])
    try:
        publish(folder, stand_in("2.0.0"))
        result = install(tmp_path, url, target=target)
        assert result.returncode == 0, result.stderr
        assert (target / "baton").read_bytes() == stand_in("2.0.0")
    finally:
        running.kill()
        running.wait()


@pytest.mark.parametrize("shell", SHELLS)
def test_a_checksum_mismatch_installs_nothing(tmp_path, release, shell):
    folder, url = release
    publish(folder, stand_in("6.6.6"), checksum="0" * 64)
    target = tmp_path / "bin"
    line = one_line(install(tmp_path, url, shell=shell, target=target))
    assert "checksum mismatch" in line and NAME in line
    assert not target.exists()  # not even the folder


def test_a_checksum_mismatch_leaves_the_installed_baton_as_it_was(tmp_path, release):
    folder, url = release
    target = tmp_path / "bin"
    publish(folder, stand_in("1.0.0"))
    assert install(tmp_path, url, target=target).returncode == 0
    publish(folder, stand_in("6.6.6"), checksum=hashlib.sha256(b"something else").hexdigest())
    line = one_line(install(tmp_path, url, target=target))
    assert "checksum mismatch" in line
    assert (target / "baton").read_bytes() == stand_in("1.0.0")
    assert sorted(p.name for p in target.iterdir()) == ["baton"]


def test_a_checksum_file_without_a_checksum_is_refused(tmp_path, release):
    folder, url = release
    publish(folder, stand_in("1.0.0"))
    (folder / f"{NAME}.sha256").write_text("<html>not found</html>\n")
    target = tmp_path / "bin"
    line = one_line(install(tmp_path, url, target=target))
    assert "holds no SHA-256" in line
    assert not target.exists()


def test_a_missing_binary_is_a_failed_download(tmp_path, release):
    _folder, url = release  # nothing published: 404
    target = tmp_path / "bin"
    line = one_line(install(tmp_path, url, target=target))
    assert line == f"baton install: could not download {url}/{NAME}"
    assert not target.exists()


def test_a_missing_checksum_is_a_failed_download(tmp_path, release):
    folder, url = release
    publish(folder, stand_in("1.0.0"))
    (folder / f"{NAME}.sha256").unlink()
    target = tmp_path / "bin"
    line = one_line(install(tmp_path, url, target=target))
    assert line == f"baton install: could not download {url}/{NAME}.sha256"
    assert not target.exists()


def test_no_server_is_a_failed_download(tmp_path):
    server = Server(tmp_path)  # a port nobody listens on once it is closed
    url = server.url
    server.close()
    target = tmp_path / "bin"
    line = one_line(install(tmp_path, url, target=target))
    assert line.startswith("baton install: could not download ")
    assert not target.exists()


@pytest.mark.parametrize(("system", "machine", "word"), [
    ("SunOS", "x86_64", "system (SunOS)"),
    ("Linux", "sparc64", "machine (sparc64)"),
])
def test_an_unknown_platform_installs_nothing(tmp_path, release, system, machine, word):
    folder, url = release
    publish(folder, stand_in("1.0.0"))
    target = tmp_path / "bin"
    line = one_line(install(tmp_path, url, target=target, system=system, machine=machine))
    assert f"no Baton binary for this {word}" in line
    assert not target.exists()


def test_other_platforms_ask_for_their_own_file(tmp_path, release):
    folder, url = release
    content = stand_in("1.0.0")
    (folder / "baton-darwin-arm64").write_bytes(content)
    (folder / "baton-darwin-arm64.sha256").write_text(
        f"{hashlib.sha256(content).hexdigest()}  baton-darwin-arm64\n")
    target = tmp_path / "bin"
    result = install(tmp_path, url, target=target, system="Darwin", machine="arm64")
    assert result.returncode == 0, result.stderr
    assert (target / "baton").read_bytes() == content


def test_it_runs_piped_into_sh_as_the_one_liner_does(tmp_path, release):
    """`curl -fsSL …/install.sh | sh`: the script arrives on sh's standard input (the
    installed `baton --version` is given /dev/null instead, should it read any)."""
    folder, url = release
    publish(folder, b'#!/bin/sh\ncat >/dev/null\necho "baton 3.0.0"\n')  # reads all it gets
    target = tmp_path / "bin"
    fake = fake_uname(tmp_path / "uname")
    env = {k: v for k, v in os.environ.items()
           if not k.lower().endswith("_proxy") and not k.startswith("BATON_")}
    env.update({"PATH": os.pathsep.join([str(fake), "/usr/local/bin", "/usr/bin", "/bin"]),
                "BATON_INSTALL_URL": url, "BATON_INSTALL_DIR": str(target),
                "HOME": str(tmp_path / "home"), "NO_PROXY": "127.0.0.1,localhost"})
    result = subprocess.run(["sh"], input=SCRIPT.read_text(), env=env, capture_output=True,
                            text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"installed baton 3.0.0 to {target}/baton" in result.stdout
    assert "then run `baton demo`" in result.stdout  # the script went on to its last line
