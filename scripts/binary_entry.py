"""The single-file binary's script (PyInstaller's entry point): see baton_tui/frozen.py.

The API clients' SDKs (`anthropic`, `openai`: some 5,400 modules, which only the native agent
imports) are one zip in the bundle, `_internal/sdks.zip` (scripts/build-binary), not 5,400 files
for a first start to write; a finder here imports those packages from it. Every other module is
a plain `.pyc` file in the bundle."""

import os
import sys


class ZippedPackages:
    """Finds the named top-level packages in a zip; their modules follow through `__path__`."""

    def __init__(self, archive: str, names: frozenset[str]) -> None:
        self.archive, self.names = archive, names

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        if fullname not in self.names:
            return None
        import zipimport

        return zipimport.zipimporter(self.archive).find_spec(fullname, target)


_sdks = os.path.join(getattr(sys, "_MEIPASS", ""), "sdks.zip")
if os.path.isfile(_sdks):
    sys.meta_path.append(ZippedPackages(_sdks, frozenset({"anthropic", "openai"})))

from baton_tui.frozen import main  # noqa: E402

main()
