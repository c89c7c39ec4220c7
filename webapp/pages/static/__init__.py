"""The pages' style sheet and icon, served by webapp/pages/assets.py."""
