/* redact.h - the command line as the spool keeps it: without its secrets.
 *
 * Pure: no system calls, no allocation (unit-tested in
 * tests/unit/test_redact.c). The rule, written down in docs/layer.md
 * ("Secrets"): every value that may carry a credential becomes "***":
 *   - the value of an option known to carry one (curl -u/--user,
 *     -U/--proxy-user, -b/--cookie, -E/--cert, --oauth2-bearer, -d/--data
 *     and -F/--form and their kin, wget --password, --http-password,
 *     --post-data, ab -A/-P/-C, httpie -a/--auth, ...), and of any long
 *     option whose name ends in a word such as password, token, secret or
 *     key (--api-key X, --auth-token=X);
 *   - the value of an HTTP header whose name holds such a word
 *     (Authorization, Proxy-Authorization, Cookie, X-Api-Key,
 *     X-Auth-Token), wherever it appears ("-H 'Authorization: Bearer x'",
 *     --header=..., httpie's Name:value);
 *   - URL userinfo (user:pass in http://user:pass@host, and in
 *     user:pass@host) and query strings (?... -> ?***, the fragment too);
 *   - name=value (and a&b=c pairs) whose name holds such a word
 *     (password=x, API_KEY=x).
 * Short options are known for curl, ab, wrk and httpie (by argv[0]'s base
 * name), and only as the first letter of an argument (-u x, -ux).
 */
#ifndef OBSERVE_REDACT_H
#define OBSERVE_REDACT_H

#include <stddef.h>

/* Copy argv[0..argc) into out (size bytes) NUL-separated, each argument
 * redacted; returns the bytes used, the last NUL included. What does not
 * fit is cut, the last argument still NUL-terminated. */
size_t obs_redact_argv(int argc, char *const argv[], char *out, size_t size);

#endif
