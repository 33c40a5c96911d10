# perl-httptiny: HTTP::Tiny (core perl; IO::Socket::SSL, OpenSSL), one
# keep-alive connection; select() and sysread().
ZOO_NEED=(perl) ZOO_PACKAGE=perl
zoo_probe() { perl -MHTTP::Tiny -MIO::Socket::SSL -e 1; }
zoo_version() { perl -MHTTP::Tiny -e 'print "perl $^V, HTTP::Tiny $HTTP::Tiny::VERSION\n"'; }
zoo_run() {
  shift
  perl "$ZOO_DIR/progs/perl_client.pl" tiny "$ZOO_CERT" "$@"
}
