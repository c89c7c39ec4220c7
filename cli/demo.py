"""rua subcommands (being built)."""


def register(main):
    """Add this module's commands to the rua group."""
