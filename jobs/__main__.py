"""`python -m jobs`: the scheduler, as `rua scheduler` runs it."""
import os

import logs
from config import Config
from jobs.scheduler import run

if __name__ == "__main__":
    config = Config.from_env(os.environ)
    logs.configure(config)
    run(config)
