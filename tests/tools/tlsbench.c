/* tlsbench.c - what the TLS hooks cost per call, for scripts/bench.sh.
 *
 * A loopback TCP pair in one thread with OpenSSL on both ends (a key and
 * certificate made in memory): the connecting end is tracked by the layer,
 * and its SSL_write and SSL_read go through the layer's hooks when it is
 * preloaded; the accepted end is not tracked. Per iteration the client
 * writes 64 bytes of plaintext (SSL_write), the server reads them and
 * writes 64 back, the client reads them (SSL_read): two hooked TLS calls
 * on the tracked end, each with one socket call inside, and one exchange.
 *
 * Run under callgrind bare and preloaded: the difference per iteration is
 * what the layer adds (the socket hooks and the TLS hooks); the functions
 * of the TLS hooks are told apart in callgrind's output
 * (scripts/bench.sh). Prints the wall time per iteration.
 *
 * usage: tlsbench [ITERATIONS]   (default 20000)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

static void die(const char *what)
{
	fprintf(stderr, "tlsbench: %s\n", what);
	ERR_print_errors_fp(stderr);
	exit(1);
}

/* A self-signed certificate for an EC key, in memory. */
static SSL_CTX *server_ctx(void)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *cert = X509_new();

	if (!ctx || !key || !cert)
		die("no key");
	ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
	X509_gmtime_adj(X509_getm_notBefore(cert), 0);
	X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
	X509_set_pubkey(cert, key);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN",
				   MBSTRING_ASC, (const unsigned char *)"bench",
				   -1, -1, 0);
	X509_set_issuer_name(cert, X509_get_subject_name(cert));
	if (!X509_sign(cert, key, EVP_sha256()) ||
	    SSL_CTX_use_certificate(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, key) != 1)
		die("no certificate");
	X509_free(cert);
	EVP_PKEY_free(key);
	return ctx;
}

static void pair(int *client, int *server)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &len))
		die("no listening socket");
	*client = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*client, (struct sockaddr *)&a, sizeof(a)))
		die("no connection");
	*server = accept(l, NULL, NULL);
	close(l);
	setsockopt(*client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Both handshakes in one thread: non-blocking, in turns. */
static void handshake(SSL *c, SSL *s, int cfd, int sfd)
{
	int done_c = 0, done_s = 0;

	fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) | O_NONBLOCK);
	fcntl(sfd, F_SETFL, fcntl(sfd, F_GETFL) | O_NONBLOCK);
	for (int i = 0; i < 10000 && !(done_c && done_s); i++) {
		if (!done_c)
			done_c = SSL_connect(c) == 1;
		if (!done_s)
			done_s = SSL_accept(s) == 1;
	}
	if (!done_c || !done_s)
		die("no handshake");
	fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) & ~O_NONBLOCK);
	fcntl(sfd, F_SETFL, fcntl(sfd, F_GETFL) & ~O_NONBLOCK);
}

static void full(int got, int want, const char *what)
{
	if (got != want)
		die(what);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	SSL_CTX *sctx = server_ctx(), *cctx = SSL_CTX_new(TLS_client_method());
	SSL *c, *s;
	int cfd, sfd;
	char buf[64];
	struct timespec t0, t1;

	pair(&cfd, &sfd);
	c = SSL_new(cctx);
	s = SSL_new(sctx);
	SSL_set_fd(c, cfd);
	SSL_set_fd(s, sfd);
	handshake(c, s, cfd, sfd);
	memset(buf, 'x', sizeof(buf));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		full(SSL_write(c, buf, 64), 64, "client write");
		full(SSL_read(s, buf, 64), 64, "server read");
		full(SSL_write(s, buf, 64), 64, "server write");
		full(SSL_read(c, buf, 64), 64, "client read");
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.1f ns per iteration\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
		       (double)n);
	SSL_free(c);
	SSL_free(s);
	close(cfd);
	close(sfd);
	SSL_CTX_free(cctx);
	SSL_CTX_free(sctx);
	return 0;
}
