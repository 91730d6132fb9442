#!/usr/bin/env bash
# bench_summary.sh FILE - the closing table of `make bench-all`: every row
# the benchmarks gave to ag_bench_summary (tests/integration/lib.sh), one
# tab-separated line each (row, goal, measured, met), as a Markdown table
# for README's "Speed" section, with how many rows met their goal.
set -u
f=${1:?usage: bench_summary.sh FILE}
[ -s "$f" ] || { echo "no benchmark rows in $f" >&2; exit 1; }
echo
echo "Summary ($(nproc) CPUs, $(date -u +%FT%TZ); the goals are issue 38's and issue 20's; \"floor\": the sandbox off, no goal)"
echo
echo "| what | goal | measured | met |"
echo "|---|---|---|---|"
awk -F '\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$f"
echo
awk -F '\t' '$4 == "met" { m++ } $4 == "not met" { n++ }
    END { printf "%d rows with a goal: %d met, %d not met\n", m + n, m, n }' "$f"
