/* filter.h - the filter options of slicer, slicer export, manager stats
 * and manager report -> one SQL expression over exchange_metrics. Each
 * function returns 0, or -1 with a message in err (functions without err
 * fail only when out of memory). The options are parsed by options.h. */
#ifndef OBSERVE_FILTER_H
#define OBSERVE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sqlite3.h>

struct filter {
	char *expr; /* NULL: everything passes; sqlite3_malloc'd */
};

void filter_init(struct filter *f);
void filter_free(struct filter *f);
int filter_where(struct filter *f, const char *expr);
int filter_peer(struct filter *f, const char *arg, char *err, size_t errlen);
int filter_program(struct filter *f, const char *name);
int filter_time(struct filter *f, const char *when, bool since, char *err,
		size_t errlen);
int filter_min_bytes(struct filter *f, const char *n, char *err, size_t errlen);
int filter_pid(struct filter *f, const char *pid, char *err, size_t errlen);

/* The filter options, for getopt_long tables (short option -w for
 * --where: FILTER_SHORTOPTS). */
#define FILTER_SHORTOPTS "w:"
#define FILTER_LONGOPTS                                                        \
	{ "where", required_argument, NULL, 'w' },                             \
		{ "peer", required_argument, NULL, 'P' },                      \
		{ "program", required_argument, NULL, 'R' },                   \
		{ "since", required_argument, NULL, 'S' },                     \
		{ "until", required_argument, NULL, 'U' },                     \
		{ "pid", required_argument, NULL, 'I' },                       \
	{                                                                      \
		"min-bytes", required_argument, NULL, 'B'                      \
	}

/* Apply option opt (from FILTER_LONGOPTS) with its argument: 0 done,
 * -1 bad argument (message in err), 1 opt is not a filter option. */
int filter_option(struct filter *f, int opt, const char *arg, char *err,
		  size_t errlen);

/* The SQL condition that keeps the connections (of a query whose
 * connection_metrics is named m) with an exchange the filter expression
 * where keeps; every connection when there is no filter (where NULL or
 * "1"), those with no exchange too (e.g. refused). sqlite3_malloc'd
 * (sqlite3_free); NULL when out of memory. */
char *filter_connections(const char *where);

#endif
