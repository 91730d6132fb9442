/*
 * fuzz_config.c - libFuzzer target for the policy loader: any bytes must
 * yield either a config or an error with a message, never a crash, a leak
 * or unbounded work.
 */
#include "agconfig.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ag_err err;
	struct ag_config *cfg;

	cfg = ag_config_parse((const char *)data, size, "fuzz.yaml", &err);
	if (cfg == NULL) {
		/* Every refusal must say why. */
		if (err.msg[0] == '\0')
			abort();
		return 0;
	}
	/* Resolved references must point into the profile table. */
	if (cfg->gw.default_profile_name != NULL &&
	    cfg->gw.default_profile != ag_config_profile(cfg,
	    cfg->gw.default_profile_name))
		abort();
	ag_config_free(cfg);
	return 0;
}
