"""Pure domain rules several packages share (alignment, a sender's verdict, report windows): plain
values in and out, no I/O, so ingest, sources and the webapp apply the same ones."""
