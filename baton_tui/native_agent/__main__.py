"""`python -m baton_tui.native_agent`: how the attempt shim starts the loop."""

from baton_tui.native_agent.loop import main

raise SystemExit(main())
