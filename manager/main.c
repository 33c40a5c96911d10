/* main.c - manager: collect the databases of many client machines into one.
 *
 *   manager pull -o CENTRAL.db SOURCE...
 *
 * SOURCE is a client database or a directory of them (*.db). Each source is
 * checked (integrity, schema version) and merged in one transaction of its
 * own; rows are matched on their identity (client name, pid, process start;
 * connection number; exchange number), so pulling the same source again, or
 * a source that grew, adds exactly the new rows. A source that fails is
 * named with the reason and skipped; the others still merge.
 *   manager stats CENTRAL.db [--by client|server|program|path] [--where EXPR]
 *                 [--csv]
 *
 * count, mean, p50, p90, p99 and max of Tt, Te, Ts, Tw, Tr and the rates
 * Rs, Rr, Ra. Percentiles are exact, by nearest rank: the p-th percentile
 * of n sorted values is the value at rank ceil(p/100 * n).
 * (ssh:// sources and the report come in later.)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store.h"
#include "filter.h"
#include "manager.h"

/* Merge statements, run with the source attached as `src`. New rows are
 * inserted; rows still in flight in the central database are brought up
 * to date; nothing else changes. */
static const char merge_sql[] =
	"INSERT INTO client(name, host) SELECT name, host FROM src.client "
	"WHERE true ON CONFLICT(name) DO NOTHING;"
	"INSERT INTO process(client_id, pid, ppid, start_ns, end_ns, ended, "
	"host, program, argv, spool, dropped) "
	"SELECT c.id, p.pid, p.ppid, p.start_ns, p.end_ns, p.ended, p.host, "
	"p.program, p.argv, p.spool, p.dropped FROM src.process p "
	"JOIN src.client sc ON sc.id = p.client_id "
	"JOIN main.client c ON c.name = sc.name WHERE true "
	"ON CONFLICT(client_id, pid, start_ns) DO UPDATE SET "
	"end_ns = excluded.end_ns, ended = excluded.ended, "
	"dropped = excluded.dropped WHERE process.ended = 0;"
	"CREATE TEMP TABLE process_map AS "
	"SELECT p.id AS src_id, mp.id AS dst_id FROM src.process p "
	"JOIN src.client sc ON sc.id = p.client_id "
	"JOIN main.client c ON c.name = sc.name "
	"JOIN main.process mp ON mp.client_id = c.id AND mp.pid = p.pid "
	"AND mp.start_ns = p.start_ns;"
	"INSERT INTO connection(process_id, seq, fd, family, peer_addr, "
	"peer_port, local_addr, local_port, t1_ns, t2_ns, t2_how, "
	"connect_error, teof_ns, tshut_ns, t7_ns, end_class, end_error, "
	"nonblocking, complete) "
	"SELECT m.dst_id, k.seq, k.fd, k.family, k.peer_addr, k.peer_port, "
	"k.local_addr, k.local_port, k.t1_ns, k.t2_ns, k.t2_how, "
	"k.connect_error, k.teof_ns, k.tshut_ns, k.t7_ns, k.end_class, "
	"k.end_error, k.nonblocking, k.complete FROM src.connection k "
	"JOIN temp.process_map m ON m.src_id = k.process_id WHERE true "
	"ON CONFLICT(process_id, seq) DO UPDATE SET "
	"t2_ns = excluded.t2_ns, t2_how = excluded.t2_how, "
	"connect_error = excluded.connect_error, teof_ns = excluded.teof_ns, "
	"tshut_ns = excluded.tshut_ns, t7_ns = excluded.t7_ns, "
	"end_class = excluded.end_class, end_error = excluded.end_error, "
	"complete = excluded.complete WHERE connection.complete = 0;"
	"CREATE TEMP TABLE connection_map AS "
	"SELECT k.id AS src_id, mk.id AS dst_id FROM src.connection k "
	"JOIN temp.process_map m ON m.src_id = k.process_id "
	"JOIN main.connection mk ON mk.process_id = m.dst_id AND mk.seq = k.seq;"
	"INSERT INTO exchange(connection_id, seq, t3_ns, t4_ns, t5_ns, tfb_ns, "
	"t6_ns, ds, dr, send_calls, recv_calls, server_first, peeked, complete, "
	"method, path, status, host) "
	"SELECT m.dst_id, x.seq, x.t3_ns, x.t4_ns, x.t5_ns, x.tfb_ns, x.t6_ns, "
	"x.ds, x.dr, x.send_calls, x.recv_calls, x.server_first, x.peeked, "
	"x.complete, x.method, x.path, x.status, x.host FROM src.exchange x "
	"JOIN temp.connection_map m ON m.src_id = x.connection_id WHERE true "
	"ON CONFLICT(connection_id, seq) DO UPDATE SET "
	"t3_ns = excluded.t3_ns, t4_ns = excluded.t4_ns, t5_ns = excluded.t5_ns, "
	"tfb_ns = excluded.tfb_ns, t6_ns = excluded.t6_ns, ds = excluded.ds, "
	"dr = excluded.dr, send_calls = excluded.send_calls, "
	"recv_calls = excluded.recv_calls, complete = excluded.complete "
	"WHERE exchange.complete = 0;"
	"DROP TABLE temp.process_map;"
	"DROP TABLE temp.connection_map;";

