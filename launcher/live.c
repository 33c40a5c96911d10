/* live.c - observe --live (see live.h). Each refresh lists the spool
 * directory, maps each spool again (it grows), and reads the records not
 * yet counted from the first slot still in flight on: a connection counts
 * (its end class, an error) once complete, an exchange (its Tw and Tr, an
 * HTTP status of 500 or more or a reset stream as an error) once complete;
 * a slot counted is never read again. A process that records events
 * (OBSERVE_CAPTURE=events) has its connections replayed by the core, as
 * the slicer replays them (common/replays.h), in memory: an event record
 * counts once its events are consumed, and the exchanges and ends the
 * replays give out are counted then. Tw and Tr are kept per refresh for
 * the last LIVE_WINDOW refreshes, about LIVE_WINDOW seconds. */
#define _GNU_SOURCE
#include "live.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "evrec.h"
#include "replays.h"
#include "spool_reader.h"
#include "text.h"

#define MAX_SERVERS_SHOWN 10
#define END_CLASSES (OBS_END_EXIT + 1)

static const char *const end_names[END_CLASSES] = {
	[OBS_END_NONE] = "open",
	[OBS_END_SERVER_CLOSE] = "server_close",
	[OBS_END_CLIENT_CLOSE] = "client_close",
	[OBS_END_RESET] = "reset",
	[OBS_END_TIMEOUT] = "timeout",
	[OBS_END_REFUSED] = "refused",
	[OBS_END_CONNECT_ERROR] = "connect_error",
	[OBS_END_UNTERMINATED] = "unterminated",
	[OBS_END_LOST] = "lost",
	[OBS_END_EXIT] = "exit",
};

struct samples {
	double *v;
	size_t n, cap;
};

struct server {
	char name[64];
	uint64_t exchanges, errors, ends[END_CLASSES];
	/* per refresh, the last LIVE_WINDOW + 1 of them (a ring) */
	uint64_t counted[LIVE_WINDOW + 1];
	struct samples tw[LIVE_WINDOW + 1], tr[LIVE_WINDOW + 1];
};

struct spool {
	char *name;
	uint8_t *done;	 /* per slot: counted */
	size_t slots;	 /* of done */
	size_t from;	 /* the first slot not counted */
	int32_t *server; /* per connection number: its server + 1, 0 unknown */
	size_t conns;
	/* an events spool's connections (this spool's, or its segment 0's
	 * for a later segment: map_of) */
	struct obs_replays *replays;
	struct live *live; /* for the replays' exchanges */
	bool events;	   /* the process records events */
};

