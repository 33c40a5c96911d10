/* redact.c - the command line without its secrets (rule: redact.h). */
#include "redact.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#define HIDDEN "***"

/* Where the redacted arguments go: out[0..size), used so far. */
struct sink {
	char *out;
	size_t size, used;
};

static void put(struct sink *s, const char *p, size_t n)
{
	if (s->used >= s->size)
		return;
	if (n > s->size - s->used)
		n = s->size - s->used;
	memcpy(s->out + s->used, p, n);
	s->used += n;
}

static void put_str(struct sink *s, const char *p)
{
	put(s, p, strlen(p));
}

/* The end of one argument: its NUL, even when it was cut. */
static void end_arg(struct sink *s)
{
	if (s->used < s->size)
		s->out[s->used++] = '\0';
	else if (s->size > 0)
		s->out[s->size - 1] = '\0';
}

/* Words that make a name (option, header, parameter) a credential's. */
static const char *const secret_words[] = {
	"pass",	   "secret",	 "token",  "key",	"auth",	   "cookie",
	"session", "credential", "bearer", "signature", "private", NULL,
};

/* Whether name[0..n) holds one of the secret words (any case). */
static bool name_is_secret(const char *name, size_t n)
{
	for (const char *const *w = secret_words; *w; w++) {
		size_t k = strlen(*w);

		for (size_t i = 0; i + k <= n; i++)
			if (strncasecmp(name + i, *w, k) == 0)
				return true;
	}
	return false;
}

/* The last words of long options whose value is a secret, whatever the
 * program (--api-key X, --auth-token X, --db-password X). */
static const char *const secret_last_words[] = {
	"password", "passwd", "passphrase", "pass",	   "token",  "secret",
	"key",	    "apikey", "credential", "credentials", "bearer", NULL,
};

/* Whether the long option name[0..n) ends in one of secret_last_words
 * after its last '-' or '_', and is no flag that only says whether to use
 * one (--no-password, --ask-password). */
static bool option_ends_secret(const char *name, size_t n)
{
	size_t i = n;

	if ((n >= 3 && strncmp(name, "no-", 3) == 0) ||
	    (n >= 4 && strncmp(name, "ask-", 4) == 0))
		return false;
	while (i > 0 && name[i - 1] != '-' && name[i - 1] != '_')
		i--;
	for (const char *const *w = secret_last_words; *w; w++)
		if (strlen(*w) == n - i &&
		    strncasecmp(name + i, *w, n - i) == 0)
			return true;
	return false;
}

/* Long options (after "--") whose value is a credential, or may hold one
 * (request bodies), for every program. */
static const char *const secret_options[] = {
	"user",
	"proxy-user",
	"password",
	"passwd",
	"pass",
	"http-password",
	"proxy-password",
	"ftp-password",
	"proxy-pass",
	"oauth2-bearer",
	"cookie",
	"cert",
	"proxy-cert",
	"tlspassword",
	"proxy-tlspassword",
	"auth",
	"data",
	"data-raw",
	"data-binary",
	"data-ascii",
	"data-urlencode",
	"json",
	"form",
	"form-string",
	"post-data",
	"body-data",
	"login",
	NULL,
};

static bool in_list(const char *const *list, const char *name, size_t n)
{
	for (; *list; list++)
		if (strlen(*list) == n && strncmp(*list, name, n) == 0)
			return true;
	return false;
}

/* Short options by program: those whose value is a credential, and those
 * whose value is an HTTP header (checked by the header rule). */
struct shorts {
	const char *program;
	const char *secret;
	const char *header;
};

static const struct shorts program_shorts[] = {
	{ "curl", "uUbEdF", "H" }, { "ab", "APC", "H" }, { "wrk", "", "H" },
	{ "http", "a", "" },	   { "https", "a", "" }, { NULL, NULL, NULL },
};

static const struct shorts *shorts_of(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : argv0;
	for (const struct shorts *p = program_shorts; base && p->program; p++)
		if (strcmp(p->program, base) == 0)
			return p;
	return NULL;
}

