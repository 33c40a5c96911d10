# siege: the load tester (its own HTTP code, OpenSSL), one user going
# through a list of URLs (a repetition is one URL).
ZOO_NEED=(siege) ZOO_PACKAGE=siege
zoo_version() { siege --version 2>&1 | head -n 1; }
zoo_run() {
  shift
  printf '%s\n' "$@" > urls.txt
  siege -q -r "$#" -c 1 -f urls.txt >/dev/null 2>siege.err
}
