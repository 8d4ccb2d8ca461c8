from baton_tui.cli import entry

entry()
