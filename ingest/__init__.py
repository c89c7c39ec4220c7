"""Reading DMARC aggregate reports: containers, XML, per-record verdicts, and storing them."""
