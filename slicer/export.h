/* export.h - `slicer export`: CSV, JSON Lines, HAR 1.2. */
#ifndef OBSERVE_SLICER_EXPORT_H
#define OBSERVE_SLICER_EXPORT_H

/* Runs the subcommand (argv[0] is "export"); returns the exit status. */
int slicer_export(int argc, char **argv);

#endif
