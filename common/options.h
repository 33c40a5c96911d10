/* options.h - one parser for the command lines of slicer, slicer export,
 * manager pull, manager stats and manager report: the command declares its
 * options as data (cmd_option) and gets their values in a struct of its
 * own; -h/--help and, where the command takes them, the filter options
 * (filter.h) are added here. Messages go to stderr as "PROG: ...". */
#ifndef OBSERVE_OPTIONS_H
#define OBSERVE_OPTIONS_H

#include <getopt.h> /* optind */
#include <stddef.h>
#include <stdio.h>

#include "filter.h"

enum cmd_option_kind {
	CMD_FLAG, /* no argument: sets a bool */
	CMD_TEXT, /* an argument: kept in a const char * */
	CMD_OWN,  /* an argument the command checks itself (take) */
};

/* One of a command's options; field is the offset (offsetof) of its value
 * in the command's struct of options. */
struct cmd_option {
	const char *name; /* --name */
	int letter;	  /* -letter, or 0 for none */
	enum cmd_option_kind kind;
	size_t field; /* CMD_FLAG: bool, CMD_TEXT: const char * */
	/* CMD_OWN: the argument checked and kept in opts: 0, or the exit
	 * status, the reason said on stderr */
	int (*take)(void *opts, const char *arg);
};

/* A command's command line. */
struct cmdline {
	const char *prog;		  /* the messages' prefix */
	const struct cmd_option *options; /* a zero entry last */
	void (*usage)(FILE *out);
};

/* Parse the options of argv (argv[0] the command, getopt_long from
 * optind 1, operands moved after the options) into opts, the command's
 * struct of options; the filter options go to filter (none are taken when
 * it is NULL). 0: every option taken, optind the first operand. -1: the
 * command ends with *status: 0 after --help (usage on stdout), 2 after an
 * unknown option or a missing argument (usage on stderr), a bad argument
 * (the reason on stderr), or what a take returned. */
int cmdline_parse(const struct cmdline *c, struct filter *filter, void *opts,
		  int argc, char **argv, int *status);

#endif
