/* cmd_session.c - agentgate session: placeholder until the loader lands (issue 2). */
#include "agconfig.h"
#include <stdio.h>
#include "commands.h"
int
ag_cmd_session(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "agentgate: session is not built yet\n");
	return 1;
}
