// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 */
#include <stdio.h>
#include <string.h>

#include "ksft_totals.h"

int ksft_totals_add_line(struct ksft_totals *t, const char *line)
{
	unsigned long pass, fail, xfail, xpass, skip, error;
	const char *p = strstr(line, "# Totals: ");
	int used = 0;

	if (!p)
		return 0;
	if (sscanf(p, "# Totals: pass:%lu fail:%lu xfail:%lu xpass:%lu skip:%lu error:%lu%n",
		   &pass, &fail, &xfail, &xpass, &skip, &error, &used) != 6)
		return 0;
	/* Only a line break or spaces may follow, so a mangled line is not half-read. */
	if (p[used + strspn(p + used, " \t\r\n")] != '\0')
		return 0;
	t->pass += pass;
	t->fail += fail;
	t->xfail += xfail;
	t->xpass += xpass;
	t->skip += skip;
	t->error += error;
	t->suites++;
	return 1;
}

int ksft_line_is_failure(const char *line)
{
	const char *p = line;

	if (*p == '[') {
		p = strstr(p, "] ");
		if (!p)
			return 0;
		p += 2;
	}
	if (strncmp(p, "not ok ", 7))
		return 0;
	/* TAP directives: "# SKIP" is not a failure. */
	return !strstr(p, "# SKIP");
}

unsigned long ksft_totals_passed(const struct ksft_totals *t)
{
	return t->pass + t->xfail;
}

unsigned long ksft_totals_failed(const struct ksft_totals *t)
{
	return t->fail + t->xpass + t->error;
}
