/* cmd_explain.c - agentgate explain: placeholder until the loader lands (issue 2). */
#include "agconfig.h"
#include <stdio.h>
#include "commands.h"
int
ag_cmd_explain(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "agentgate: explain is not built yet\n");
	return 1;
}
