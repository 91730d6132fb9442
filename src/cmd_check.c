/* cmd_check.c - agentgate check: placeholder until the loader lands (issue 2). */
#include "agconfig.h"
#include <stdio.h>
#include "commands.h"
int
ag_cmd_check(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "agentgate: check is not built yet\n");
	return 1;
}
