/* SPDX-License-Identifier: MIT */
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Sums the "# Totals:" lines kselftest programs print into one result.
 */
#ifndef KSFT_TOTALS_H
#define KSFT_TOTALS_H

struct ksft_totals {
	unsigned long pass, fail, xfail, xpass, skip, error;
	unsigned long suites;	/* number of "# Totals:" lines summed */
};

/*
 * Adds one line to @t if it is a kselftest totals line
 * ("# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N", any prefix).
 * Returns 1 if the line was one, 0 if not.
 */
int ksft_totals_add_line(struct ksft_totals *t, const char *line);

/* Passed tests: pass + xfail. */
/*
 * Returns 1 if @line is a TAP "not ok" result that is not a skip, after an
 * optional "[suite] " prefix, so the summary can name what failed.
 */
int ksft_line_is_failure(const char *line);

unsigned long ksft_totals_passed(const struct ksft_totals *t);
/* Failed tests: fail + xpass + error. */
unsigned long ksft_totals_failed(const struct ksft_totals *t);

#endif
