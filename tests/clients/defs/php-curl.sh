# php-curl: PHP's curl extension (libcurl, OpenSSL), one handle: keep-alive.
ZOO_NEED=(php) ZOO_PACKAGE=php-curl
zoo_probe() { php -r 'exit(function_exists("curl_init") ? 0 : 1);' || { echo "no curl extension"; return 1; }; }
zoo_version() { php -r 'echo "PHP ", PHP_VERSION, ", libcurl ", curl_version()["version"], "\n";'; }
zoo_run() {
  shift
  php "$ZOO_DIR/progs/php_client.php" curl "$ZOO_CERT" "$@"
}
