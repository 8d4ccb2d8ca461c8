"""The single-file binary's script (PyInstaller's entry point): see baton_tui/frozen.py."""

from baton_tui.frozen import main

main()
