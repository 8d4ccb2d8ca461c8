#!/bin/sh
# Install Baton: one executable, `baton`, into ~/.local/bin — no Python or Node.js set-up.
#
#   curl -fsSL https://github.com/baton-tui/baton/releases/latest/download/install.sh | sh
#
# It downloads baton-<os>-<arch> and baton-<os>-<arch>.sha256 from BATON_INSTALL_URL (default:
# the latest release), checks the file against its SHA-256, and puts it in BATON_INSTALL_DIR
# (default ~/.local/bin) as `baton`, replacing an older one in one step (a rename), so running
# it again upgrades in place. A failed download, a checksum mismatch or an unknown platform
# stops it with one line and a non-zero exit, before anything is installed or replaced.
#
#   BATON_INSTALL_URL   where the files are (a release's download folder, or a local server)
#   BATON_INSTALL_DIR   where `baton` goes (made when missing)
set -u

DEFAULT_URL="https://github.com/baton-tui/baton/releases/latest/download"
url="${BATON_INSTALL_URL:-$DEFAULT_URL}"
url="${url%/}"
dir="${BATON_INSTALL_DIR:-${HOME:-}/.local/bin}"
tmp=""

fail() {
  echo "baton install: $*" >&2
  [ -n "$tmp" ] && rm -rf "$tmp"
  exit 1
}

case "$(uname -s 2>/dev/null)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) fail "no Baton binary for this system ($(uname -s 2>/dev/null || echo unknown)); on Python 3.11+ use: pipx install baton-tui" ;;
esac
case "$(uname -m 2>/dev/null)" in
  x86_64 | amd64) arch=x86_64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "no Baton binary for this machine ($(uname -m 2>/dev/null || echo unknown)); on Python 3.11+ use: pipx install baton-tui" ;;
esac
name="baton-$os-$arch"
[ -n "${BATON_INSTALL_DIR:-}" ] || [ -n "${HOME:-}" ] || fail "HOME is not set: set BATON_INSTALL_DIR"

# download URL FILE: quiet (this script says what failed, in one line), following redirects.
if command -v curl >/dev/null 2>&1; then
  download() { curl -fsL --retry 2 -o "$2" "$1" 2>/dev/null; }
elif command -v wget >/dev/null 2>&1; then
  download() { wget -q -O "$2" "$1" 2>/dev/null; }
else
  fail "neither curl nor wget is installed"
fi

if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
elif command -v openssl >/dev/null 2>&1; then
  sha256() { openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1; }
else
  fail "no sha256sum, shasum or openssl to check the download with"
fi

tmp="$(mktemp -d 2>/dev/null || mktemp -d -t baton-install)" || fail "cannot make a temporary folder"
trap '[ -n "$tmp" ] && rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP

download "$url/$name" "$tmp/$name" || fail "could not download $url/$name"
download "$url/$name.sha256" "$tmp/$name.sha256" || fail "could not download $url/$name.sha256"
expected="$(cut -d ' ' -f 1 < "$tmp/$name.sha256" | head -n 1 | tr 'A-F' 'a-f')"
case "$expected" in
  *[!0-9a-f]* | "") fail "$url/$name.sha256 holds no SHA-256" ;;
esac
[ "${#expected}" -eq 64 ] || fail "$url/$name.sha256 holds no SHA-256"
actual="$(sha256 "$tmp/$name")"
[ "$actual" = "$expected" ] || fail "checksum mismatch for $name (expected $expected, got $actual): nothing installed"

# Into the folder beside the old `baton`, then renamed over it: never half a file, and a
# running `baton` keeps its own copy.
mkdir -p "$dir" 2>/dev/null || fail "cannot make $dir"
staged="$dir/.baton.install.$$"
cp "$tmp/$name" "$staged" 2>/dev/null && chmod 755 "$staged" 2>/dev/null \
  || { rm -f "$staged"; fail "cannot write to $dir"; }
mv -f "$staged" "$dir/baton" 2>/dev/null || { rm -f "$staged"; fail "cannot write $dir/baton"; }

version="$("$dir/baton" --version </dev/null 2>/dev/null | head -n 1)"
echo "installed ${version:-baton} to $dir/baton"
case ":${PATH:-}:" in
  *":$dir:"* | *":$dir/:"*) echo "$dir is on your PATH: run \`baton demo\` to see it work" ;;
  *) echo "$dir is not on your PATH: add it (for example, put"
     echo "  export PATH=\"$dir:\$PATH\""
     echo "in your shell's start-up file), then run \`baton demo\`" ;;
esac