struct live {
	char *dir, *command;
	struct spool *sp;
	size_t nsp;
	struct server *srv;
	size_t nsrv;
	unsigned tick;			   /* refreshes so far */
	double start, at[LIVE_WINDOW + 1]; /* monotonic s: of each refresh */
	int lines;			   /* drawn on the terminal */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct live *live_start(const char *spool_dir, char *const *command)
{
	struct live *l = calloc(1, sizeof(*l));
	size_t len = 0;
	FILE *f;

	if (!l || !(l->dir = strdup(spool_dir)) ||
	    !(f = open_memstream(&l->command, &len))) {
		live_end(l);
		return NULL;
	}
	for (int i = 0; command[i] && i < 6; i++) { /* for a terminal */
		fprintf(f, "%s", i ? " " : "");
		text_tty_put(f, command[i]);
	}
	if (fclose(f) != 0) {
		live_end(l);
		return NULL;
	}
	l->start = l->at[0] = now_s();
	return l;
}

/* Grow *p (n elements of size each, now *have) to at least want, zeroed.
 * 0, or -1 when out of memory. */
static int grow(void *p, size_t size, size_t *have, size_t want)
{
	void *more;

	if (want <= *have)
		return 0;
	want = want < 2 * *have ? 2 * *have : want;
	if (!(more = realloc(*(void **)p, want * size)))
		return -1;
	memset((char *)more + *have * size, 0, (want - *have) * size);
	*(void **)p = more;
	*have = want;
	return 0;
}

/* The server of a connection record, added if new; -1 when out of
 * memory. */
static int server_of(struct live *l, const struct obs_conn_body *c)
{
	char addr[INET6_ADDRSTRLEN] = "?", name[64];

	inet_ntop(c->family == 10 ? AF_INET6 : AF_INET, c->peer_addr, addr,
		  sizeof(addr));
	snprintf(name, sizeof(name), c->family == 10 ? "[%s]:%u" : "%s:%u",
		 addr, c->peer_port);
	for (size_t i = 0; i < l->nsrv; i++)
		if (strcmp(l->srv[i].name, name) == 0)
			return (int)i;
	if (grow(&l->srv, sizeof(*l->srv), &l->nsrv, l->nsrv + 1) != 0)
		return -1;
	snprintf(l->srv[l->nsrv - 1].name, sizeof(l->srv[0].name), "%s", name);
	return (int)l->nsrv - 1;
}

static int sample(struct samples *s, double v)
{
	if (s->n == s->cap &&
	    grow(&s->v, sizeof(*s->v), &s->cap, s->cap ? 2 * s->cap : 64))
		return -1;
	s->v[s->n++] = v;
	return 0;
}

/* An exchange of the server srv: its Tw and Tr, and an error when its
 * status is 500 or more or its stream was reset. -1 when out of memory. */
static int count_exchange(struct live *l, struct server *srv, int64_t t4,
			  int64_t tfb, int64_t t5, int64_t t6, bool error)
{
	unsigned slot = l->tick % (LIVE_WINDOW + 1);

	srv->exchanges++;
	srv->counted[slot]++;
	if (error)
		srv->errors++;
	if (t4 && tfb >= t4 && sample(&srv->tw[slot], (double)(tfb - t4) / 1e6))
		return -1;
	if (t5 && t6 >= t5 && sample(&srv->tr[slot], (double)(t6 - t5) / 1e6))
		return -1;
	return 0;
}

/* A connection of the server srv ended the way end_class says. */
static void count_end(struct server *srv, uint8_t end_class)
{
	if (end_class >= END_CLASSES)
		return;
	srv->ends[end_class]++;
	if (end_class == OBS_END_RESET || end_class == OBS_END_TIMEOUT ||
	    end_class == OBS_END_REFUSED || end_class == OBS_END_CONNECT_ERROR)
		srv->errors++;
}

/* The server of connection conn_seq of the spool map m, or NULL. */
static struct server *server_at(struct live *l, const struct spool *m,
				uint64_t conn_seq)
{
	return conn_seq < m->conns && m->server[conn_seq]
		       ? &l->srv[m->server[conn_seq] - 1]
		       : NULL;
}

/* An exchange a replay of the spool map ctx gave out. */
static void replayed_exchange(void *ctx, const struct obs_replayed *r,
			      const struct obs_core_exchange *x)
{
	struct spool *m = ctx;
	struct server *srv = server_at(m->live, m, r->conn_seq);

	if (srv)
		count_exchange(m->live, srv, x->t4, x->tfb, x->t5, x->t6,
			       x->status >= 500);
}

/* The labels of the event record at offset off of sp, read from the
 * record after it when that one is written: NULL when it is not (yet). */
static const struct obs_record *
labels_of(struct obs_spool *sp, const struct obs_record *r, size_t off)
{
	const struct obs_record *labels;

	if (!obs_evrec_has_labels(r) ||
	    !(labels = obs_spool_at(sp, off + OBS_RECORD_SIZE, NULL, NULL)))
		return NULL;
	return __atomic_load_n(&labels->state, __ATOMIC_ACQUIRE) &
			       OBS_RS_COMPLETE
		       ? labels
		       : NULL;
}

/* The event record r at offset off of sp, slot i of s: its events into
 * the replay of their connection. Counted when consumed, left for the
 * next refresh when they wait. -1 when out of memory. */
static int count_events(struct live *l, struct spool *s, struct spool *m,
			struct obs_spool *sp, const struct obs_record *r,
			size_t off, size_t i)
{
	const struct obs_record *labels = labels_of(sp, r, off);
	bool final =
		__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) & OBS_RS_COMPLETE;
	struct obs_event ev[2];
	struct obs_replayed *rp;
	struct server *srv;
	unsigned int n;

