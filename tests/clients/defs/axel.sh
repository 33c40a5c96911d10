# axel: a download accelerator (OpenSSL, certificate unchecked: -k); one
# process per URL (it takes several URLs as mirrors of one file), its own
# HTTP code: a first GET abandoned after the headers, then ranges (one
# connection: -n 1, so that the requests are the same in every run).
ZOO_NEED=(axel) ZOO_PACKAGE=axel
zoo_version() { axel --version; }
zoo_run() {
  shift
  local url rc=0 n=0
  for url; do
    n=$((n + 1))
    axel -q -k -n 1 -o "file$n" "$url" || rc=$?
  done
  return "$rc"
}
