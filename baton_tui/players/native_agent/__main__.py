"""`python -m baton_tui.players.native_agent`: how the attempt shim starts the loop."""

from baton_tui.players.native_agent.loop import main

raise SystemExit(main())
