#!/usr/bin/env bash
# exports.sh - one list of hooks (libobserve/hooks.def): libobserve.so
# exports exactly its names (nothing more, nothing missing), the sources
# define exactly these with EXPORT, and docs/layer.md's table of hooks names
# the same ones, each in the file that defines it.
source "$(dirname "$0")/../lib/common.sh"

# the names in hooks.def: every entry starts a line with HOOK(name, or
# HOOK_LAZY(name,
sed -n 's/^HOOK\(_LAZY\)\{0,1\}(\([A-Za-z0-9_]*\),.*/\2/p' "$REPO/libobserve/hooks.def" | sort > "$WORK/list"
[ "$(wc -l < "$WORK/list")" -ge 30 ] || fail "hooks.def gave only $(wc -l < "$WORK/list") names"
[ -z "$(uniq -d "$WORK/list")" ] || fail "hooks.def names twice: $(uniq -d "$WORK/list")"
ok "hooks.def lists $(wc -l < "$WORK/list") hooks"

# compare WHAT FILE: FILE holds the same names as the list
compare() {
  local d
  d=$(diff "$WORK/list" "$2") || fail "$1 differ from hooks.def (< only in the list, > only in $1):
$d"
  ok "$1 = the list"
}

[ -f "$LIBOBSERVE" ] || fail "no $LIBOBSERVE (build first)"
nm -D --defined-only "$LIBOBSERVE" | awk '{print $3}' | sort > "$WORK/exported"
compare "libobserve.so's exports" "$WORK/exported"

# the hooks the sources define: "EXPORT <type> name(" at the start of a line,
# as file:name
for f in "$REPO"/libobserve/*.c; do
  sed -n 's/^EXPORT [^(]*[ *]\([A-Za-z0-9_]*\)(.*/\1/p' "$f" | sed "s|^|$(basename "$f"):|"
done | sort -t: -k2 > "$WORK/defined"
cut -d: -f2 "$WORK/defined" > "$WORK/defined.names"
compare "the hooks the sources define" "$WORK/defined.names"

# docs/layer.md: the table whose header is "| file | hooks |"; every
# backticked word in its second column is a hook of the file in its first
awk -F'|' '/^\| file \| hooks \|/ { t = 1; next }
  t && !/^\|/ { exit }
  t && $2 !~ /^-/ {
    file = $2; gsub(/[ `]/, "", file)
    n = split($3, w, "`")
    for (i = 2; i <= n; i += 2) print file ":" w[i]
  }' "$REPO/docs/layer.md" | sort -t: -k2 > "$WORK/documented"
cut -d: -f2 "$WORK/documented" > "$WORK/documented.names"
compare "the hooks in docs/layer.md" "$WORK/documented.names"
d=$(diff "$WORK/defined" "$WORK/documented") ||
  fail "docs/layer.md puts hooks in other files than the sources (< sources, > docs):
$d"
ok "docs/layer.md names the file of each hook"
