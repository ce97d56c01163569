"""``python -m daft_doris diagnose …``: the command-line face of :func:`daft_doris.diagnose`."""

import sys

from daft_doris.diagnostics import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "diagnose":
        print("usage: python -m daft_doris diagnose --host HOST [options] (--help for the options)")
        sys.exit(2)
    sys.exit(main(args[1:]))
