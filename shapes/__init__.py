"""The JSON bodies the API answers, declared once as typed definitions: the snapshot routes'
(shapes/bodies.py), those of routes answered from the store at request time
(shapes/resources.py) and the report details (shapes/reports.py).

The snapshotter builds its bodies through them, a stored snapshot carries its shape's version
(shapes/versions.py), and tests/shapes checks each against webapp/openapi.json field by field
and each body a generated store serves against its shape.
Plain declarations: this package imports nothing of rua.
"""
