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

int workbench_main(int argc, char **argv);

#endif
