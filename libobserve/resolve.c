/* resolve.c - name lookups: timed, their addresses kept for connect. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <string.h>

#include "hooks.h"

/* The addresses the latest lookups gave, newest first found: a connect to
 * one of them takes the lookup's name, and its times if it is the first
 * connect to use that lookup (HAR's dns). Under the layer's mutex; never
 * held across a real call. */
#define OBS_DNS_SLOTS 64
static struct obs_dns_slot {
	uint8_t addr[16];
	uint16_t family;
	bool used;	 /* a connect took the times already */
	uint32_t lookup; /* number of the lookup, to mark its addresses used */
	int64_t t_start, t_end;
	char name[40];
} dns_slots[OBS_DNS_SLOTS];
static unsigned int dns_next;
/* lookups remembered so far (hooks.h: dns_match asks it first) */
uint32_t obs_dns_lookups;

/* The addresses of one lookup, gathered before the lock is taken. */
#define OBS_DNS_PER_LOOKUP 8
struct obs_dns_answer {
	int n;
	uint16_t family[OBS_DNS_PER_LOOKUP];
	uint8_t addr[OBS_DNS_PER_LOOKUP][16];
};

static void dns_answer_add(struct obs_dns_answer *ans, int family,
			   const void *addr)
{
	if (ans->n >= OBS_DNS_PER_LOOKUP ||
	    (family != AF_INET && family != AF_INET6))
		return;
	memset(ans->addr[ans->n], 0, 16);
	memcpy(ans->addr[ans->n], addr, family == AF_INET6 ? 16 : 4);
	ans->family[ans->n++] = (uint16_t)family;
}

static void dns_remember(const char *node, const struct obs_dns_answer *ans,
			 int64_t t_start, int64_t t_end)
{
	size_t n = strnlen(node, sizeof(dns_slots[0].name));
	uint32_t lookup;

	if (!ans->n)
		return;
	obs_mutex_lock();
	lookup = __atomic_add_fetch(&obs_dns_lookups, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < ans->n; i++) {
		struct obs_dns_slot *s = &dns_slots[dns_next++ % OBS_DNS_SLOTS];

		memset(s, 0, sizeof(*s));
		memcpy(s->addr, ans->addr[i], 16);
		s->family = ans->family[i];
		s->lookup = lookup;
		s->t_start = t_start;
		s->t_end = t_end;
		memcpy(s->name, node, n);
	}
	obs_mutex_unlock();
}

