/* manager.h - the manager's commands, one file each. */
#ifndef OBSERVE_MANAGER_H
#define OBSERVE_MANAGER_H

#include <stddef.h>
#include <stdio.h>

/* manager pull -o CENTRAL.db SOURCE... (pull.c) */
int cmd_pull(int argc, char **argv);

/* manager report CENTRAL.db -o DIR [--where EXPR] [FILTER...] (report.c) */
int cmd_report(int argc, char **argv);

/* Nearest rank percentile of n sorted values (n > 0): the value at rank
 * ceil(p/100 * n), 1-based (main.c). */
double manager_percentile(const double *sorted, size_t n, double p);

/* The usage text of every command (main.c). */
void manager_usage(FILE *out);

#endif
