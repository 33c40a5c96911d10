/* options.c - the command-line parser of the tools: a command's options
 * (a table), -h/--help and the filter options in one getopt_long loop (see
 * options.h). */
#define _GNU_SOURCE
#include "options.h"

#include <getopt.h>
#include <stdbool.h>
#include <string.h>

#define MAX_OPTIONS 32
#define LONG_ONLY 256 /* getopt's value of a long-only option: 256 + index */

static const struct option filter_options[] = { FILTER_LONGOPTS };
enum { N_FILTER = sizeof(filter_options) / sizeof(filter_options[0]) };

/* getopt_long's tables for the command's options, the filter's (if
 * filter), --help. 0, or -1 when they do not fit (a program error). */
static int tables(const struct cmdline *c, bool filter, struct option *lo,
		  char *so, size_t so_size)
{
	size_t n = 0, k = 0;

	for (const struct cmd_option *o = c->options; o && o->name; o++, n++) {
		bool arg = o->kind != CMD_FLAG;

		if (n + N_FILTER + 2 > MAX_OPTIONS || k + 4 > so_size)
			return -1;
		lo[n] = (struct option){
			o->name, arg ? required_argument : no_argument, NULL,
			o->letter ? o->letter : LONG_ONLY + (int)n
		};
		if (o->letter) {
			so[k++] = (char)o->letter;
			if (arg)
				so[k++] = ':';
		}
	}
	for (size_t i = 0; filter && i < N_FILTER; i++)
		lo[n++] = filter_options[i];
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	memset(&lo[n], 0, sizeof(lo[n]));
	if (k + sizeof(FILTER_SHORTOPTS) + 1 > so_size)
		return -1;
	so[k] = '\0';
	strcat(so, filter ? FILTER_SHORTOPTS "h" : "h");
	return 0;
}

/* The command's option getopt returned as opt, or NULL. */
static const struct cmd_option *option_of(const struct cmdline *c, int opt)
{
	size_t n = 0;

	for (const struct cmd_option *o = c->options; o && o->name; o++, n++)
		if (o->letter ? opt == o->letter : opt == LONG_ONLY + (int)n)
			return o;
	return NULL;
}

int cmdline_parse(const struct cmdline *c, struct filter *filter, void *opts,
		  int argc, char **argv, int *status)
{
	struct option lo[MAX_OPTIONS];
	char so[64], err[512];
	const struct cmd_option *o;
	int opt;

	if (tables(c, filter != NULL, lo, so, sizeof(so)) != 0) {
		fprintf(stderr, "%s: too many options\n", c->prog);
		*status = 2;
		return -1;
	}
	optind = 1;
	while ((opt = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		int taken = filter ? filter_option(filter, opt, optarg, err,
						   sizeof(err))
				   : 1;

		*status = 2;
		if (taken < 0) {
			fprintf(stderr, "%s: %s\n", c->prog, err);
			return -1;
		}
		if (taken == 0)
			continue;
		if (opt == 'h') {
			c->usage(stdout);
			*status = 0;
			return -1;
		}
		if (!(o = option_of(c, opt))) { /* getopt said why */
			c->usage(stderr);
			return -1;
		}
		if (o->kind == CMD_FLAG)
			*(bool *)((char *)opts + o->field) = true;
		else if (o->kind == CMD_TEXT)
			*(const char **)((char *)opts + o->field) = optarg;
		else if ((*status = o->take(opts, optarg)) != 0)
			return -1;
	}
	return 0;
}