static void dns_remember_addrinfo(const char *node, const struct addrinfo *res,
				  int64_t t_start, int64_t t_end)
{
	struct obs_dns_answer ans = { 0 };

	for (const struct addrinfo *a = res; a; a = a->ai_next) {
		uint8_t addr[16];
		uint16_t port;

		if (!a->ai_addr ||
		    (a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
		    (a->ai_socktype != 0 && a->ai_socktype != SOCK_STREAM))
			continue;
		peer_of(a->ai_addr, addr, &port);
		dns_answer_add(&ans, a->ai_family, addr);
	}
	dns_remember(node, &ans, t_start, t_end);
}

static void dns_remember_hostent(const char *node, const struct hostent *h,
				 int64_t t_start, int64_t t_end)
{
	struct obs_dns_answer ans = { 0 };

	if (!h || !h->h_addr_list ||
	    h->h_length != (h->h_addrtype == AF_INET6 ? 16 : 4))
		return;
	for (char **a = h->h_addr_list; *a; a++)
		dns_answer_add(&ans, h->h_addrtype, *a);
	dns_remember(node, &ans, t_start, t_end);
}

/* In a forked child (process.c), whose lookups are its parent's: their
 * times go to no connect of the child (its connections still take their
 * names). They came before the child's start, which its spool's readers
 * take as the earliest time of its records; and the child did not wait
 * for them. */
void obs_dns_forked(void)
{
	for (int i = 0; i < OBS_DNS_SLOTS; i++)
		dns_slots[i].used = true;
}

/* At a tracked connect: the newest lookup that gave this address (once
 * there was a lookup: dns_match, hooks.h). */
void dns_match_slow(struct obs_conn *c, int family, const uint8_t *peer,
		    int64_t t1)
{
	size_t alen = family == AF_INET6 ? 16 : 4;
	struct obs_dns_slot found;
	bool hit = false;

	obs_mutex_lock();
	for (unsigned int k = 1; k <= OBS_DNS_SLOTS && !hit; k++) {
		struct obs_dns_slot *s =
			&dns_slots[(dns_next - k) % OBS_DNS_SLOTS];
		if (s->lookup && s->family == family && s->t_end <= t1 &&
		    memcmp(s->addr, peer, alen) == 0) {
			found = *s;
			hit = true;
			if (!s->used) /* the lookup's times go to one connect */
				for (int i = 0; i < OBS_DNS_SLOTS; i++)
					if (dns_slots[i].lookup == s->lookup)
						dns_slots[i].used = true;
		}
	}
	obs_mutex_unlock();
	if (hit)
		obs_xm_dns(c, found.name, found.used ? 0 : found.t_start,
			   found.t_end);
}

/* Is node a name worth timing (not a number, the layer running)? */
static bool dns_is_lookup(const char *node)
{
	unsigned char probe[16];

	return obs_fd_table_size && node &&
	       inet_pton(AF_INET, node, probe) != 1 &&
	       inet_pton(AF_INET6, node, probe) != 1;
}

/* A lookup begins: its start time, or 0 when node is no name to time. */
static int64_t lookup_begin(const char *node)
{
	return dns_is_lookup(node) ? obs_now() : 0;
}

/* A lookup that began at t_start (0: not timed) returned: remember the
 * addresses of its answer, ai or h (both NULL when it failed). Keeps errno.
 * Every resolver hook has this shape: lookup_begin, the real call,
 * lookup_end with the outcome. */
static void lookup_end(const char *node, int64_t t_start,
		       const struct addrinfo *ai, const struct hostent *h)
{
	int saved = errno;

	if (!t_start)
		return;
	if (ai)
		dns_remember_addrinfo(node, ai, t_start, obs_now());
	else if (h)
		dns_remember_hostent(node, h, t_start, obs_now());
	errno = saved;
}

EXPORT int getaddrinfo(const char *node, const char *service,
		       const struct addrinfo *hints, struct addrinfo **res)
{
	int64_t t_start;
	int ret;

	if (!REAL(getaddrinfo))
		return EAI_SYSTEM;
	t_start = lookup_begin(node);
	ret = obs_real.getaddrinfo(node, service, hints, res);
	lookup_end(node, t_start, ret == 0 && res ? *res : NULL, NULL);
	return ret;
}

/* The older resolver calls, for programs that still use them (python's
 * gethostbyname_ex, perl, old C clients). The non-reentrant ones return
 * glibc's static hostent, read here before the caller can see it. */
EXPORT struct hostent *gethostbyname(const char *name)
{
	int64_t t_start;
	struct hostent *h;

	if (!REAL(gethostbyname))
		return NULL;
	t_start = lookup_begin(name);
	h = obs_real.gethostbyname(name);
	lookup_end(name, t_start, NULL, h);
	return h;
}

EXPORT struct hostent *gethostbyname2(const char *name, int af)
{
	int64_t t_start;
	struct hostent *h;

	if (!REAL(gethostbyname2))
		return NULL;
	t_start = lookup_begin(name);
	h = obs_real.gethostbyname2(name, af);
	lookup_end(name, t_start, NULL, h);
	return h;
}

EXPORT int gethostbyname_r(const char *name, struct hostent *ret, char *buf,
			   size_t buflen, struct hostent **result,
			   int *h_errnop)
{
	int64_t t_start;
	int rc;

	if (!REAL(gethostbyname_r))
		return ENOSYS;
	t_start = lookup_begin(name);
	rc = obs_real.gethostbyname_r(name, ret, buf, buflen, result, h_errnop);
	lookup_end(name, t_start, NULL, rc == 0 && result ? *result : NULL);
	return rc;
}

EXPORT int gethostbyname2_r(const char *name, int af, struct hostent *ret,
			    char *buf, size_t buflen, struct hostent **result,
			    int *h_errnop)
{
	int64_t t_start;
	int rc;

	if (!REAL(gethostbyname2_r))
		return ENOSYS;
	t_start = lookup_begin(name);
	rc = obs_real.gethostbyname2_r(name, af, ret, buf, buflen, result,
				       h_errnop);
	lookup_end(name, t_start, NULL, rc == 0 && result ? *result : NULL);
	return rc;
}
