"""Stream report details through the real app in a process of its own and print, for each,
(body bytes, largest piece, peak of Python memory) as JSON: what earlier tests left in caches
cannot move the peaks. Run: python -m tests.webapp.stream_peaks '{"database_url": ..., ...}'."""
from __future__ import annotations

import gc
import json
import sys
import tracemalloc

from config import Config
from store import report_queries
from webapp import create_app


def measure(client, key: str, report_id: str) -> tuple[int, int, int]:
    """One detail read as sent, each piece dropped once counted; collected first, so the cyclic
    collector's next pass falls at the same point of every measurement."""
    gc.collect()
    tracemalloc.start()
    try:
        resp = client.get(f"/api/v1/reports/{report_id}",
                          headers={"Authorization": f"Bearer {key}"})
        assert resp.status_code == 200 and resp.is_streamed, resp.status_code
        total = largest = 0
        for chunk in resp.response:
            total, largest = total + len(chunk), max(largest, len(chunk))
        return total, largest, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    wanted = json.loads(sys.argv[1])
    report_queries.RECORDS_PAGE = wanted["page"]
    report_queries.RecordPages.__init__.__defaults__ = (wanted["page"],)
    config = Config(database_url=wanted["database_url"], lock_dir=wanted["lock_dir"],
                    offline=True)
    client = create_app(config).test_client()
    for report_id in wanted["reports"]:        # first uses (imports, statements) paid here
        measure(client, wanted["key"], report_id)
    print(json.dumps([measure(client, wanted["key"], r) for r in wanted["reports"]]))


if __name__ == "__main__":
    main()