struct pull_stats {
	int sources, failed;
	int64_t exchanges_new;
};

/* The highest exchange id: rows are only ever added to the central
 * database, each new one gets max(id) + 1, so the difference of two of
 * these counts the rows added in between (count(*) would scan them all). */
static int64_t last_exchange_id(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	if (sqlite3_prepare_v2(db, "SELECT coalesce(max(id), 0) FROM main.exchange",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* One line per question about the attached source: NULL when it is fine,
 * else the reason. */
static const char *check_source(sqlite3 *db, char *why, size_t size)
{
	sqlite3_stmt *st = NULL;
	const char *ok = NULL;
	int version = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA src.quick_check", -1, &st, NULL) !=
		    SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		snprintf(why, size, "not an SQLite database (%s)",
			 sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return why;
	}
	if (strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0) {
		snprintf(why, size, "damaged database (%s)",
			 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		return why;
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "PRAGMA src.user_version", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version != OBS_SCHEMA_VERSION) {
		snprintf(why, size,
			 "not an observe database of schema version %d "
			 "(version %d)",
			 OBS_SCHEMA_VERSION, version);
		return why;
	}
	return ok;
}

/* "file:PATH?mode=ro" with the characters a URI path cannot hold as they
 * are percent-encoded; sqlite3_malloc'd. */
static char *file_uri(const char *path)
{
	size_t n = strlen(path);
	char *uri = sqlite3_malloc64(n * 3 + 32), *p = uri;

	if (!uri)
		return NULL;
	p += sprintf(p, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 || *c > 0x7e)
			p += sprintf(p, "%%%02X", *c);
		else
			*p++ = (char)*c;
	}
	strcpy(p, "?mode=ro");
	return uri;
}

/* Merge one client database; 0 merged, -1 skipped (reason printed). */
static int pull_one(sqlite3 *db, const char *path, struct pull_stats *stats)
{
	char why[512], *msg = NULL;
	sqlite3_stmt *st = NULL;
	int64_t before, after;
	int rc;

	stats->sources++;
	rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ?1 AS src", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		/* read-only: the source is a client's, never ours to change */
		char *uri = file_uri(path);
		sqlite3_bind_text(st, 1, uri, -1, sqlite3_free);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		fprintf(stderr, "manager: %s: cannot open: %s (skipped)\n", path,
			sqlite3_errmsg(db));
		stats->failed++;
		return -1;
	}
	if (check_source(db, why, sizeof(why))) {
		fprintf(stderr, "manager: %s: %s (skipped)\n", path, why);
		sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
		stats->failed++;
		return -1;
	}
	before = last_exchange_id(db);
	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, merge_sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		fprintf(stderr, "manager: %s: cannot merge: %s (skipped)\n", path,
			msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_exec(db, "DROP TABLE IF EXISTS temp.process_map;"
				 "DROP TABLE IF EXISTS temp.connection_map",
			     NULL, NULL, NULL);
		sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
		stats->failed++;
		return -1;
	}
	sqlite3_exec(db, "DETACH DATABASE src", NULL, NULL, NULL);
	after = last_exchange_id(db);
	stats->exchanges_new += after - before;
	return 0;
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);

	return n > m && strcmp(name + n - m, suffix) == 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A database, or every *.db in a directory (sorted). */
static void pull_path(sqlite3 *db, const char *path, struct pull_stats *stats)
{
	struct stat st;
	DIR *dir;
	struct dirent *ent;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (strncmp(path, "ssh://", 6) == 0) {
		fprintf(stderr,
			"manager: %s: ssh:// sources are not supported yet "
			"(skipped)\n",
			path);
		stats->sources++;
		stats->failed++;
		return;
	}
	if (stat(path, &st) != 0) {
		fprintf(stderr, "manager: %s: %s (skipped)\n", path,
			strerror(errno));
		stats->sources++;
		stats->failed++;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		pull_one(db, path, stats);
		return;
	}
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "manager: %s: cannot read directory: %s\n", path,
			strerror(errno));
		stats->sources++;
		stats->failed++;
		return;
	}
	while ((ent = readdir(dir))) {
		char *full;

		if (!has_suffix(ent->d_name, ".db"))
			continue;
		if (n == cap) {
			char **more;
			cap = cap ? cap * 2 : 16;
			more = realloc(names, cap * sizeof(*names));
			if (!more)
				break;
			names = more;
		}
		if (asprintf(&full, "%s/%s", path, ent->d_name) < 0)
			break;
		names[n++] = full;
	}
	closedir(dir);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		pull_one(db, names[i], stats);
		free(names[i]);
	}
	free(names);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: manager pull -o CENTRAL.db SOURCE...\n"
		"       manager stats CENTRAL.db [--by client|server|program|path]\n"
		"                     [--where EXPR] [FILTER...] [--csv]\n"
		"\n"
		"Merges client databases (made by slicer or observe) into\n"
		"CENTRAL.db. SOURCE is a database or a directory of *.db files.\n"
		"Each source is checked and merged in a transaction of its own;\n"
		"pulling it again adds only what is new. A source that fails is\n"
		"named with the reason and skipped.\n"
		"\n"
		"  -o, --output DB   the central database (created)\n"
		"  -q, --quiet       no summary line\n"
		"\n"
		"Exit status: 0 all merged, 1 some source skipped, 2 usage or\n"
		"central database error.\n"
		"\n"
		"stats prints count, mean, p50, p90, p99 and max of Tt, Te (per\n"
		"connection), Ts, Tw, Tr (per exchange) and the rates Rs, Rr, Ra\n"
		"per group. Percentiles are exact (nearest rank). Filters as in\n"
		"slicer: --where EXPR over exchange_metrics, --peer, --program,\n"
		"--since, --until, --min-bytes.\n"
		"Examples:\n"
		"  manager pull -o central.db client-a.db client-b.db clients/\n"
		"  manager stats central.db --by server --where 'dr > 10000'\n");
}

