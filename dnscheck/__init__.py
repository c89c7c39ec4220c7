"""The live DNS check: what each record kind of a domain publishes, and what to change."""
