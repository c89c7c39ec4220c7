"""`python -m jobs`: the scheduler, as `rua scheduler` runs it."""
import logging
import os

from config import Config
from jobs.scheduler import run

if __name__ == "__main__":
    config = Config.from_env(os.environ)
    logging.basicConfig(level=config.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    run(config)
