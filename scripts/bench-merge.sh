#!/usr/bin/env bash
# bench-merge.sh [CLIENTS] [EXCHANGES] - time `manager pull` of CLIENTS client
# databases of EXCHANGES exchanges each into a new central database
# (defaults 100 and 100000: the manager's scale requirement, under 60 s),
# then pull the same again (nothing new: each source skipped on its
# signature) and again with one source changed (read from its mark).
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-100}
per=${2:-100000}
[[ -n ${SKIP_DEPS:-} ]] || scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 >/dev/null
# BENCH_DIR=DIR keeps the generated client databases there for another run
if [[ -n ${BENCH_DIR:-} ]]; then
  dir=$BENCH_DIR
  mkdir -p "$dir"
  rm -f "$dir"/central.db*
else
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
if [[ ! -f $dir/clients/client-$clients.db || $(sqlite3 "$dir/one.db" "SELECT count(*) FROM exchange" 2>/dev/null) != "$per" ]]; then
rm -rf "$dir/clients"
build/bin/spoolgen "$dir/one.spool" "$per"
mkdir -p "$dir/clients"
build/bin/slicer -q -o "$dir/one.db" "$dir/one.spool"
sqlite3 "$dir/one.db" "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;" >/dev/null
for ((i = 1; i <= clients; i++)); do
  cp "$dir/one.db" "$dir/clients/client-$i.db"
  sqlite3 "$dir/clients/client-$i.db" "UPDATE client SET name = 'client-$i'"
done
fi
start=$(date +%s%N)
build/bin/manager pull -o "$dir/central.db" "$dir/clients"
end=$(date +%s%N)
first=$(( (end - start) / 1000000 ))
rows=$(sqlite3 "$dir/central.db" "SELECT count(*) FROM exchange")
echo "merged $clients databases of $per exchanges ($rows rows) in $first ms"
start=$(date +%s%N)
build/bin/manager pull -o "$dir/central.db" "$dir/clients"
end=$(date +%s%N)
again=$(( (end - start) / 1000000 ))
echo "pulled the same $clients databases again in $again ms ($(awk -v a="$again" -v b="$first" 'BEGIN { printf "%.1f%%", 100 * a / (b ? b : 1) }') of the first pull)"
# one source changed (a row in flight brought up to date, as a slicer
# would): that source is checked and read from its mark, the others skipped
sqlite3 "$dir/clients/client-1.db" "UPDATE exchange SET complete = complete WHERE id = (SELECT max(id) FROM exchange)"
start=$(date +%s%N)
build/bin/manager pull -o "$dir/central.db" "$dir/clients"
end=$(date +%s%N)
again=$(( (end - start) / 1000000 ))
echo "pulled again with one source changed in $again ms ($(awk -v a="$again" -v b="$first" 'BEGIN { printf "%.1f%%", 100 * a / (b ? b : 1) }') of the first pull)"