	if (r->u.event.ev_kind == OBS_EV_LABELS ||
	    obs_evrec_decode(r, labels, ev, &n)) {
		s->done[i] = 1; /* read with its fact, or not to be read */
		return 0;
	}
	m->live = l;
	if (!m->replays &&
	    !(m->replays = obs_replays_new(replayed_exchange, m)))
		return -1;
	rp = obs_replays_get(m->replays, r->conn_seq);
	if (!rp && ev[0].kind == OBS_EV_CONNECT && ev[0].seq == 1 &&
	    !(rp = obs_replays_add(m->replays, r->conn_seq, NULL, 0)))
		return -1;
	if (!rp) { /* its connect was not read: never counted */
		s->done[i] = 1;
		return 0;
	}
	switch (obs_replays_take(m->replays, rp, ev, n, final, false)) {
	case OBS_WAITS:
		return 0;
	case OBS_CLOSED:
		obs_replays_finish(m->replays, rp);
		if ((srv = server_at(l, m, r->conn_seq)))
			count_end(srv, rp->saved.replay.conn.end_class);
		obs_replays_forget(m->replays, rp);
		break;
	default:
		break;
	}
	s->done[i] = 1;
	return 0;
}

/* Count the record r at offset off of sp, slot i of s, if it is complete
 * (or needs no counting). -1 when out of memory. */
static int count_record(struct live *l, struct spool *s, struct spool *m,
			struct obs_spool *sp, const struct obs_record *r,
			size_t off, size_t i)
{
	uint32_t state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
	int k;

	if (r->kind == OBS_REC_CONNECTION) {
		if (grow(&m->server, sizeof(*m->server), &m->conns,
			 r->conn_seq + 1) != 0 ||
		    (k = server_of(l, &r->u.conn)) < 0)
			return -1;
		m->server[r->conn_seq] = k + 1;
		if (!(state & OBS_RS_COMPLETE))
			return 0;
		/* an events spool's connection ends by its events */
		if (!s->events)
			count_end(&l->srv[k], r->u.conn.end_class);
	} else if (r->kind == OBS_REC_EXCHANGE) {
		const struct obs_exch_body *x = &r->u.exch;
		struct server *srv = server_at(l, m, r->conn_seq);

		if (!(state & OBS_RS_COMPLETE) || !srv)
			return 0; /* later */
		if (x->flags & OBS_XF_TLS_ALERT) {
			s->done[i] = 1; /* not a request */
			return 0;
		}
		if (count_exchange(l, srv, x->t4, x->tfb, x->t5, x->t6,
				   x->status >= 500 ||
					   (x->flags & OBS_XF_RESET)))
			return -1;
	} else if (r->kind == OBS_REC_EVENT) {
		return count_events(l, s, m, sp, r, off, i);
	}
	s->done[i] = 1;
	return 0;
}

/* The spool whose connection map s uses: a later segment of a spool that
 * rolled over (<base>.NNNNNN.spool) names the connections of its process,
 * whose records may be in segment 0 (<base>.spool); itself otherwise. */
static struct spool *map_of(struct live *l, struct spool *s)
{
	size_t n = strlen(s->name), suffix = sizeof(OBS_SPOOL_SUFFIX) - 1;

	if (n < suffix + 7 || s->name[n - suffix - 7] != '.')
		return s;
	for (size_t i = 0; i < l->nsp; i++) {
		const char *o = l->sp[i].name;

		if (strlen(o) == n - 7 &&
		    strncmp(o, s->name, n - suffix - 7) == 0 &&
		    strcmp(o + n - suffix - 7, OBS_SPOOL_SUFFIX) == 0)
			return &l->sp[i];
	}
	return s;
}

