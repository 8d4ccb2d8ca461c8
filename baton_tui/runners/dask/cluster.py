"""Talking to a Dask cluster from this machine: connecting, and `baton runners`' look at it.

`distributed` is an optional extra (`pip install 'baton-tui[dask]'`): it is imported here,
inside the functions, only when a Dask runner is actually used — `baton --help`, `baton
status` and every local run never pay for it. A scheduler is contacted only for a runner the
person trusts (Dask's wire protocol carries pickles: a scheduler is as trusted as a command).
"""

from __future__ import annotations

import inspect
import platform
import sys
from typing import TYPE_CHECKING, Any

from baton_tui import __version__
from baton_tui.core.errors import BatonError

if TYPE_CHECKING:
    from distributed import Client

    from baton_tui.runners_config import RunnerSettings

CONNECT_TIMEOUT = 10.0
INSTALL_HINT = "install it with `pip install 'baton-tui[dask]'`"


def versions() -> dict[str, str]:
    """This process's Baton and Python versions (run on each worker, too)."""
    return {"baton": __version__, "python": platform.python_version()}


def have_distributed() -> bool:
    try:
        import distributed  # noqa: F401  # lazy: the optional extra, only for Dask runners
    except ImportError:
        return False
    return True


def connect(settings: "RunnerSettings", timeout: float = CONNECT_TIMEOUT) -> "Client":
    """A client of the runner's scheduler, or a one-line BatonError saying why not."""
    try:
        from distributed import Client  # lazy: the optional extra, only for Dask runners
    except ImportError:
        raise BatonError(f"the `distributed` package is not installed here: {INSTALL_HINT}") \
            from None
    try:
        return Client(settings.address, timeout=f"{timeout}s", set_as_default=False)
    # Broad on purpose: a failed connection raises what the comm layer has (OSError,
    # TimeoutError, a refused handshake's own types…), and every one is "unreachable, why".
    except Exception as exc:
        raise BatonError(f"scheduler {settings.address} is unreachable: "
                         f"{_one_line(exc) or type(exc).__name__}") from None


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


def probe(name: str, settings: "RunnerSettings", timeout: float = CONNECT_TIMEOUT
          ) -> dict[str, Any]:
    """What `baton runners` says of one Dask runner: reachable or not (why), its workers,
    what each offers, and whether their Baton and Python versions match this machine's."""
    ours = versions()
    found: dict[str, Any] = {
        "name": name, "kind": settings.kind, "address": settings.address,
        "exchange": settings.exchange, "trusted": True, "reachable": False, "reason": None,
        "workers": [], "versions_match": None, "baton": ours["baton"], "python": ours["python"]}
    try:
        client = connect(settings, timeout)
    except BatonError as exc:
        found["reason"] = exc.message
        return found
    try:
        info = client.scheduler_info(n_workers=-1) if _takes_n_workers(client) \
            else client.scheduler_info()
        workers = info.get("workers", {}) or {}
        try:
            theirs = client.run(versions, on_error="return")
        # A worker that cannot import Baton fails the call with its own ImportError, pickling
        # error or comm error: each worker's row says it, whatever it was.
        except Exception as exc:
            theirs = {address: exc for address in workers}
        match = True
        for address, worker in sorted(workers.items()):
            seen = theirs.get(address)
            if isinstance(seen, dict):
                same = seen.get("baton") == ours["baton"] and seen.get("python") == ours["python"]
                baton, python, problem = seen.get("baton"), seen.get("python"), None
            else:
                same, baton, python = False, None, None
                problem = f"Baton is not importable there ({_one_line(seen) if seen else 'no answer'})"
            if not same and problem is None:
                problem = (f"runs Baton {baton} on Python {python}, this machine Baton "
                           f"{ours['baton']} on Python {ours['python']}")
            match = match and same
            found["workers"].append({
                "address": address, "name": worker.get("name"),
                "resources": dict(worker.get("resources") or {}),
                "baton": baton, "python": python, "versions_match": same, "problem": problem})
        found["reachable"] = True
        found["versions_match"] = match if workers else None
        found["exposed"] = _exposed(client, settings)
        if not workers:
            found["reason"] = "the scheduler has no workers"
    # `baton runners` reports; it never raises: whatever the scheduler said goes in `reason`.
    except Exception as exc:
        found["reason"] = f"scheduler {settings.address}: {_one_line(exc)}"
    finally:
        try:
            client.close(timeout=5)
        except (OSError, TimeoutError, RuntimeError):  # already gone: nothing held
            pass
    return found


def listening(dask_scheduler: Any = None, dask_worker: Any = None) -> list[str]:
    """Where this Dask scheduler or worker listens (run there: `Client.run_on_scheduler`,
    `Client.run`): its comm listeners (`tcp://…`, `tls://…`) and its HTTP server
    (`http://…`, the dashboard — open even under `--no-dashboard` unless bound elsewhere)."""
    server = dask_scheduler if dask_scheduler is not None else dask_worker
    found = [str(getattr(listener, "listen_address", "")) for listener in
             getattr(server, "listeners", []) or []]
    http = getattr(server, "http_server", None)
    if http is not None:
        for sock in list(getattr(http, "_sockets", {}).values()):
            try:
                host, port = sock.getsockname()[:2]
            except OSError:
                continue
            scheme = "https" if getattr(http, "ssl_options", None) else "http"
            found.append(f"{scheme}://{f'[{host}]' if ':' in host else host}:{port}")
    return [address for address in found if address]


def open_beyond_loopback(addresses: list[str]) -> list[str]:
    """The addresses among `addresses` reachable from other machines without TLS: a plain
    `tcp://`, `ws://` or `http://` on any host but the loopback (0.0.0.0 and :: are every
    interface)."""
    import ipaddress  # lazy: `baton runners` only

    found = []
    for address in addresses:
        scheme, _, rest = address.partition("://")
        if scheme in ("tls", "wss", "https", "inproc", "ucx"):
            continue
        host = rest.rsplit(":", 1)[0].strip("[]")
        if host == "localhost":
            continue
        try:
            if ipaddress.ip_address(host).is_loopback:
                continue
        except ValueError:
            pass  # a host name: not known to stay on this machine
        found.append(address)
    return found


def _exposed(client: "Client", settings: "RunnerSettings") -> list[str]:
    """Where the runner's scheduler and workers can be reached beyond loopback without TLS:
    Dask's protocol carries pickles, so whoever reaches them can run code as their user."""
    seen = [f"scheduler {a}" for a in open_beyond_loopback([settings.address])]
    try:
        seen += [f"scheduler {a}" for a in open_beyond_loopback(
            client.run_on_scheduler(listening)) if f"scheduler {a}" not in seen]
    # A scheduler that cannot run it (an older Dask, a refused pickle…): its listeners go
    # unlisted; the address the person configured was judged above.
    except Exception:
        pass
    try:
        for worker, addresses in sorted(client.run(listening, on_error="return").items()):
            if isinstance(addresses, list):
                seen += [f"worker {worker} {a}" for a in open_beyond_loopback(addresses)]
    except Exception:  # (as for the scheduler above: those workers go unlisted)
        pass
    return seen


def _takes_n_workers(client: "Client") -> bool:
    try:
        return "n_workers" in inspect.signature(client.scheduler_info).parameters
    except (TypeError, ValueError):
        return False


def python_tag() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"