static int cmd_pull(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *central = NULL;
	bool quiet = false;
	struct pull_stats stats = { 0 };
	char err[512];
	obs_store *store;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			central = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!central || optind >= argc) {
		usage(stderr);
		return 2;
	}
	store = obs_store_open(central, err, sizeof(err));
	if (!store) {
		fprintf(stderr, "manager: %s\n", err);
		return 2;
	}
	/* A central database outgrows SQLite's default 2 MB page cache fast;
	 * with too small a cache each merge re-reads index pages from disk. */
	sqlite3_exec(obs_store_db(store), "PRAGMA cache_size = -524288", NULL,
		     NULL, NULL);
	/* No index on exchange(t3_ns) here: the times of many clients
	 * interleave, so every merged row would land at a random place in it;
	 * keeping it made merging 100 x 100,000 exchanges take 100 s instead
	 * of 16 s (scripts/bench-merge.sh). Time filters scan instead. */
	if (sqlite3_exec(obs_store_db(store), "DROP INDEX IF EXISTS exchange_t3",
			 NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s: %s\n", central,
			sqlite3_errmsg(obs_store_db(store)));
		obs_store_close(store);
		return 2;
	}
	for (int i = optind; i < argc; i++)
		pull_path(obs_store_db(store), argv[i], &stats);
	obs_store_close(store);
	if (!quiet)
		fprintf(stderr,
			"manager: %d sources, %d skipped, %" PRId64
			" exchanges new -> %s\n",
			stats.sources, stats.failed, stats.exchanges_new,
			central);
	return stats.failed ? 1 : 0;
}


/* ---- stats ---------------------------------------------------------------- */

struct metric {
	const char *name; /* as printed */
	const char *column;
	bool per_connection; /* from connection_metrics */
};

static const struct metric metrics[] = {
	{ "Tt ms", "tt_ms", true },  { "Te ms", "te_ms", true },
	{ "Ts ms", "ts_ms", false }, { "Tw ms", "tw_ms", false },
	{ "Tr ms", "tr_ms", false }, { "Rs B/s", "rs", false },
	{ "Rr B/s", "rr", false },   { "Ra B/s", "ra", true },
};

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the value at rank ceil(p/100 * n), 1-based. */
double manager_percentile(const double *sorted, size_t n, double p)
{
	size_t rank = (size_t)(p / 100.0 * (double)n);

	if ((double)rank < p / 100.0 * (double)n)
		rank++;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void emit(bool csv, const char *group, const char *metric,
		 double *v, size_t n)
{
	double sum = 0;

	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), dbl_cmp);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	if (csv) {
		putchar('"');
		for (const char *c = group; *c; c++) {
			if (*c == '"')
				putchar('"');
			putchar(*c);
		}
		printf("\",%s,%zu,%.6f,%.6f,%.6f,%.6f,%.6f\n", metric, n,
		       sum / (double)n, manager_percentile(v, n, 50),
		       manager_percentile(v, n, 90), manager_percentile(v, n, 99), v[n - 1]);
	} else
		printf("%-24.24s %-7s %8zu %12.3f %12.3f %12.3f %12.3f %12.3f\n",
		       group, metric, n, sum / (double)n, manager_percentile(v, n, 50),
		       manager_percentile(v, n, 90), manager_percentile(v, n, 99), v[n - 1]);
}

