"""`python -m workbench` is `paw`."""

from workbench.cli import main

main()
