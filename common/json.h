/* json.h - JSON text for the exports: strings made safe from the data. */
#ifndef OBSERVE_SLICER_JSON_H
#define OBSERVE_SLICER_JSON_H

#include <stdio.h>

/* Writes s as a JSON string, quotes included: bytes that are not UTF-8
 * become U+FFFD, so that the output is JSON (text.h); control characters,
 * DEL and the C1 ones are escaped, so that it is safe on a terminal too. */
void json_string(FILE *out, const char *s);

#endif
