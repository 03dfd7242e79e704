/* SPDX-License-Identifier: MIT */
/*
 * struct tm_scan helpers (scan.h): init, fini and the summary notes every
 * scanner fills.
 */
#include "scan.h"

#include "align_scan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
tm_scan_init(struct tm_scan *sc, enum tm_format format)
{
	memset(sc, 0, sizeof *sc);
	tm_oplog_init(&sc->log);
	sc->format = format;
	sc->raw_min = INT64_MAX;
	sc->raw_max = INT64_MIN;
}

void
tm_scan_fold(struct tm_scan *sc)
{
	if (sc->sum || sc->log.use_runs)
		return;
	sc->sum = xcalloc(1, sizeof *sc->sum);
	tm_oplog_init(sc->sum);
	sc->sum->use_runs = true;
	tm_oplog_fold(&sc->log, sc->sum);
}

void
tm_scan_fini(struct tm_scan *sc)
{
	tm_oplog_fini(&sc->log);
	if (sc->sum) {
		tm_oplog_fini(sc->sum);
		free(sc->sum);
		sc->sum = NULL;
	}
	tm_al_free(sc->align);
	sc->align = NULL;
	free(sc->embedded);
	free(sc->warning);
	sc->warning = NULL;
	free(sc->err);
	sc->err = NULL;
	sc->embedded = NULL;
	sc->n_embedded = sc->cap_embedded = 0;
}

struct tm_error *
tm_scan_err(struct tm_scan *sc)
{
	if (!sc->err)
		sc->err = xcalloc(1, sizeof *sc->err);
	return sc->err;
}

void
tm_scan_note_machine(struct tm_scan *sc, uint32_t machine)
{
	/* once per id: the proto scanner notes a machine when its table first
	 * sees it (tm_ps_machine, struct machine seen), so no search here */
	if (!machine)
		return;
	size_t cap = sc->cap_embedded;
	XGROW(sc->embedded, cap, (size_t)sc->n_embedded + 1);
	sc->cap_embedded = (uint32_t)cap;
	sc->embedded[sc->n_embedded++] = machine;
}

void
tm_scan_note_clock(struct tm_scan *sc, uint32_t clock)
{
	if (clock < 128)
		sc->clocks_seen[clock / 64] |= 1ULL << (clock % 64);
}

void
tm_scan_warn(struct tm_scan *sc, const char *fmt, ...)
{
	if (sc->warning)
		return;
	struct tm_buf b;
	va_list ap;
	tm_buf_init(&b);
	va_start(ap, fmt);
	char tmp[1024];
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	tm_buf_adds(&b, tmp);
	sc->warning = tm_buf_steal(&b);
}

struct tm_align_samples *
tm_scan_align(struct tm_scan *sc)
{
	if (!sc->align)
		sc->align = tm_al_new();
	return sc->align;
}
