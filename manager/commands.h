/* commands.h - the manager's commands, one file each, called by main.c with
 * argv[0] the command's name; each returns the exit status. */
#ifndef OBSERVE_MANAGER_COMMANDS_H
#define OBSERVE_MANAGER_COMMANDS_H

/* manager pull -o CENTRAL.db [-e SSH-COMMAND] SOURCE... (pull.c) */
int cmd_pull(int argc, char **argv);

/* manager stats CENTRAL.db [--by ...|--view ...] [FILTER...] (stats_cmd.c) */
int cmd_stats(int argc, char **argv);

/* manager report CENTRAL.db -o DIR [FILTER...] [-q] (report.c) */
int cmd_report(int argc, char **argv);

/* manager waterfall DB -o FILE.svg|png [--rows N] [FILTER...]
 * (waterfall_cmd.c) */
int cmd_waterfall(int argc, char **argv);

/* manager compare A.db [B.db] [--by ...] [--a-where EXPR] [--b-where EXPR]
 * [FILTER...] [--csv] (compare_cmd.c) */
int cmd_compare(int argc, char **argv);

/* manager findings DB [FILTER...] [--csv] (findings_cmd.c) */
int cmd_findings(int argc, char **argv);

/* manager prune --before DATE STORE: the days before DATE dropped
 * (prune.c). */
int cmd_prune(int argc, char **argv);

/* manager export [--otlp URL] [-q] STORE: the exchanges pushed as
 * OpenTelemetry traces, the metrics as OTLP metrics (export_cmd.c). */
int cmd_export(int argc, char **argv);

#endif
