"""``python -m baton_tui.demo.server --script FILE.json``: see :mod:`baton_tui.demo.server.cli`."""

from baton_tui.demo.server.cli import main

raise SystemExit(main())
