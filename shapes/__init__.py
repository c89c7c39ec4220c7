"""The JSON bodies the API answers, declared once as typed definitions (shapes/bodies.py).

The snapshotter builds its bodies through them, a stored snapshot carries its shape's version
(shapes/versions.py), and tests/shapes checks each against webapp/openapi.json field by field.
Plain declarations: this room imports nothing of rua.
"""
