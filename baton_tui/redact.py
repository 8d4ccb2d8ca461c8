"""Secrets out, escapes defused: what Baton keeps and shows of an agent's words (stdlib only).

Agents quote what they see — a key from their environment, a token in a config file — and
their output carries terminal escapes. Everything Baton stores about an agent (events,
reports) passes through `clean` on its way into the store, and what the CLI prints of an
agent passes through `escape_controls`, so neither a secret nor an escape sequence reaches
the store, `--json` output or a terminal. The raw output log is the one exception: it stays
as the agent wrote it, private to the person (0600).

What counts as a secret: the values of the person's configured `[players.*] env` (handed
over with `remember`), the values of environment variables whose names look secret
(a part `KEY`, or one ending in `TOKEN`, `SECRET`, `PASSWORD`: `API_KEY_PROD`, or named in
`BATON_SECRETS`), and well-known key shapes (`sk-…`, `ghp_…`, `AKIA…`, bearer tokens,
private key blocks, Baton's nonces).

An attempt's agent may echo a value from the environment Baton started it with, which the
terminal reading its log later may not have: the attempt keeps `fingerprints` of those
values (salted hashes, never the values), and `redact_known` finds them in its output.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False  # `typing` stays unimported on the report path (it costs 3 ms)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

REDACTED = "[redacted]"
SECRETS_VAR = "BATON_SECRETS"   # names (never values) of an attempt's configured variables
MIN_SECRET = 8                  # shorter values ("1", "true", "dev") would redact noise

# A name part (between underscores) that is KEY, or ends in TOKEN, SECRET, PASSWORD…:
# API_KEY, API_KEY_PROD, GITHUB_TOKEN_RO, DBPASSWORD — not KEYCLOAK_URL or MONKEY.
_SECRET_NAME = re.compile(r"(?:^|_)(?:(?:API|ACCESS|PRIVATE)?KEYS?|[A-Z0-9]*(?:TOKEN|SECRET|"
                          r"PASSWORD|PASSWD|PASSPHRASE)S?)(?:_|$)", re.I)
_SHAPES = re.compile("|".join((
    r"(?<![A-Za-z0-9])sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}",        # OpenAI / Anthropic
    r"(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}",                  # GitHub tokens
    r"(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{30,}",
    r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}",                    # GitLab
    r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])",       # AWS access key ids
    r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}",               # Slack
    r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}",                       # Google
    r"(?<![A-Za-z0-9])bnc_[0-9a-f]{32}(?![0-9a-f])",                # Baton's own nonces
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
)))
_PREFIXES = ("sk-", "gh", "github_pat_", "glpat-", "AKIA", "ASIA", "xox", "AIza", "bnc_",
             "PRIVATE KEY")
_BEARER = re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/-]{16,}=*")
_URL_PASSWORD = re.compile(r"(://[^/\s:@]+:)[^/\s@]+@")
# C0 controls but newline and tab, a carriage return not ending a line, DEL, C1 controls,
# and the bidirectional overrides that reorder what a terminal shows.
_CONTROLS = re.compile("\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_ANY_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # a quick look

_remembered: set[str] = set()
_compiled: dict[frozenset[str], tuple[str, ...]] = {}


def remember(values: Iterable[str]) -> None:
    """Treat these values as secrets in this process (the person's configured env values)."""
    _remembered.update(v for v in values if _worth_hiding(v))


def remember_configured(files: Iterable[Any]) -> None:
    """Remember the `[players.*] env` values of these TOML files without validating them
    (for commands that print agent text but load no configuration: `baton logs`)."""
    import tomllib  # lazy: `baton report` never needs it

    for path in files:
        try:
            with open(path, "rb") as fh:
                raw = tomllib.loads(fh.read(1 << 20).decode("utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        players = raw.get("players")
        if not isinstance(players, dict):
            players = {}
        custom = players.get("custom") or {}
        tables = [*players.values(), *custom.values()] if isinstance(custom, dict) \
            else list(players.values())
        for table in tables:
            env = table.get("env") if isinstance(table, dict) else None
            if isinstance(env, dict):
                remember(v for v in env.values() if isinstance(v, str))


def _worth_hiding(value: str) -> bool:
    # A path-valued "key" variable names where a key lives; the path itself is no secret,
    # and hiding it would garble the worktree paths and refs that events carry.
    return (isinstance(value, str) and len(value) >= MIN_SECRET and not value.isdigit()
            and not value.startswith(("/", "~", "./")))


def secret_names(env: Mapping[str, str]) -> list[str]:
    """The environment variables whose values are secrets: secret-looking names and the
    names `BATON_SECRETS` lists."""
    listed = {n for n in env.get(SECRETS_VAR, "").split(",") if n}
    return sorted(n for n in env if n in listed or _SECRET_NAME.search(n))


def secret_values(env: Mapping[str, str] | None = None) -> frozenset[str]:
    """Every value this process hides: remembered ones and the environment's secret ones.
    Which names are secret is worked out once per set of names (every event asks)."""
    if env is not None:
        given = secret_names(env)
        return frozenset({env[n] for n in given if _worth_hiding(env[n])} | _remembered)
    env = os.environ  # names read again when variables come or go (cheap to tell: a count)
    key = (len(env), env.get(SECRETS_VAR, ""))
    names = _names.get(key)
    if names is None:
        if len(_names) > 32:
            _names.clear()
        names = _names[key] = tuple(secret_names(env))
    found = {v for n in names if (v := env.get(n)) is not None and _worth_hiding(v)}
    return frozenset(found | _remembered) if _remembered else frozenset(found)


_names: dict[tuple[int, str], tuple[str, ...]] = {}


def _ordered(values: frozenset[str]) -> tuple[str, ...]:
    if values not in _compiled:
        if len(_compiled) > 32:
            _compiled.clear()
        _compiled[values] = tuple(sorted(values, key=len, reverse=True))  # longest first
    return _compiled[values]


def redact(text: str, values: frozenset[str] | None = None) -> str:
    """`text` with every secret replaced by `[redacted]`. Substring tests first: most text
    holds no secret, and they cost far less than a regular expression's pass."""
    if len(text) < MIN_SECRET:
        return text
    for value in _ordered(secret_values() if values is None else values):
        if value in text:
            text = text.replace(value, REDACTED)
    if any(prefix in text for prefix in _PREFIXES):
        text = _SHAPES.sub(_shape, text)
    if "earer" in text or "EARER" in text:
        text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    if "://" in text and "@" in text:
        text = _URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED + "@", text)
    return text


def _shape(match: re.Match[str]) -> str:
    token = match.group(0)
    if token.startswith("sk-") and not (any(c.isdigit() for c in token)
                                        and any(c.isupper() for c in token)):
        return token  # a slug such as `sk-learn-upgrade-…`, not a key (keys mix case and digits)
    return REDACTED


def escape_controls(text: str) -> str:
    """Control characters shown as escapes (`\\x1b`), so a terminal prints them instead of
    obeying them. Newlines and tabs stay."""
    return _CONTROLS.sub(_escape, text) if _ANY_CONTROL.search(text) else text


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(value: Any, values: frozenset[str] | None = None) -> Any:
    """A JSON-like value with secrets redacted and control characters escaped in every
    string (dict keys included); what Baton stores about an agent goes through here."""
    values = secret_values() if values is None else values
    if isinstance(value, str):
        return escape_controls(redact(value, values))
    if isinstance(value, dict):
        return {clean(k, values) if isinstance(k, str) else k: clean(v, values)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v, values) for v in value]
    return value


# What an echoed secret is made of (a run of these, or a piece of one between = : @ /).
_RUN = re.compile(r"[A-Za-z0-9_+/=.~:@%-]{" + str(MIN_SECRET) + ",}")


def _digest(salt: str, value: str) -> str:
    import hashlib  # lazy: `baton report` never fingerprints

    return hashlib.sha256((salt + value).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def fingerprints(env: Mapping[str, str]) -> dict[str, Any] | None:
    """Salted hashes of the secret values in `env`, by length (what an attempt records so a
    reader without that environment can still redact them); None when there are none."""
    import secrets  # lazy: only the conductor fingerprints

    values = secret_values(env)
    if not values:
        return None
    salt = secrets.token_hex(16)
    by_length: dict[str, list[str]] = {}
    for value in sorted(values):
        by_length.setdefault(str(len(value)), []).append(_digest(salt, value))
    return {"salt": salt, "by_length": by_length}


_SEPARATORS = re.compile("([=:@/])")


def _pieces(run: str) -> set[str]:
    """The run and every stretch of it between separators an echoed value may sit between
    (`NAME=value`, `user:value@host`, a path), without a sentence's full stop."""
    parts = _SEPARATORS.split(run)
    if len(parts) > 63:  # a long path: its pieces one by one
        parts = parts[::2]
        return {p for part in parts for p in (part, part.rstrip("."))}
    found: set[str] = set()
    for i in range(0, len(parts), 2):
        for j in range(i, len(parts), 2):
            piece = "".join(parts[i:j + 1])
            found.update((piece, piece.rstrip(".")))
    return found


def redact_known(text: str, prints: Mapping[str, Any] | None) -> str:
    """`text` with every value whose fingerprint `prints` holds replaced by `[redacted]`.
    A value echoed inside other text of its own characters (no space, quote or = around
    it) is not found: such values are redacted by their shape or the reader's environment."""
    if not prints or len(text) < MIN_SECRET:
        return text
    salt = prints.get("salt", "")
    wanted = {int(k): set(v) for k, v in prints.get("by_length", {}).items()}
    shortest = min(wanted, default=0)
    found: set[str] = set()
    for match in _RUN.finditer(text):
        run = match.group(0)
        for piece in _pieces(run) if len(run) > shortest else (run,):
            digests = wanted.get(len(piece))
            if digests and _digest(salt, piece) in digests:
                found.add(piece)
    for value in sorted(found, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text
