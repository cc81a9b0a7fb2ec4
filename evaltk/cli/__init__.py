"""The ``evaltk`` command line: one module per subcommand, wired in :mod:`evaltk.cli.main`."""
