/* SPDX-License-Identifier: MIT */
/*
 * The interactive workbench: `tracemerge [FILE...|ARCHIVE]`, `tracemerge demo`.
 * main.c calls workbench_main with the arguments after the program name that
 * are not a batch subcommand (paths and workbench options such as --script,
 * --theme); for `tracemerge demo` it passes {"--demo"}.  Returns the exit
 * status of the process.
 */
#ifndef TM_WORKBENCH_H
#define TM_WORKBENCH_H

#include <stdbool.h>
#include <stdint.h>

int workbench_main(int argc, char **argv);
/* The scan cache settings of the user's config files (`set cache = no`,
 * `set cache-max-mib = N`), for the batch commands; the workbench reads
 * them with the rest of its config. */
void workbench_cache_settings(bool *no_cache, uint64_t *max_bytes);

#endif
