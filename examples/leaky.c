// SPDX-License-Identifier: MIT
/*
 * leaky: a request loop that leaks device memory on an error path, the
 * example of Documentation/troubleshooting.rst. Every request gets a
 * scratch buffer; a request that fails validation returns early and
 * forgets to free it. Not part of run-examples.sh: it leaks on purpose.
 *
 *   leaky [REQUESTS] [MS_BETWEEN]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <vnpu.h>

static int handle_request(struct vnpu_context ctx, int n)
{
	uint64_t scratch;
	int status = vnpu_malloc(ctx, 256 << 10, 0, &scratch);

	if (status != VNPU_SUCCESS)
		return status;
	status = vnpu_memset_d32(ctx, scratch, (uint32_t)n, 1024);
	if (status != VNPU_SUCCESS)
		return status;
	if (n % 3 == 2)
		return VNPU_ERROR_INVALID_VALUE;	/* BUG: scratch is not freed */
	return vnpu_free(ctx, scratch);
}

int main(int argc, char **argv)
{
	int requests = argc > 1 ? atoi(argv[1]) : 30, ms = argc > 2 ? atoi(argv[2]) : 100;
	struct vnpu_context ctx;
	int failed = 0;

	if (vnpu_init(0) != VNPU_SUCCESS || vnpu_ctx_create(0, 0, &ctx) != VNPU_SUCCESS) {
		fprintf(stderr, "leaky: no device\n");
		return 1;
	}
	printf("leaky: pid %d, %d requests\n", getpid(), requests);
	fflush(stdout);
	for (int n = 0; n < requests; n++) {
		if (handle_request(ctx, n) != VNPU_SUCCESS)
			failed++;
		usleep(ms * 1000);
	}
	printf("leaky: %d requests failed validation\n", failed);
	return vnpu_finalize() != VNPU_SUCCESS;
}
