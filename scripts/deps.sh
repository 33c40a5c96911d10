#!/usr/bin/env bash
# Install the Debian packages that the build, the demo and the tests need.
# Idempotent: does nothing (quietly) when everything is there.
set -euo pipefail

required=(build-essential cmake pkg-config libsqlite3-dev sqlite3 libcmocka-dev
          nginx apache2-utils wrk curl wget python3 nodejs gnuplot-nox procps
          iproute2 valgrind file time)
optional=(chromium linux-perf)

missing=()
for pkg in "${required[@]}" "${optional[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
req_missing=()
for pkg in "${missing[@]}"; do
  for r in "${required[@]}"; do [ "$pkg" = "$r" ] && req_missing+=("$pkg"); done
done
if [ ${#req_missing[@]} -gt 0 ]; then
  apt-get install -y -qq --no-install-recommends "${req_missing[@]}" >/dev/null
fi
for pkg in "${optional[@]}"; do
  case " ${missing[*]} " in
    *" $pkg "*) apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null ||
                  echo "deps: optional package $pkg not installed" >&2 ;;
  esac
done
