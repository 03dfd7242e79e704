/* SPDX-License-Identifier: MIT */
/*
 * One event of a scanner that converts each event on its own (every format
 * but proto and JSON): its detail when the scan keeps events, an alignment
 * sample, its raw time, and one CONVERT on the format's clock that drops it
 * when the conversion fails (the tokenizers' "if (trace_ts) Push").
 */
#include "scan.h"
#include "align_scan.h"

void
tm_scan_event(struct tm_scan *sc, const struct tm_scan_ctl *ctl, const struct tm_scan_event *ev,
	      uint64_t off)
{
	uint32_t detail = 0;
	if (ctl && ctl->keep_events)
		detail = tm_oplog_detail(&sc->log, ev->name, ev->name_len, ev->phase, ev->track,
					 ev->dur);
	if (ev->align >= 0 && ev->name_len)
		tm_al_name(tm_scan_align(sc), ev->name, ev->name_len, ev->ts, 0, 0,
			   (unsigned)ev->align);
	tm_scan_note_ts(sc, ev->ts);
	sc->n_events++;
	tm_oplog_convert_i(&sc->log, 0, 0, 0, ev->ts, TM_CONV_FAIL_DROP | ev->flags, detail, off);
}
