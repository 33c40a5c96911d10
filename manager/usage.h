/* usage.h - the manager's help text, the same for every command. */
#ifndef OBSERVE_MANAGER_USAGE_H
#define OBSERVE_MANAGER_USAGE_H

#include <stdio.h>

void manager_usage(FILE *out);

#endif
