<?php
// One client of the zoo in PHP: fetch each URL in turn, read it all.
// usage: php php_client.php streams|curl CAFILE URL...
// streams: file_get_contents() with an http/ssl stream context (PHP's own
//   HTTP code, a connection per URL).
// curl: the curl extension (libcurl), one handle: keep-alive.
// Exit status 0 when every URL answered 2xx, 1 otherwise.
[$_, $mode, $cafile] = $argv;
$urls = array_slice($argv, 3);
$ok = true;
if ($mode === 'streams') {
	$ctx = stream_context_create([
		'ssl' => ['cafile' => $cafile, 'verify_peer' => true],
		'http' => ['timeout' => 30, 'ignore_errors' => true],
	]);
	foreach ($urls as $url) {
		$body = file_get_contents($url, false, $ctx);
		$status = $http_response_header[0] ?? '';
		$ok = $ok && $body !== false && preg_match('#^HTTP/\S+ 2#', $status);
	}
} else {
	$h = curl_init();
	curl_setopt_array($h, [CURLOPT_RETURNTRANSFER => true,
		CURLOPT_CAINFO => $cafile, CURLOPT_TIMEOUT => 30]);
	foreach ($urls as $url) {
		curl_setopt($h, CURLOPT_URL, $url);
		$ok = $ok && curl_exec($h) !== false &&
			intdiv(curl_getinfo($h, CURLINFO_RESPONSE_CODE), 100) === 2;
	}
	curl_close($h);
}
exit($ok ? 0 : 1);
