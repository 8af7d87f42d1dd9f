// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: every status code of vnpu.h has its name and explanation
 * in the library and a row in Documentation/runtime.rst. Run from the
 * repository root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "vnpu.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, len + 1);
	if (buf && fread(buf, 1, len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

TEST(every_status_is_named_explained_and_documented)
{
	char *header = slurp("libruntime/include/vnpu/status.h");
	char *doc = slurp("Documentation/runtime.rst");
	char *enum_start, *enum_end, *line;
	int codes = 0;

	ASSERT_NE(NULL, header);
	ASSERT_NE(NULL, doc);
	enum_start = strstr(header, "enum vnpu_status {");
	ASSERT_NE(NULL, enum_start);
	enum_end = strstr(enum_start, "};");
	ASSERT_NE(NULL, enum_end);
	*enum_end = '\0';
	for (line = strchr(enum_start, '\n'); line; line = strchr(line + 1, '\n')) {
		char name[64], row[80];
		int value;

		if (sscanf(line + 1, " %63[A-Z_] = %d,", name, &value) != 2)
			continue;
		codes++;
		EXPECT_STREQ(name, vnpu_status_name(value));
		EXPECT_STRNE("unknown status code", vnpu_status_string(value));
		snprintf(row, sizeof(row), "``%s``", name);
		EXPECT_NE(NULL, strstr(doc, row)) {
			TH_LOG("%s has no row in Documentation/runtime.rst", name);
		}
	}
	EXPECT_GE(codes, 20);
	free(header);
	free(doc);
}

TEST_HARNESS_MAIN
