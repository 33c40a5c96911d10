/* test_redact.c - the command line the spool keeps: secrets redacted
 * (libobserve/redact.c; the rule in docs/layer.md, "Secrets").
 *
 * Each test gives an argv and the space-joined result expected, as the
 * database's process.argv shows it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "redact.h"

/* argv (NULL-terminated) redacted, NUL separators turned into spaces. */
static const char *redacted(char *const *argv, char *out, size_t size)
{
	int argc = 0;
	size_t n;

	while (argv[argc])
		argc++;
	n = obs_redact_argv(argc, argv, out, size);
	assert_true(n <= size);
	if (n == 0)
		return "";
	for (size_t i = 0; i + 1 < n; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	assert_int_equal(out[n - 1], '\0');
	return out;
}

#define EXPECT(want, ...)                                                      \
	do {                                                                   \
		char *const argv_[] = { __VA_ARGS__, NULL };                   \
		char out_[512];                                                \
		assert_string_equal(redacted(argv_, out_, sizeof(out_)),       \
				    want);                                     \
	} while (0)

static void curl_credentials(void **state)
{
	(void)state;
	EXPECT("curl -u *** http://h/", "curl", "-u", "user:secret",
	       "http://h/");
	EXPECT("curl http://h/a;***", "curl", "http://h/a;jsessionid=S1");
	EXPECT("curl http://***@h/a;***", "curl", "http://u:p@h/a;x=1?q=2");
	EXPECT("curl http://h:1/a/b?***", "curl", "http://h:1/a/b?k=v;w");
	EXPECT("curl -u*** http://h/", "curl", "-uuser:secret", "http://h/");
	EXPECT("curl --user *** --proxy-user ***", "curl", "--user", "a:b",
	       "--proxy-user", "c:d");
	EXPECT("curl --user=*** -U ***", "curl", "--user=a:b", "-U", "p:q");
	EXPECT("curl --oauth2-bearer *** -b *** --cookie ***", "curl",
	       "--oauth2-bearer", "tok", "-b", "sid=1", "--cookie", "a=b");
	EXPECT("curl -E *** --cert=***", "curl", "-E", "c.pem:pw",
	       "--cert=c.pem:pw");
	EXPECT("curl -d *** --data-raw *** -F ***", "curl", "-d", "password=x",
	       "--data-raw", "{}", "-F", "f=@x");
	EXPECT("/usr/bin/curl -s -u *** -o out http://h/x", "/usr/bin/curl",
	       "-s", "-u", "a:b", "-o", "out", "http://h/x");
}

static void headers(void **state)
{
	(void)state;
	EXPECT("curl -H Authorization: *** -H Accept: text/html", "curl", "-H",
	       "Authorization: Bearer abc", "-H", "Accept: text/html");
	EXPECT("curl -HCookie: *** --header=X-Api-Key: ***", "curl",
	       "-HCookie: a=b", "--header=X-Api-Key: k");
	EXPECT("curl --header Proxy-Authorization: *** --header X-Auth-Token: "
	       "***",
	       "curl", "--header",
	       "Proxy-Authorization: Basic eA==", "--header", "X-Auth-Token:t");
	EXPECT("wget --header=Authorization: *** http://h/", "wget",
	       "--header=Authorization: Bearer z", "http://h/");
	EXPECT("ab -H Authorization: *** -A *** -P *** -C *** http://h/", "ab",
	       "-H", "Authorization: Basic x", "-A", "u:p", "-P", "u:p", "-C",
	       "sid=1", "http://h/");
	EXPECT("http GET h/ Authorization: *** -a ***", "http", "GET", "h/",
	       "Authorization:Bearer x", "-a", "u:p");
}

static void wget_and_long_options(void **state)
{
	(void)state;
	/* --user is curl's user:password: redacted for every program */
	EXPECT("wget --user=*** --password=*** --http-password *** "
	       "--post-data ***",
	       "wget", "--user=bob", "--password=pw", "--http-password", "pw",
	       "--post-data", "a=1");
	EXPECT("tool --api-key *** --auth-token=*** --db-password ***", "tool",
	       "--api-key", "k", "--auth-token=t", "--db-password", "p");
	/* flags that only say whether to use one take no value */
	EXPECT("wget --ask-password http://h/ --no-password http://i/", "wget",
	       "--ask-password", "http://h/", "--no-password", "http://i/");
	EXPECT("wget --keep-session-cookies http://h/", "wget",
	       "--keep-session-cookies", "http://h/");
	EXPECT("tool --verbose --output=x --level 3", "tool", "--verbose",
	       "--output=x", "--level", "3");
}

static void urls(void **state)
{
	(void)state;
	EXPECT("curl https://***@h:8443/p", "curl",
	       "https://user:pass@h:8443/p");
	EXPECT("curl http://***@h/", "curl", "http://a@b:c@h/");
	EXPECT("curl http://h/p?***", "curl", "http://h/p?api_key=123&x=1");
	EXPECT("curl http://***@h/p?***", "curl", "http://u:p@h/p?k=v#frag");
	EXPECT("curl h/p?***", "curl", "h/p?token=1");
	EXPECT("curl ***@h/p", "curl", "u:p@h/p");
	EXPECT("curl http://h/a@b", "curl", "http://h/a@b");
	/* no secret: kept */
	EXPECT("ssh user@host ls what?", "ssh", "user@host", "ls", "what?");
	EXPECT("curl -x http://***@proxy:3128 http://h/", "curl", "-x",
	       "http://u:p@proxy:3128", "http://h/");
}

static void name_value(void **state)
{
	(void)state;
	EXPECT("env API_KEY=*** PATH=/bin prog password=*** user=bob", "env",
	       "API_KEY=abc", "PATH=/bin", "prog", "password=x", "user=bob");
	EXPECT("prog a=1&token=*** mode=fast", "prog", "a=1&token=t",
	       "mode=fast");
	EXPECT("wget -e http_password=*** http://h/", "wget", "-e",
	       "http_password=x", "http://h/");
}

static void short_options_only_for_known_programs(void **state)
{
	(void)state;
	/* -u and -b mean other things to other programs: kept */
	EXPECT("sort -u -b file", "sort", "-u", "-b", "file");
	EXPECT("python3 -u client.py", "python3", "-u", "client.py");
}

static void cut_to_fit(void **state)
{
	char *const argv[] = { "curl", "-u", "a:b", "http://host/path", NULL };
	char out[12];
	size_t n;

	(void)state;
	memset(out, 'x', sizeof(out));
	n = obs_redact_argv(4, argv, out, sizeof(out));
	assert_int_equal(n, sizeof(out));
	assert_memory_equal(out, "curl\0-u\0***", 12);
	n = obs_redact_argv(4, argv, out, 0);
	assert_int_equal(n, 0);
	n = obs_redact_argv(0, NULL, out, sizeof(out));
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(curl_credentials),
		cmocka_unit_test(headers),
		cmocka_unit_test(wget_and_long_options),
		cmocka_unit_test(urls),
		cmocka_unit_test(name_value),
		cmocka_unit_test(short_options_only_for_known_programs),
		cmocka_unit_test(cut_to_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
