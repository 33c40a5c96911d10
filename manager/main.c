/* main.c - manager: collect the databases of many client machines into
 * one, compare them, report. Only the command word is read here; each
 * command is a module of its own (commands.h).
 *
 *   manager pull -o CENTRAL.db SOURCE...             (pull.c)
 *   manager stats CENTRAL.db [--by ...] [filters]    (stats_cmd.c)
 *   manager report CENTRAL.db -o DIR [filters]       (report.c)
 *   manager waterfall DB -o FILE.svg [filters]       (waterfall_cmd.c)
 *   manager compare A.db [B.db] [--by ...] [filters] (compare_cmd.c)
 *   manager findings DB [filters] [--csv]            (findings_cmd.c)
 *   manager prune --before DATE STORE                (prune.c)
 *   manager export [--otlp URL] STORE                (export_cmd.c)
 *
 * CENTRAL.db may be a postgresql:// URI (common/store_pg.c).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "usage.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "pull") == 0)
		return cmd_pull(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "stats") == 0)
		return cmd_stats(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "waterfall") == 0)
		return cmd_waterfall(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "compare") == 0)
		return cmd_compare(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "findings") == 0)
		return cmd_findings(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "prune") == 0)
		return cmd_prune(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	if (argc > 1 &&
	    (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		manager_usage(stdout);
		return 0;
	}
	fprintf(stderr, "manager: a command is needed (pull, stats, report, "
			"waterfall, compare, findings, prune, export)\n");
	manager_usage(stderr);
	return 2;
}
