/* cmd_doctor.c - agentgate doctor: placeholder until the loader lands (issue 2). */
#include "agconfig.h"
#include <stdio.h>
#include "commands.h"
int
ag_cmd_doctor(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "agentgate: doctor is not built yet\n");
	return 1;
}
