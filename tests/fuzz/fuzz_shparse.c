/*
 * fuzz_shparse.c - libFuzzer target for the command-line parser: any input
 * must parse or be refused without a crash, a leak or a hang, and a tree
 * it accepts must be fully walkable (ag_sh_dump touches every node, word
 * and part).
 */
#include "agconfig.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse/shparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ag_sh_node *tree = NULL;
	struct ag_err err;
	enum ag_sh_status st;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	st = ag_sh_parse((const char *)data, size, &tree, &err);
	if (st != AG_SH_OK) {
		/* refused: no tree, and a reason */
		if (tree != NULL || err.msg[0] == '\0')
			abort();
		return 0;
	}
	if (tree == NULL || tree->type != AG_SH_LIST)
		abort();
	if ((fp = open_memstream(&buf, &len)) != NULL) {
		ag_sh_dump(tree, fp);
		fclose(fp);
		free(buf);
	}
	ag_sh_free(tree);
	return 0;
}