/* What spool s gained. -1 when out of memory. */
static int read_spool(struct live *l, struct spool *s)
{
	struct spool *m;
	struct obs_spool sp;
	const struct obs_record *r;
	char path[4096], err[256];
	size_t off, slots;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", l->dir, s->name);
	if (obs_spool_open(&sp, path, err, sizeof(err)) != 0)
		return 0; /* not yet a spool: next time */
	slots = (sp.end - OBS_SPOOL_HEADER_SIZE) / OBS_RECORD_SIZE;
	if (grow(&s->done, 1, &s->slots, slots) != 0) {
		obs_spool_close(&sp);
		return -1;
	}
	m = map_of(l, s);
	s->events = sp.hdr->flags & OBS_SPOOL_EVENTS;
	sp.next = OBS_SPOOL_HEADER_SIZE + s->from * OBS_RECORD_SIZE;
	while (rc == 0 && (r = obs_spool_next(&sp, &off, NULL, NULL))) {
		size_t i = (off - OBS_SPOOL_HEADER_SIZE) / OBS_RECORD_SIZE;

		if (!s->done[i])
			rc = count_record(l, s, m, &sp, r, off, i);
	}
	while (s->from < slots && s->done[s->from])
		s->from++;
	obs_spool_close(&sp);
	return rc;
}

