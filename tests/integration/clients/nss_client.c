/* nss_client.c - an HTTPS client of NSS and NSPR alone (no layer of its
 * own above NSS's SSL layer, unlike Firefox), for tests/integration/https.sh
 * nss: the ways a program may move NSS's plaintext, one request each on a
 * keep-alive connection.
 *
 * usage: nss_client ADDRESS PORT PATH...
 * ALPN offers http/1.1; the server's certificate is not checked (a test's
 * self-signed one). Request i is sent with PR_Write (i % 3 == 0), PR_Writev
 * in two buffers (1), or PR_Send (2); each response's first byte is peeked
 * (PR_Recv with PR_MSG_PEEK), then its head read with PR_Recv and its body
 * (Content-Length) with PR_Read. Exits 0 when every response was 200 or
 * 404 and whole, after PR_Shutdown and PR_Close (NSS's close_notify).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nss.h>
#include <prerror.h>
#include <prio.h>
#include <prnetdb.h>
#include <ssl.h>

static SECStatus accept_any(void *arg, PRFileDesc *fd, PRBool sig,
			    PRBool server)
{
	(void)arg;
	(void)fd;
	(void)sig;
	(void)server;
	return SECSuccess;
}

static void die(const char *what)
{
	fprintf(stderr, "nss_client: %s: NSPR error %d\n", what,
		(int)PR_GetError());
	exit(1);
}

/* Send request i of path over fd. */
static void send_request(PRFileDesc *fd, int i, const char *host,
			 const char *path)
{
	char req[1024];
	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: "
			 "nss_client\r\n\r\n",
			 path, host);
	PRInt32 sent;

	if (n <= 0 || (size_t)n >= sizeof(req))
		die("request too long");
	if (i % 3 == 0) {
		sent = PR_Write(fd, req, n);
	} else if (i % 3 == 1) {
		PRIOVec iov[2] = { { req, 10 }, { req + 10, n - 10 } };

		sent = PR_Writev(fd, iov, 2, PR_INTERVAL_NO_TIMEOUT);
	} else {
		sent = PR_Send(fd, req, n, 0, PR_INTERVAL_NO_TIMEOUT);
	}
	if (sent != n)
		die("send");
}

/* Read one response; its status. */
static int read_response(PRFileDesc *fd)
{
	static char buf[1 << 16];
	size_t have = 0;
	char *end = NULL, *cl;
	long body, left;
	int status;
	PRInt32 n;

	if (PR_Recv(fd, buf, 1, PR_MSG_PEEK, PR_INTERVAL_NO_TIMEOUT) != 1)
		die("peek");
	while (!end) {
		if (have + 1 >= sizeof(buf))
			die("head too long");
		n = PR_Recv(fd, buf + have, (PRInt32)(sizeof(buf) - 1 - have),
			    0, PR_INTERVAL_NO_TIMEOUT);
		if (n <= 0)
			die("recv");
		have += (size_t)n;
		buf[have] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
		die("status line");
	cl = strstr(buf, "Content-Length: ");
	if (!cl || cl > end)
		die("no Content-Length");
	body = strtol(cl + 16, NULL, 10);
	left = body - (long)(buf + have - (end + 4));
	while (left > 0) {
		n = PR_Read(fd, buf,
			    left < (long)sizeof(buf) ? (PRInt32)left
						     : (PRInt32)sizeof(buf));
		if (n <= 0)
			die("read");
		left -= n;
	}
	if (left != 0)
		die("more than the body (pipelined?)");
	return status;
}

int main(int argc, char **argv)
{
	static const unsigned char alpn[] = "\x08http/1.1";
	PRNetAddr addr;
	PRFileDesc *fd;
	char host[128];

	if (argc < 4) {
		fprintf(stderr, "usage: nss_client ADDRESS PORT PATH...\n");
		return 2;
	}
	if (NSS_NoDB_Init(NULL) != SECSuccess ||
	    NSS_SetDomesticPolicy() != SECSuccess)
		die("NSS init");
	if (PR_StringToNetAddr(argv[1], &addr) != PR_SUCCESS)
		die("address");
	addr.inet.port = PR_htons((PRUint16)atoi(argv[2]));
	snprintf(host, sizeof(host), "%s:%s", argv[1], argv[2]);
	fd = PR_OpenTCPSocket(PR_AF_INET);
	if (!fd || !(fd = SSL_ImportFD(NULL, fd)))
		die("socket");
	if (SSL_OptionSet(fd, SSL_HANDSHAKE_AS_CLIENT, PR_TRUE) != SECSuccess ||
	    SSL_OptionSet(fd, SSL_ENABLE_ALPN, PR_TRUE) != SECSuccess ||
	    SSL_SetNextProtoNego(fd, alpn, sizeof(alpn) - 1) != SECSuccess ||
	    SSL_AuthCertificateHook(fd, accept_any, NULL) != SECSuccess ||
	    SSL_SetURL(fd, argv[1]) != SECSuccess)
		die("options");
	if (PR_Connect(fd, &addr, PR_INTERVAL_NO_TIMEOUT) != PR_SUCCESS)
		die("connect");
	if (SSL_ForceHandshake(fd) != SECSuccess)
		die("handshake");
	for (int i = 3; i < argc; i++) {
		int status;

		send_request(fd, i - 3, host, argv[i]);
		status = read_response(fd);
		if (status != 200 && status != 404)
			die("status");
	}
	PR_Shutdown(fd, PR_SHUTDOWN_SEND);
	if (PR_Close(fd) != PR_SUCCESS)
		die("close");
	NSS_Shutdown();
	return 0;
}
