"""What a member's role and a key's scope may be: plain names, so the CLI's options can list
them without loading the models (webapp/auth.py maps each role to its permissions)."""

ROLES = ("owner", "admin", "analyst", "viewer", "billing")
SCOPES = ("read", "full")
