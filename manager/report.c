/* report.c - manager report: plots with gnuplot, summary.txt, index.html. */
#include <stdio.h>

#include "manager.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "manager: report is not written yet\n");
	return 2;
}
