"""The snapshotter: reads the daily rollups, computes every precomputed body, stores them as blobs.

Pure modules (no database, no HTTP): model, grades, scores, trends, history, dns, verdicts,
overview, health, series. Thin I/O around them: day_totals, facts, jobs, locks, scheduler.
"""