/* The spools in the directory now, each read. -1 when out of memory. */
static int read_spools(struct live *l)
{
	DIR *d = opendir(l->dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return 0;
	while (rc == 0 && (e = readdir(d))) {
		size_t len = strlen(e->d_name), i;
		size_t suffix = sizeof(OBS_SPOOL_SUFFIX) - 1;

		if (len <= suffix ||
		    strcmp(e->d_name + len - suffix, OBS_SPOOL_SUFFIX) != 0)
			continue;
		for (i = 0; i < l->nsp; i++)
			if (strcmp(l->sp[i].name, e->d_name) == 0)
				break;
		if (i == l->nsp) {
			if (grow(&l->sp, sizeof(*l->sp), &l->nsp, l->nsp + 1) !=
				    0 ||
			    !(l->sp[i].name = strdup(e->d_name))) {
				rc = -1;
				break;
			}
		}
		rc = read_spool(l, &l->sp[i]);
	}
	closedir(d);
	return rc;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* p50 and p99 (nearest rank) of the samples of the ring w but its slot
 * skip (the refresh before the window) into p[0], p[1]; -1 when there are
 * none (or no memory to sort them). */
static void window_percentiles(const struct samples *w, unsigned skip,
			       double p[2])
{
	size_t n = 0, k = 0;
	double *all;

	p[0] = p[1] = -1;
	for (unsigned i = 0; i <= LIVE_WINDOW; i++)
		n += i == skip ? 0 : w[i].n;
	if (!n || !(all = malloc(n * sizeof(*all))))
		return;
	for (unsigned i = 0; i <= LIVE_WINDOW; i++) {
		if (i == skip || !w[i].n) /* (memcpy from NULL: undefined) */
			continue;
		memcpy(all + k, w[i].v, w[i].n * sizeof(*all));
		k += w[i].n;
	}
	qsort(all, n, sizeof(*all), by_value);
	p[0] = all[(n * 50 + 99) / 100 - 1];
	p[1] = all[(n * 99 + 99) / 100 - 1];
	free(all);
}

static int by_exchanges(const void *a, const void *b)
{
	const struct server *x = *(struct server *const *)a,
			    *y = *(struct server *const *)b;

	return (x->exchanges < y->exchanges) - (x->exchanges > y->exchanges);
}

/* One line, cut to the terminal's width (a line that wraps would make
 * the redraw go wrong). */
static void line(struct live *l, int width, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void line(struct live *l, int width, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (width > 1 && strlen(buf) >= (size_t)width)
		buf[width - 1] = '\0';
	fprintf(stderr, "%s\033[K\n", buf);
	l->lines++;
}

static void ms(char *buf, size_t size, double v)
{
	if (v < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, v < 100 ? "%.3f" : "%.1f", v);
}

static void draw(struct live *l, double now)
{
	struct winsize ws;
	int width = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col
			    ? ws.ws_col
			    : 100;
	unsigned oldest = l->tick >= LIVE_WINDOW ? l->tick - LIVE_WINDOW : 0;
	double span = now - l->at[oldest % (LIVE_WINDOW + 1)];
	uint64_t total = 0;
	struct server **order =
		malloc((l->nsrv ? l->nsrv : 1) * sizeof(*order));

	if (!order)
		return;
	if (l->lines)
		fprintf(stderr, "\033[%dA", l->lines); /* to the table's top */
	l->lines = 0;
	for (size_t i = 0; i < l->nsrv; i++) {
		order[i] = &l->srv[i];
		total += l->srv[i].exchanges;
	}
	qsort(order, l->nsrv, sizeof(*order), by_exchanges);
	line(l, width,
	     "observe --live: %s  %.0f s, %zu process%s, %llu exchanges",
	     l->command, now - l->start, l->nsp, l->nsp == 1 ? "" : "es",
	     (unsigned long long)total);
	line(l, width, "%-21s %8s %8s %7s %7s %7s %7s %4s %s", "server", "exch",
	     "rate/s", "Tw p50", "Tw p99", "Tr p50", "Tr p99", "err",
	     "connections ended");
	for (size_t i = 0; i < l->nsrv && i < MAX_SERVERS_SHOWN; i++) {
		struct server *s = order[i];
		uint64_t recent = 0;
		double tw[2], tr[2];
		char f[4][16], ends[256] = "";
		size_t len = 0;

		for (unsigned t = oldest + 1; t <= l->tick; t++)
			recent += s->counted[t % (LIVE_WINDOW + 1)];
		window_percentiles(s->tw, oldest % (LIVE_WINDOW + 1), tw);
		window_percentiles(s->tr, oldest % (LIVE_WINDOW + 1), tr);
		ms(f[0], sizeof(f[0]), tw[0]);
		ms(f[1], sizeof(f[1]), tw[1]);
		ms(f[2], sizeof(f[2]), tr[0]);
		ms(f[3], sizeof(f[3]), tr[1]);
		for (int e = 1; e < END_CLASSES; e++)
			if (s->ends[e] && len < sizeof(ends))
				len += (size_t)snprintf(
					ends + len, sizeof(ends) - len,
					"%s%s %llu", len ? ", " : "",
					end_names[e],
					(unsigned long long)s->ends[e]);
		line(l, width, "%-21.21s %8llu %8.1f %7s %7s %7s %7s %4llu %s",
		     s->name, (unsigned long long)s->exchanges,
		     span > 0 ? (double)recent / span : 0.0, f[0], f[1], f[2],
		     f[3], (unsigned long long)s->errors, ends);
	}
	if (l->nsrv > MAX_SERVERS_SHOWN)
		line(l, width, "... %zu more servers",
		     l->nsrv - MAX_SERVERS_SHOWN);
	line(l, width,
	     "(rate, Tw and Tr in ms: the last %d s; errors: reset, timeout, "
	     "refused, connect error, HTTP 5xx, reset stream)",
	     LIVE_WINDOW);
	fprintf(stderr, "\033[J");
	fflush(stderr);
	free(order);
}

void live_refresh(struct live *l)
{
	double now = now_s();
	unsigned slot;

	if (!l)
		return;
	l->tick++;
	slot = l->tick % (LIVE_WINDOW + 1);
	l->at[slot] = now;
	for (size_t i = 0; i < l->nsrv; i++) { /* the slot's old samples */
		l->srv[i].counted[slot] = 0;
		l->srv[i].tw[slot].n = l->srv[i].tr[slot].n = 0;
	}
	if (read_spools(l) != 0)
		return; /* out of memory: the table as it was */
	draw(l, now);
}

void live_end(struct live *l)
{
	if (!l)
		return;
	if (l->lines) /* the table erased: the summary takes its place */
		fprintf(stderr, "\033[%dA\033[J", l->lines);
	for (size_t i = 0; i < l->nsp; i++) {
		free(l->sp[i].name);
		free(l->sp[i].done);
		free(l->sp[i].server);
		obs_replays_free(l->sp[i].replays);
	}
	for (size_t i = 0; i < l->nsrv; i++)
		for (int k = 0; k <= LIVE_WINDOW; k++) {
			free(l->srv[i].tw[k].v);
			free(l->srv[i].tr[k].v);
		}
	free(l->sp);
	free(l->srv);
	free(l->dir);
	free(l->command);
	free(l);
}
