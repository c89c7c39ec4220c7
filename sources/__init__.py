"""Sending sources: who an IP is (reverse DNS, service map), where it is, its DNSBL reputation,
and the verdicts built on them. Pure functions over plain values, with thin DNS and file I/O."""