static int stats_metric(sqlite3 *db, const struct metric *m, const char *by,
			const char *where, bool csv)
{
	const char *group =
		strcmp(by, "server") == 0    ? "peer_addr || ':' || peer_port"
		: strcmp(by, "program") == 0 ? "program"
		: strcmp(by, "path") == 0
			? (m->per_connection ? "'(connections)'"
					     : "coalesce(path, '(unknown)')")
			: "client";
	char *sql = m->per_connection
		? sqlite3_mprintf(
			  "SELECT %s, %s FROM connection_metrics WHERE %s IS "
			  "NOT NULL AND connection_id IN (SELECT connection_id "
			  "FROM exchange_metrics WHERE (%s)) ORDER BY 1",
			  group, m->column, m->column, where)
		: sqlite3_mprintf("SELECT %s, %s FROM exchange_metrics WHERE "
				  "%s IS NOT NULL AND (%s) ORDER BY 1",
				  group, m->column, m->column, where);
	sqlite3_stmt *st = NULL;
	double *v = NULL;
	size_t n = 0, cap = 0;
	char current[256] = "";
	int rc;

	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "manager: %s\n", sqlite3_errmsg(db));
		sqlite3_free(sql);
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *g = (const char *)sqlite3_column_text(st, 0);

		if (!g)
			g = "(unknown)";
		if (strcmp(g, current) != 0) {
			emit(csv, current, m->name, v, n);
			n = 0;
			snprintf(current, sizeof(current), "%s", g);
		}
		if (n == cap) {
			double *more;
			cap = cap ? cap * 2 : 1024;
			more = realloc(v, cap * sizeof(*v));
			if (!more) {
				rc = SQLITE_NOMEM;
				break;
			}
			v = more;
		}
		v[n++] = sqlite3_column_double(st, 1);
	}
	if (rc == SQLITE_DONE)
		emit(csv, current, m->name, v, n);
	free(v);
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "csv", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *by = "client";
	bool csv = false;
	struct filter f;
	char err[512];
	sqlite3 *db = NULL;
	int opt, rc = 2;

	filter_init(&f);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "b:w:ch", longopts, NULL)) != -1) {
		int bad = filter_option(&f, opt, optarg, err, sizeof(err));

		if (bad < 0) {
			fprintf(stderr, "manager: %s\n", err);
			goto out;
		}
		if (bad == 0)
			continue;
		switch (opt) {
		case 'b':
			by = optarg;
			if (strcmp(by, "client") && strcmp(by, "server") &&
			    strcmp(by, "program") && strcmp(by, "path")) {
				fprintf(stderr,
					"manager: --by %s: client, server, "
					"program or path\n",
					by);
				goto out;
			}
			break;
		case 'c':
			csv = true;
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		goto out;
	}
	if (sqlite3_open_v2(argv[optind], &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		fprintf(stderr, "manager: %s: %s\n", argv[optind],
			sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_busy_timeout(db, 10000);
	obs_store_register_functions(db);
	if (obs_store_check_expr(db, f.expr ? f.expr : "1", err, sizeof(err))) {
		fprintf(stderr, "manager: %s: %s\n", argv[optind], err);
		goto out;
	}
	if (csv)
		printf("group,metric,count,mean,p50,p90,p99,max\n");
	else
		printf("%-24s %-7s %8s %12s %12s %12s %12s %12s\n", by, "metric",
		       "count", "mean", "p50", "p90", "p99", "max");
	rc = 0;
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (stats_metric(db, &metrics[i], by, f.expr ? f.expr : "1",
				 csv) != 0)
			rc = 2;
out:
	sqlite3_close(db);
	filter_free(&f);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "pull") == 0)
		return cmd_pull(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "stats") == 0)
		return cmd_stats(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
			 strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "manager: a command is needed (pull, stats, report)\n");
	usage(stderr);
	return 2;
}
