#!/usr/bin/env python3
"""Median (min–max) ms/step per case and binary from run.sh's output, and new/base."""
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 3:
        try:
            d[(parts[0], parts[1])].append(float(parts[2]))
        except ValueError:
            pass
for case in dict.fromkeys(c for c, _ in d):
    b, n = d[(case, "base")], d[(case, "new")]
    mb, mn = statistics.median(b), statistics.median(n)
    print(f"{case:28s} base {mb:8.3f} ({min(b):.3f}–{max(b):.3f})  new {mn:8.3f} ({min(n):.3f}–{max(n):.3f})  new/base {mn / mb:.3f}  n={len(b)}")
