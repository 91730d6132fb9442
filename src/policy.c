/* policy.c - being written */
#include "agconfig.h"
