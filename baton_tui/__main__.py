import sys

from baton_tui.cli import main

sys.exit(main())
