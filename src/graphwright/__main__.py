"""`python -m graphwright`: the same CLI as the `graphwright` command."""

from graphwright.cli import main

main()
