/* test_options.c - the command-line parser of the tools (common/options.c)
 * with a command of its own: flags, texts, an argument the command checks,
 * the filter options where the command takes them, --help, unknown options,
 * missing and bad arguments, abbreviations, operands after options. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "options.h"

struct opts {
	const char *out, *name;
	bool quiet;
	int level;
};

static int usage_out, usage_err; /* times usage was printed there */

static void usage(FILE *out)
{
	if (out == stdout)
		usage_out++;
	else
		usage_err++;
}

static int take_level(void *opts, const char *arg)
{
	struct opts *o = opts;
	char *end;

	o->level = (int)strtol(arg, &end, 10);
	if (*arg && !*end)
		return 0;
	fprintf(stderr, "test: --level %s: a number\n", arg);
	return 3; /* the command's own status */
}

static const struct cmd_option options[] = {
	{ "output", 'o', CMD_TEXT, offsetof(struct opts, out) },
	{ "quiet", 'q', CMD_FLAG, offsetof(struct opts, quiet) },
	{ "level", 0, CMD_OWN, 0, take_level },
	{ "name", 0, CMD_TEXT, offsetof(struct opts, name) },
	{ NULL },
};
static const struct cmdline cmdline = { "test", options, usage };

static char stderr_text[4096];

/* cmdline_parse on the NULL-ended words, stderr kept in stderr_text;
 * *argc_out and *argv_out are the parsed vector. */
static int parse(struct filter *f, struct opts *o, int *status, char **words,
		 int *argc_out)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO), argc = 0, rc;
	size_t n;

	assert_non_null(tmp);
	while (words[argc])
		argc++;
	memset(o, 0, sizeof(*o));
	usage_out = usage_err = 0;
	*status = -42;
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	rc = cmdline_parse(&cmdline, f, o, argc, words, status);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(stderr_text, 1, sizeof(stderr_text) - 1, tmp);
	stderr_text[n] = '\0';
	fclose(tmp);
	*argc_out = argc;
	return rc;
}

static void test_own_options(void **state)
{
	char *argv[] = { "test",      "-o",	"out.db", "op1", "--quiet",
			 "--level=7", "--name", "n",	  "op2", NULL };
	struct opts o;
	int status, argc;

	(void)state;
	assert_int_equal(parse(NULL, &o, &status, argv, &argc), 0);
	assert_string_equal(o.out, "out.db");
	assert_true(o.quiet);
	assert_int_equal(o.level, 7);
	assert_string_equal(o.name, "n");
	/* the operands come after the options */
	assert_int_equal(optind, argc - 2);
	assert_string_equal(argv[optind], "op1");
	assert_string_equal(argv[optind + 1], "op2");
	assert_int_equal(usage_out + usage_err, 0);
	assert_string_equal(stderr_text, "");
}

static void test_short_forms_and_abbreviations(void **state)
{
	char *argv[] = { "test", "-qoX", "--lev", "2", "--na=x", NULL };
	struct opts o;
	int status, argc;

	(void)state;
	assert_int_equal(parse(NULL, &o, &status, argv, &argc), 0);
	assert_true(o.quiet);
	assert_string_equal(o.out, "X");
	assert_int_equal(o.level, 2);
	assert_string_equal(o.name, "x");
	assert_int_equal(optind, argc);
}

static void test_filter_options(void **state)
{
	char *argv[] = { "test",       "-w",	     "dr > 1",	"--peer",
			 "10.0.0.0/8", "--program",  "curl",	"--min-bytes",
			 "10",	       "-q",	     "--since", "100",
			 "--until",    "2030-01-01", "--pid",	"42",
			 NULL };
	struct filter f;
	struct opts o;
	int status, argc;

	(void)state;
	filter_init(&f);
	assert_int_equal(parse(&f, &o, &status, argv, &argc), 0);
	assert_true(o.quiet);
	assert_non_null(f.expr);
	assert_non_null(strstr(f.expr, "(dr > 1)"));
	assert_non_null(strstr(f.expr, "cidr_match(peer_addr, '10.0.0.0/8')"));
	assert_non_null(strstr(f.expr, "program = 'curl'"));
	assert_non_null(strstr(f.expr, "ds + dr >= 10"));
	assert_non_null(strstr(f.expr, ">= 100000000000"));
	assert_non_null(strstr(f.expr, "'2030-01-01'"));
	assert_non_null(strstr(f.expr, "(pid = 42)"));
	filter_free(&f);
}

/* Without a filter the filter options are unknown, like any other. */
static void test_no_filter(void **state)
{
	char *argv[] = { "test", "--where", "1", NULL };
	struct opts o;
	int status, argc;

	(void)state;
	assert_int_equal(parse(NULL, &o, &status, argv, &argc), -1);
	assert_int_equal(status, 2);
	assert_int_equal(usage_err, 1);
	assert_non_null(strstr(stderr_text, "unrecognized option '--where'"));
}

/* --help wins where it stands: usage on stdout, status 0, nothing after
 * it is read. */
static void test_help(void **state)
{
	char *argv[] = { "test", "--level", "1", "-h", "--bogus", NULL };
	char *argv2[] = { "test", "--help", NULL };
	struct opts o;
	int status, argc;

	(void)state;
	assert_int_equal(parse(NULL, &o, &status, argv, &argc), -1);
	assert_int_equal(status, 0);
	assert_int_equal(usage_out, 1);
	assert_int_equal(usage_err, 0);
	assert_int_equal(o.level, 1);
	assert_string_equal(stderr_text, "");
	assert_int_equal(parse(NULL, &o, &status, argv2, &argc), -1);
	assert_int_equal(status, 0);
	assert_int_equal(usage_out, 1);
}

static void test_errors(void **state)
{
	char *unknown[] = { "test", "-q", "--bogus", "-o", "x", NULL };
	char *missing[] = { "test", "-o", NULL };
	char *bad_own[] = { "test", "--level", "x", "-q", NULL };
	char *bad_filter[] = { "test", "--min-bytes", "12k", "-q", NULL };
	struct filter f;
	struct opts o;
	int status, argc;

	(void)state;
	/* an unknown option: getopt's message, usage on stderr, 2; what
	 * came before it was taken, nothing after */
	assert_int_equal(parse(NULL, &o, &status, unknown, &argc), -1);
	assert_int_equal(status, 2);
	assert_int_equal(usage_err, 1);
	assert_true(o.quiet);
	assert_null(o.out);
	/* a missing argument */
	assert_int_equal(parse(NULL, &o, &status, missing, &argc), -1);
	assert_int_equal(status, 2);
	assert_int_equal(usage_err, 1);
	assert_non_null(strstr(stderr_text, "requires an argument"));
	/* the command's own check: its message and its status, no usage */
	assert_int_equal(parse(NULL, &o, &status, bad_own, &argc), -1);
	assert_int_equal(status, 3);
	assert_int_equal(usage_err, 0);
	assert_string_equal(stderr_text, "test: --level x: a number\n");
	assert_false(o.quiet);
	/* a bad filter argument: the filter's reason after the prefix */
	filter_init(&f);
	assert_int_equal(parse(&f, &o, &status, bad_filter, &argc), -1);
	assert_int_equal(status, 2);
	assert_int_equal(usage_err, 0);
	assert_string_equal(stderr_text,
			    "test: --min-bytes 12k: not a number of bytes\n");
	filter_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_options),
		cmocka_unit_test(test_short_forms_and_abbreviations),
		cmocka_unit_test(test_filter_options),
		cmocka_unit_test(test_no_filter),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
