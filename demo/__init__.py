"""Demo data: realistic DMARC aggregate reports for `rua demo`, benchmarks and tests."""
