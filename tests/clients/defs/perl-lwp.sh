# perl-lwp: LWP::UserAgent (libwww-perl, LWP::Protocol::https,
# IO::Socket::SSL: OpenSSL), keep-alive cache; select() and sysread().
ZOO_NEED=(perl) ZOO_PACKAGE=libwww-perl
zoo_probe() { perl -MLWP::UserAgent -MLWP::Protocol::https -e 1; }
zoo_version() { perl -MLWP -e 'print "perl $^V, LWP $LWP::VERSION\n"'; }
zoo_run() {
  shift
  perl "$ZOO_DIR/progs/perl_client.pl" lwp "$ZOO_CERT" "$@"
}