/* The length of a name at the start of v: letters, digits, '-', '_', '.'. */
static size_t name_len(const char *v, size_t n)
{
	size_t i = 0;

	while (i < n &&
	       ((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
		(v[i] >= '0' && v[i] <= '9') || v[i] == '-' || v[i] == '_' ||
		v[i] == '.'))
		i++;
	return i;
}

/* v[0..n) as "name=value&name=value...": each value whose name is a
 * secret's becomes ***. */
static void put_pairs(struct sink *s, const char *v, size_t n)
{
	while (n > 0) {
		const char *amp = memchr(v, '&', n);
		size_t seg = amp ? (size_t)(amp - v) : n;
		size_t k = name_len(v, seg);

		if (k > 0 && k < seg && v[k] == '=' && name_is_secret(v, k)) {
			put(s, v, k + 1);
			put_str(s, HIDDEN);
		} else {
			put(s, v, seg);
		}
		if (!amp)
			break;
		put(s, "&", 1);
		v += seg + 1;
		n -= seg + 1;
	}
}

/* An argument's value, with URL userinfo, path parameters and query
 * strings, secret header values and secret name=value pairs redacted. */
static void put_value(struct sink *s, const char *v)
{
	size_t n = strlen(v), k = name_len(v, n);
	const char *scheme = strstr(v, "://");
	const char *auth = scheme ? scheme + 3 : v;
	size_t auth_len = strcspn(auth, "/?#");
	const char *at, *query;

	/* a header: "Name: value" or "Name:value", a secret's name */
	if (!scheme && k > 0 && k < n && v[k] == ':' && name_is_secret(v, k)) {
		put(s, v, k);
		put_str(s, ": " HIDDEN);
		return;
	}
	/* userinfo: scheme://user:pass@host, or user:pass@host */
	at = memchr(auth, '@', auth_len);
	if (at && !scheme &&
	    (!memchr(auth, ':', (size_t)(at - auth)) ||
	     memchr(auth, ' ', (size_t)(at - auth))))
		at = NULL; /* user@host is no secret; a space: no URL */
	while (at && memchr(at + 1, '@', auth_len - (size_t)(at - auth) - 1))
		at = memchr(at + 1, '@', auth_len - (size_t)(at - auth) - 1);
	if (at) {
		put(s, v, (size_t)(auth - v));
		put_str(s, HIDDEN);
		v = at;
		n = strlen(v);
	}
	/* a URL's path parameters (;jsessionid=...), and what follows */
	if (scheme) {
		const char *path = strchr(at ? v : auth, '/');
		const char *semi = path ? path + strcspn(path, ";?#") : NULL;

		if (semi && *semi == ';') {
			put(s, v, (size_t)(semi - v) + 1);
			put_str(s, HIDDEN);
			return;
		}
	}
	/* the query string and fragment: of a URL, or of host/path?query */
	query = strchr(v, '?');
	if (query && (scheme || memchr(v, '/', (size_t)(query - v)))) {
		put(s, v, (size_t)(query - v) + 1);
		put_str(s, HIDDEN);
		return;
	}
	if (!at && k > 0 && k < n && v[k] == '=') {
		put_pairs(s, v, n);
		return;
	}
	put(s, v, n);
}

size_t obs_redact_argv(int argc, char *const argv[], char *out, size_t size)
{
	struct sink s = { out, size, 0 };
	const struct shorts *sh = argc > 0 ? shorts_of(argv[0]) : NULL;
	bool secret_next = false;

	for (int i = 0; argv && i < argc && argv[i]; i++) {
		const char *a = argv[i];
		size_t n = strlen(a);

		if (secret_next) {
			secret_next = false;
			put_str(&s, HIDDEN);
		} else if (n > 2 && a[0] == '-' && a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t k = eq ? (size_t)(eq - a - 2) : n - 2;
			bool secret = in_list(secret_options, a + 2, k) ||
				      option_ends_secret(a + 2, k) ||
				      (eq && name_is_secret(a + 2, k));

			if (!eq) {
				put(&s, a, n);
				secret_next = secret;
			} else {
				put(&s, a, k + 3);
				if (secret)
					put_str(&s, HIDDEN);
				else
					put_value(&s, eq + 1);
			}
		} else if (sh && n >= 2 && a[0] == '-' && a[1] != '-' &&
			   strchr(sh->secret, a[1])) {
			put(&s, a, 2);
			if (n > 2)
				put_str(&s, HIDDEN);
			secret_next = n == 2;
		} else if (sh && n > 2 && a[0] == '-' &&
			   strchr(sh->header, a[1])) {
			put(&s, a, 2);
			put_value(&s, a + 2);
		} else {
			put_value(&s, a);
		}
		end_arg(&s);
	}
	return s.used;
}
