"""The background jobs: one scheduler runs each package's own job functions, with their intervals
and locks (`rua scheduler`, `rua scheduler --once JOB`); never inside gunicorn workers."""
