# ruby-nethttp: Net::HTTP (ruby's openssl), one keep-alive connection;
# non-blocking read_nonblock() with waits in poll().
ZOO_NEED=(ruby) ZOO_PACKAGE=ruby
zoo_version() { ruby --version; }
zoo_run() {
  shift
  ruby "$ZOO_DIR/progs/ruby_client.rb" "$ZOO_CERT" "$@"
}
