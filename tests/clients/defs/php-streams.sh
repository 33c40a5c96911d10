# php-streams: PHP's http:// and https:// stream wrappers
# (file_get_contents, OpenSSL), a connection per URL.
ZOO_NEED=(php) ZOO_PACKAGE=php-cli
zoo_version() { php --version; }
zoo_run() {
  shift
  php "$ZOO_DIR/progs/php_client.php" streams "$ZOO_CERT" "$@"
}
