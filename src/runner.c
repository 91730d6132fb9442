/* runner.c - being written */
#include "agconfig.h"
